"""Modeled time at the task's GPU shape (CPU hosts): the plan, and the verdict on its replay.

The model-shape replay (modeled_speed.py) proves on held-out inputs that the candidate's recorded
work computes the answer. This stage prices that work at a size a GPU runs:

1. The shape: of the task's `gpu_shapes`, the one with the fewest input bytes that fits
   INPUT_CAP_BYTES and the evaluator's input cap (bounded memory: the reference child and the
   sampler each hold one copy of the inputs; the candidate allocates zeros whose pages are only
   committed when touched). None (model shape only) when the task has no GPU shape, none fits, or
   its inputs are not all tensors.
2. The candidate's host code runs at that shape on zero-filled inputs it allocates itself (no values
   are sent: they are never used); its trace gives each launch's grid and arguments.
3. The reference runs (and is counted, as at the model shape) in its own child on inputs of that
   shape drawn from a secret label, giving its cost; it keeps the outputs. No input byte travels:
   the reference's child and the sampler each make the inputs from the plan (the reference's
   source, the shape, the label's seed: protocol.InputPlan), the candidate's child never gets it,
   and the two must report the same fingerprint (else the environment's: model-shape price).
4. The sampler (a second replayer, beside the model-shape replay) replays the GPU-shape trace on
   the same inputs, running per launch the corner programs and interior programs drawn from the secret sampling seed keyed to the submission's
   digest (one per stratum for the estimate, more as checks: replay/sampled.py), and scales their
   counts to the grid.
5. Here: the positions the executed programs wrote (fetched from the reference's child: Pick) must
   equal the reference's (else
   `size_dependent`: host code that computes something else at the large shape earns nothing);
   the estimate is only used when the sample is trustworthy (no launch read memory that unsampled
   programs were to write, estimate and check programs within each other's range and storing into
   the same tensors, nothing touched outside the arguments' allocations, every output checked
   somewhere, the sampled programs, each standing for the programs at its kind of grid position,
   storing every element of each returned output view (output coverage, replay/coverage.py), the
   launches write at least the output bytes).

Who decides what happens when there is no GPU-shape price: when the *environment* cannot price it
before any of the submission's code ran there (no GPU shape, too large for this host, the task's
inputs differing when made twice) every submission keeps its model-shape speedup and the note says
why. A failure on the harness's side *after* the submission's code ran at that shape (the reference
stopped, failed or did not answer there, the sampler stopped before saying which inputs it made:
resources the submission shares, time and memory, can cause it) earns no speed credit (`denied`):
the model-shape price can be the higher one, so a failure the submission provokes must never keep
it; a harness fault proper (the reference's inputs not those planned) stays a harness error. A pure PyTorch submission that fails there may be this
host's capacity (intermediates it cannot hold) or a dodge (raising only at large sizes keeps the
model shape's launch-count price: red team a98), and the two look alike: it keeps its model-shape
price capped at EXCUSED_CAP, the reference's own speed, which copying the reference earns anyway,
so failing there never pays. So does a pipeline past the sampled replay's dependency closure
(replay/closure.py: the model's limit, named as such; a kernel reaching for it on purpose escapes at
most to the copy's price, though its GPU-shape outputs then go unchecked), and programs too long to
sample (a persistent loop) in a launch of at least sm_count programs (fewer leave SMs idle: no credit). When the *submission's* behaviour at the GPU shape
prevents it (forward failing or reading values to the host there, a trace that does not replay,
an untrustworthy sample), there is no speed credit (`unreplayable`): otherwise a kernel that prices
badly at the GPU shape could escape to its model-shape speedup by misbehaving only at large sizes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from environment.evaluation import flags as F
from environment.evaluation.evaluator.compare import compare
from environment.evaluation.evaluator.inputs import geometry as geometry_of, json_init
from environment.evaluation.faults import HarnessFault
from environment.evaluation.transport.protocol import InputPlan
from environment.evaluation.replay.coverage import COVERAGE_SLACK, WRITTEN_SLACK
from environment.evaluation.replay import closure
from environment.evaluation.replay.sampled import CLAIMED, LONG_PROGRAMS, MODEL_LIMIT
from environment.evaluation.evaluator.gpu_plan import INPUT_CAP_BYTES  # noqa: F401 (re-exported)
from environment.evaluation.evaluator.gpu_plan import _label, choose_shape, model_shape_of  # noqa: F401 (re-exported)


# The most speedup a pure PyTorch submission earns when it cannot be priced at the GPU shape by its doing
EXCUSED_CAP = 1.0


@dataclass
class GpuRun:
    """What the GPU-shape stage has before the replay: the plan, the candidate's trace there and the
    reference's run there; or why there is none (`why`), and whether that is the submission's doing
    (`flag`: the stage ends with no speed credit) or the environment's (model-shape price stands)."""
    shape: dict[str, int] = field(default_factory=dict)
    plan: Any = None           # protocol.InputPlan: the inputs, made by the reference's child and the sampler
    geometry: list = field(default_factory=list)   # the inputs' (shape, dtype), planned on the meta device
    sample_seed: int = 0
    trace: Any = None
    constants: list[torch.Tensor] = field(default_factory=list)
    reference: Optional[dict] = None
    kept: list = field(default_factory=list)       # the outputs' (shape, dtype), kept by the reference's child
    fingerprint: str = ""      # of the inputs the reference's child made
    replayer_inputs: Any = None  # the sampler's first reply (its inputs' fingerprint), read by _replay
    ref: Any = None            # the reference's child, which counts there and holds the outputs (Pick)
    init: Any = None           # the constructor arguments at that shape
    why: str = ""
    flag: Optional[str] = None
    pending: Any = None        # the reference child, while its GPU-shape run is in flight
    timeout_s: float = 0.0
    excused: bool = False      # a pure PyTorch submission failed there: model-shape price, capped (docstring)
    provoked: bool = False     # the harness's side failed after the submission's code ran there: no credit


@dataclass
class Priced:
    candidate: Any = None     # ModeledCost at the GPU shape, when it can be credited
    reference: Any = None
    why: str = ""
    flag: Optional[str] = None
    fix: str = ""
    capped: bool = False      # the model-shape speedup stands, at most EXCUSED_CAP (see the module docstring)
    denied: bool = False      # no speed credit: the stage failed in a way the submission could cause


def _plan(task: Any, reference: Any, cap_bytes: int, heldout_seed: int, model_shape: dict[str, int]):
    """(shape, geometry, input plan, init, sample seed) or a GpuRun saying why not (the reference
    module's dimensions are left at the model shape)."""
    shape, why = choose_shape(task, reference, cap_bytes)
    try:
        if shape is None:
            return GpuRun(why=why)
        for name, value in shape.items():
            setattr(reference, name, value)
        with torch.device("meta"):
            planned = list(reference.get_inputs())
        if not all(isinstance(t, torch.Tensor) for t in planned):
            return GpuRun(why="the task's inputs are not all tensors")
        plan = InputPlan(code=task.reference_code, derived=task.derived, shape=shape,
                         seed=_label(heldout_seed, "gpu-inputs"), cap_bytes=cap_bytes)
        return shape, geometry_of(planned), plan, json_init(reference), _label(heldout_seed, "gpu-sample")
    finally:
        for name, value in model_shape.items():
            setattr(reference, name, value)


def prefetch(task: Any, cfg: Any, heldout_seed: int, replayer: Any) -> None:
    """Send the sampler (`replayer`) the GPU-shape input plan before the trials (protocol.MakeInputs), so it makes
    the inputs while they run rather than on the replay's path. Speculative: the plan is made here
    as prepare will make it (a fresh reference module at the model shape's dimensions first), and a
    job whose plan differs has its inputs made again; nothing here decides a verdict."""
    from environment.evaluation.transport.children import ChildDied
    from environment.evaluation.transport.protocol import MakeInputs
    try:
        shape = model_shape_of(task)
        fresh = task.load_reference()
        for name, value in shape.items():
            setattr(fresh, name, value)
        planned = _plan(task, fresh, min(cfg.input_cap_bytes, INPUT_CAP_BYTES), heldout_seed, shape)
        if not isinstance(planned, GpuRun):
            replayer.send(MakeInputs(plan=planned[2]), [], cfg.timeout_s)
    except ChildDied:  # the job's own send finds it dead and says so
        pass
    except Exception:  # whatever fails here fails again, and is judged, where prepare plans
        pass


def prepare(ctx: Any, reference: Any, cand: Any, ref: Any, model_shape: dict[str, int], rebuilt: Any,
            aten_only: bool = False) -> GpuRun:
    """The GPU-shape trace of the candidate and the reference's counted run there (before the replay).
    aten_only: the model-shape trace launched no Triton kernel; a failure there is then this host's
    capacity (a PyTorch intermediate the child's memory cannot hold), not an escape (see the module
    docstring), and the model-shape price stands."""
    from environment.evaluation.transport.children import ChildDied
    from environment.evaluation.transport.frames import FrameError
    from environment.evaluation.transport.protocol import TraceCall, Traced

    cfg = ctx.config
    planned = _plan(ctx.task, reference, min(cfg.input_cap_bytes, INPUT_CAP_BYTES), ctx.seeds.heldout, model_shape)
    if isinstance(planned, GpuRun):
        return planned
    shape, geometry, plan, init, seed = planned
    try:
        traced, constants = cand.request(TraceCall(init=init, geometry=geometry), Traced, [], cfg.timeout_s * 4)
    except FrameError as exc:
        return GpuRun(shape=shape, why=f"the GPU-shape call's reply broke the protocol ({exc})",
                      flag=F.PROTOCOL_VIOLATION)
    except ChildDied as died:
        return GpuRun(shape=shape, why=f"forward stopped there ({died.reason})",
                      flag=None if aten_only else F.UNREPLAYABLE, excused=aten_only)
    why = usable_trace(traced)
    if why:
        return GpuRun(shape=shape, why=why, flag=None if aten_only else F.UNREPLAYABLE, excused=aten_only)
    missing = {s.kernel for s in traced.trace.steps if s.kind == "triton"} - set(rebuilt.kernels)
    if missing:
        return GpuRun(shape=shape, why=f"kernel {sorted(missing)[0]} is not among the rebuilt kernels",
                      flag=F.UNREPLAYABLE)
    return GpuRun(shape=shape, plan=plan, geometry=geometry, sample_seed=seed, trace=traced.trace,
                  constants=list(constants), ref=ref, init=init, timeout_s=cfg.timeout_s * 4)


def start_reference(gpu: Optional[GpuRun]) -> None:
    """Send the reference's child its counted run at the GPU shape (received by collect): once the
    model-shape replay shows the GPU-shape price can matter, so it computes beside the sampler's replay
    and never for a kernel already at the reward's floor."""
    from environment.evaluation.transport.children import ChildDied
    from environment.evaluation.transport.protocol import Count
    if gpu is None or gpu.trace is None or gpu.pending is not None:
        return
    try:
        gpu.ref.send(Count(init=gpu.init, plan=gpu.plan), [], gpu.timeout_s)
    except ChildDied as died:  # after the submission's code ran there: it could be its doing (module docstring)
        gpu.trace, gpu.why, gpu.provoked = None, f"the reference stopped at the GPU shape ({died.reason})", True
        return
    gpu.pending = gpu.ref


def collect(gpu: Optional[GpuRun]) -> None:
    """Receive the reference's counted run at the GPU shape (sent by prepare). Without it (the
    reference failing there on this host) the GPU-shape trace is dropped: the model-shape price stands."""
    from environment.evaluation.transport.children import ChildDied
    from environment.evaluation.transport.protocol import Counted
    if gpu is None or gpu.pending is None:
        return
    ref, gpu.pending = gpu.pending, None
    try:
        counted, _ = ref.receive(Counted, gpu.timeout_s)
    except ChildDied as died:
        gpu.trace, gpu.why, gpu.provoked = None, f"the reference stopped there ({died.reason})", True
        return
    if not counted.ok:
        gpu.trace, gpu.why = None, f"the reference cannot run there on this host ({(counted.error or '')[:200]})"
        gpu.provoked = True
        return
    if [(list(s), d) for s, d in counted.inputs] != [(list(s), d) for s, d in gpu.geometry]:
        raise HarnessFault("at the GPU shape the reference's inputs are not those the candidate was traced on")
    gpu.reference, gpu.kept, gpu.fingerprint, gpu.ref = counted.report, list(counted.kept), counted.fingerprint, ref


def usable_trace(traced: Any) -> str:
    """Why the GPU-shape trace cannot be replayed ("" when it can)."""
    if not traced.ok:
        return f"forward failed there ({(traced.error or '')[:300]})"
    trace = traced.trace
    if trace is None or trace.unreplayable:
        return f"the call cannot be replayed there ({trace.unreplayable if trace else 'no trace'})"
    if trace.host_reads:
        return "forward reads values back to the host there (.item(), .tolist(), bool(tensor))"
    return ""


_FIX = ("Launch the same computation at every size, with launches that feed each other over the same grid "
        "(or fused), so the harness can price it at the GPU shape.")


def price(ctx: Any, gpu: GpuRun, head: Any, checked: list[torch.Tensor], spec: dict, tolerance: dict,
          validate: Any, aten_only: bool = False) -> Priced:
    """The GPU-shape costs of the candidate and the reference, or why not (see the module docstring)."""
    from environment.evaluation.modeled.model import model_cost
    if gpu.trace is None:
        return Priced(why=f"at the GPU shape {gpu.shape or ''} {gpu.why}".replace("  ", " "), capped=gpu.excused,
                      denied=gpu.provoked)
    unmade = inputs_differ(gpu)
    if unmade:  # both children said it before any of the submission's kernels ran; a sampler that died first did not
        stopped = gpu.replayer_inputs is None or "sampler stopped" in (gpu.replayer_inputs.sampled_inputs_error or "")
        return Priced(why=f"at the GPU shape {gpu.shape} {unmade}", denied=stopped)
    sms = int(spec["sm_count"])
    try:
        flag, why = judge(ctx, head, checked, gpu, sms)
    except Unread as exc:  # the reference's child failing to answer: after the submission's code ran there
        return Priced(why=f"at the GPU shape {gpu.shape} the reference's outputs could not be read back ({exc})",
                      denied=True)
    # this host's capacity, a dodge (see prepare), the closure's bound (replay/closure.py) or programs too long to sample
    # in a launch that fills the GPU: at most the reference's speed, what copying it earns, so no bound pays
    programs, detail = _long_programs(head.sampled_error, gpu) or (0, "")
    filled = programs >= sms and CLAIMED not in detail   # a counter's tiles: the model shape prices one program
    if not flag and why and head.sampled_error and (aten_only or closure.LIMIT in head.sampled_error or filled):
        return Priced(why=f"at the GPU shape {gpu.shape} {why}", capped=True)
    if flag or why:
        limit = MODEL_LIMIT in why   # the model's limit, named as such (replay/sampled.py): no advice to the kernel
        return Priced(why=why, flag=flag or F.UNREPLAYABLE, fix="" if flag or limit else _FIX)
    try:
        cand = model_cost(head.sampled_report["launches"], spec, tolerance, gpu.shape)
        ref = model_cost(gpu.reference["launches"], spec, tolerance, gpu.shape)
    except (KeyError, TypeError, ValueError) as exc:
        return Priced(why=f"its cost records are invalid ({exc})", flag=F.INVALID_COST)
    invalid = validate(cand, sum(_numel(s) * getattr(torch, d).itemsize for s, d in gpu.kept), spec)
    if invalid:
        return Priced(why=f"the modeled cost cannot be credited: {invalid}", flag=F.INVALID_COST)
    return Priced(candidate=cand, reference=ref)


def _long_programs(error: str, gpu: GpuRun) -> Optional[tuple[int, str]]:
    """(programs in the launch, what the sampler said) when the GPU-shape replay stopped at a program past its
    budget (replay/sampled.py: LONG_PROGRAMS), else None; the grid is read from the trace, never from the text."""
    match = re.match(r"step (\d+) \(launch of \w+\) failed: RuntimeError: " + re.escape(f"{MODEL_LIMIT} ({LONG_PROGRAMS}): "),
                     error or "")
    steps = gpu.trace.steps if gpu.trace is not None else []
    if not match or int(match.group(1)) >= len(steps) or getattr(steps[int(match.group(1))], "kind", "") != "triton":
        return None
    return math.prod(steps[int(match.group(1))].grid), error[match.end():][:400]


def inputs_differ(gpu: GpuRun) -> str:
    """Why the sampler's GPU-shape inputs are not the reference's ("" when they are the same), from
    the sampler's first reply (sent before it loads the submission's kernels)."""
    said = gpu.replayer_inputs
    if said is None:
        return "the replayer did not say which inputs it made"
    if said.sampled_inputs_error:
        return f"the replayer could not make the inputs on this host ({said.sampled_inputs_error[:200]})"
    if said.fingerprint != gpu.fingerprint:
        return "the task's inputs differ when made twice (get_inputs must draw from torch's seeded generator only)"
    return ""


class Unread(Exception):
    """The reference's child did not give back its outputs at the checked positions."""


def _numel(shape: list[int]) -> int:
    return math.prod(int(n) for n in shape)


def _picked(gpu: GpuRun, indices: list[torch.Tensor]) -> list[torch.Tensor]:
    """The reference's outputs (kept by its child) at the positions the replay checked."""
    from environment.evaluation.transport.children import ChildDied
    from environment.evaluation.transport.frames import FrameError
    from environment.evaluation.transport.protocol import Fetched, Pick
    try:
        head, values = gpu.ref.request(Pick(), Fetched, indices, gpu.timeout_s)
    except (ChildDied, FrameError) as exc:
        raise Unread(str(exc)[:200]) from None
    if not head.ok:
        raise Unread((head.error or "")[:200])
    if len(values) != len(indices) or any(v.shape != i.shape for v, i in zip(values, indices)):
        raise Unread("its reply does not match the positions asked")
    return values


def merged_report(report: dict, sampled: dict) -> dict:
    """The model-shape report with the GPU-shape replay's kernels (compiled for sm_90 too: a block
    size picked from the shape is another kernel) and gate findings added."""
    return dict(report, **{key: list(report.get(key, [])) + list(sampled.get(key, []))
                           for key in ("kernels", "cross_program_raw", "aten_in_kernel", "write_races")})


def judge(ctx: Any, head: Any, checked: list[torch.Tensor], gpu: GpuRun, sms: int) -> tuple[Optional[str], str]:
    """(flag or None, why the GPU-shape estimate cannot be used) — ("", "") when it can; sms: the GPU's SM count."""
    shape = gpu.shape
    if head.sampled_error:
        if head.sampled_error.startswith("MemoryError"):  # what the programs store outgrew what the sampler holds
            return None, (f"{MODEL_LIMIT}: the sampled programs store more elements at the GPU shape than the "
                          "interpreter can track (a few programs doing the whole grid's work)")
        if closure.LIMIT in head.sampled_error:   # a pipeline the closure cannot follow: no fault of the kernel
            return None, f"{MODEL_LIMIT} ({head.sampled_error.split(closure.LIMIT + '): ', 1)[-1][:400]})"
        programs, detail = _long_programs(head.sampled_error, gpu) or (0, "")
        if detail:   # a loop over many tiles per program: what the interpreter cannot replay in time
            few = (f"; its {programs} programs leave {sms - programs} of the GPU's {sms} SMs idle, so the model "
                   "shape's price cannot stand in for it") if programs < sms else (
                "; there too one program claims every tile, so no price stands in for it") if CLAIMED in detail else ""
            return None, f"{MODEL_LIMIT}: {detail}{few}"
        return None, f"its replay failed ({head.sampled_error[:300]})"
    report = head.sampled_report or {}
    if report.get("tainted_launches"):
        return None, (f"launch {report['tainted_launches'][0]} reads memory that unsampled programs write "
                      "(what it computes there cannot be checked)")
    outside = [r["name"] for r in report.get("launches", []) if r.get("sample_outside_sectors")]
    if outside:
        return None, (f"{outside[0]} reads or writes memory outside every tensor it is given (pass the tensors "
                      "a kernel touches as its arguments, whole)")
    stray = [r["name"] for r in report.get("launches", []) if r.get("sample_stray_writers")]
    if stray:
        return None, (f"programs of {stray[0]} store into other tensors than their neighbours do (an output block "
                      "left unwritten cannot be checked)")
    outliers = [r["name"] for r in report.get("launches", []) if r.get("sample_outliers")]
    if outliers:
        return None, f"programs of {outliers[0]} do different amounts of work than the sample's estimate assumes"
    coverage = report.get("output_coverage", [])
    short = [k for k, c in enumerate(coverage) if c < 1.0 - COVERAGE_SLACK]
    if short:
        return None, (f"the sampled programs store only {coverage[short[0]]:.0%} of output {short[0]} (every "
                      "program must write its block of the returned output: a skipped block cannot be checked)")
    if len(checked) != 2 * len(gpu.kept):
        return None, f"the replay returned {len(checked) // 2} output(s), the reference {len(gpu.kept)}"
    # what forward returns there must be the reference's outputs, not a view of a part of them: coverage and
    # values are judged on the returned view, so a prefix view passes both (red team a110-a112)
    for k, (meta, (dims, dtype)) in enumerate(zip(report.get("output_meta", []), gpu.kept)):
        if [list(meta[0]), meta[1]] != [list(dims), dtype]:
            return None, (f"output {k} is {meta[1]}{list(meta[0])} there, the reference's {dtype}{list(dims)}: "
                          "return the whole output at every size")
    if len(report.get("output_meta", [])) != len(gpu.kept):
        return None, "the replay reports no shape for some output"
    indices, invalid = [], ""
    for k, (index, (dims, _)) in enumerate(zip(checked[0::2], gpu.kept)):
        if index.numel() == 0:
            invalid = f"no sampled program wrote output {k}"
        elif index.dtype != torch.int64 or index.dim() != 1 or int(index.max()) >= _numel(dims) or int(index.min()) < 0:
            invalid = f"output {k} does not have the reference's shape"
        if invalid:  # the outputs before it are still compared first, in order
            break
        indices.append(index)
    for k, got in enumerate(_picked(gpu, indices) if indices else []):  # the reference's values there
        err, _, _ = compare(got, checked[2 * k + 1], ctx.task.atol, ctx.task.rtol, -1, "normal", shape)
        if err:
            return F.SIZE_DEPENDENT, (f"the sampled programs compute a wrong result ({err}): host code must "
                                      "launch the same computation at every size")
    if invalid:
        return None, invalid
    written = sum(r.get("bytes_written", r["bytes_unique"]) for r in report.get("launches", []))
    output_bytes = sum(_numel(dims) * getattr(torch, dtype).itemsize for dims, dtype in gpu.kept)
    if written < output_bytes * (1.0 - WRITTEN_SLACK):   # estimated from the sample: its rounding, no more
        return None, "the launches write fewer bytes than the outputs hold"
    return None, ""
