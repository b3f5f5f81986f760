"""Stage 5: speed. Measured (CUDA events on a GPU host, the evaluator's wall clock on CPU) or modeled
(H100 roofline estimate from counted bytes and FLOPs, CPU hosts: interpreter time means nothing)."""
from __future__ import annotations

import random
import statistics
import time
from typing import Any, Optional

from environment.evaluation import flags as F
from environment.evaluation.evaluator.inputs import json_init, make_inputs
from environment.evaluation.evaluator.outcome import StageContext, StageOutcome
from environment.evaluation.faults import HarnessFault
from environment.evaluation.transport.protocol import NOT_PLAIN, Digest, Digested, Fetch, Fetched, Stage, Staged, Time, Timed
from environment.evaluation.result import PerformanceResult, TimingStats
from environment.evaluation.evaluator.verdict import judged

# Beyond these a speedup is implausible for a correct kernel of these tasks (KernelBench flags >10x).
PLAUSIBLE_SPEEDUP = {"measured_cpu": 10.0, "measured_cuda": 20.0}


def stats(samples_s: list[float]) -> TimingStats:
    ms = [s * 1e3 for s in samples_s]
    return TimingStats(median_ms=statistics.median(ms), min_ms=min(ms), max_ms=max(ms),
                       std_ms=statistics.pstdev(ms) if len(ms) > 1 else 0.0, samples=len(ms))


def _round_trip(child, timeout: float, skip_model: bool = False) -> tuple[float, Timed]:
    start = time.perf_counter()
    head, _ = child.request(Time(skip_model=skip_model), Timed, (), timeout)
    return time.perf_counter() - start, head


def _null_loop(child, timeout: float) -> tuple[float, Timed]:
    """(median wall time, the reply) of three round trips of the loop without the model; the first failed reply
    ends it. Run in the reference's child only: in the candidate's, the loop runs none of forward but in a process
    whose state the submission set (a155, a156)."""
    walls = []
    for _ in range(3):
        wall, head = _round_trip(child, timeout, True)
        if not head.ok:
            return 0.0, head
        walls.append(wall)
    return statistics.median(walls), head


def _failed(ctx: StageContext, child: Any, cand: Any, what: str, error: str, compute_s: float) -> StageOutcome:
    """A timed call (or the hashing of its outputs) that failed: the reference's failure is the environment's,
    the candidate's its own (a152: right when checked, raising when timed). A timed output that is no plain
    tensor is a hack (a151: a stand-in whose work runs when the outputs are hashed, off the clock)."""
    if child is not cand:
        raise HarnessFault(f"task {ctx.task.id}: the reference failed {what}: {error}")
    if NOT_PLAIN in (error or ""):
        return StageOutcome(PerformanceResult(note="A timed call returned something else than plain tensors."),
                            flags=[F.OUTPUT_NOT_TENSOR], compute_s=compute_s)
    return StageOutcome(PerformanceResult(note=f"{what[0].upper()}{what[1:]} failed."),
                        wrong=f"{what[0].upper()}{what[1:]} raised {error}", compute_s=compute_s)


def measure(ctx: StageContext, reference: Any, cand: Any, ref: Any) -> StageOutcome:
    """Interleave reference and candidate rounds on fresh inputs (new storage and values every call).
    The evaluator's clock is the timing of record: per call, (round-trip wall time - the same loop
    without the model, in the reference's child) / calls. One timed output per round is fetched and
    checked against the digest the child reported right after the timed call (asked at once, outside the clock: hashing
    256 MiB outputs took 1.7 s a round on an H100 host, so the clock measured the hash, not a 0.5 ms
    kernel, and every speedup came out near 1), and against the reference."""
    cfg, task, backend = ctx.config, ctx.task, ctx.backend
    compute_s = 0.0
    kind = "measured_cuda" if backend == "cuda" else "measured_cpu"
    shape = max(task.shapes(backend), key=lambda s: sum(s.values()) if s else 0)
    rng = random.SystemRandom()  # drawn after the children exist: nothing to precompute from
    for name, value in shape.items():
        setattr(reference, name, value)  # the dimensions get_init_inputs may read
    init = json_init(reference)
    samples: dict[int, list[float]] = {cand.pid: [], ref.pid: []}
    hints: list[float] = []
    loop: Optional[float] = None
    for rnd in range(cfg.timing_rounds):
        sets = [make_inputs(reference, shape, "normal", rng.getrandbits(48), cap_bytes=cfg.input_cap_bytes)
                for _ in range(cfg.timing_calls)]
        flat = [t for s in sets for t in s]
        digests: dict[int, list] = {}
        for child in ((ref, cand) if rnd % 2 == 0 else (cand, ref)):
            child.request(Stage(arity=len(sets[0]), init=init), Staged, flat, cfg.timeout_s)
            if child is ref and loop is None:  # the loop, flush and channel without the model
                loop, head = _null_loop(ref, cfg.timeout_s)
                if not head.ok:
                    return _failed(ctx, ref, cand, "the timing loop without the model", head.error, compute_s)
            wall, head = _round_trip(child, cfg.timeout_s)
            if not head.ok:
                return _failed(ctx, child, cand, "a timed call", head.error, compute_s)
            compute_s += max(head.elapsed_s, 0.0)
            # asked at once, off the clock: what the timed call left in its outputs, before any fetch
            digested = child.request(Digest(), Digested, (), cfg.timeout_s)[0]
            if not digested.ok:
                return _failed(ctx, child, cand, "hashing a timed call's outputs", digested.error, compute_s)
            digests[child.pid] = digested.digests
            if backend == "cuda":
                if head.elapsed_s > wall * 1.05:  # no child outlasts its parent's wait
                    return StageOutcome(PerformanceResult(note="The child's timer disagrees with the evaluator's clock."),
                                        flags=[F.PROTOCOL_VIOLATION], compute_s=compute_s)
                if child is cand:
                    hints.append(head.elapsed_s / cfg.timing_calls)
            samples[child.pid].append(wall)
        j = rng.randrange(cfg.timing_calls)
        _, c_out = cand.request(Fetch(index=j), Fetched, (), cfg.timeout_s)
        _, r_out = ref.request(Fetch(index=j), Fetched, (), cfg.timeout_s)
        if j >= len(digests[cand.pid]) or digests[cand.pid][j] != _digest(c_out):
            return StageOutcome(PerformanceResult(note="A fetched output differs from the one reported when it was "
                                                       "timed."), flags=[F.PROTOCOL_VIOLATION], compute_s=compute_s)
        err = judged(ctx, shape, r_out, c_out, ref, init, sets[j])
        if err:
            return StageOutcome(PerformanceResult(note="A timed call returned a wrong result."),
                                wrong=f"A timed call returned a wrong result ({err}); results must be computed on "
                                      "every call, not cached", compute_s=compute_s)
    # one loop cost for both sides, the reference's: in the candidate's process a clock the submission patched stalled
    # the loop (a156: the cost subtracted from its calls inflated, they looked 2-5x faster), or raised there (a155)
    ref_stats, cand_stats = (stats([max(wall - loop, 1e-7) / cfg.timing_calls for wall in samples[child.pid]])
                             for child in (ref, cand))
    speedup = ref_stats.median_ms / cand_stats.median_ms if cand_stats.median_ms > 0 else None
    note = ("Measured on this host's CPU: the trusted evaluator's wall clock, loop and channel cost subtracted."
            if backend == "cpu" else
            "Measured on the GPU by the trusted evaluator's clock (L2 flushed before every call, loop, flush and "
            f"channel cost subtracted); CUDA events in the child: {statistics.median(hints) * 1e3:.4g} ms per call.")
    flags = []
    if speedup is not None and speedup > PLAUSIBLE_SPEEDUP[kind]:
        flags.append(F.IMPLAUSIBLE_SPEEDUP)
        note += f" A speedup of {speedup:.1f}x is beyond the plausible {PLAUSIBLE_SPEEDUP[kind]:.0f}x and earns no credit."
    return StageOutcome(PerformanceResult(speedup=speedup, speedup_kind=kind, reference=ref_stats,
                                          candidate=cand_stats, note=note), flags=flags, compute_s=compute_s)


def _digest(tensors) -> str:
    import hashlib
    from environment.evaluation.transport.frames import tensor_bytes
    h = hashlib.sha256()
    for t in tensors:
        h.update(tensor_bytes(t))
    return h.hexdigest()
