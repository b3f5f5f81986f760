"""Modeled speed on CPU hosts, with trusted accounting.

Invariant: every number the modeled speedup is computed from comes from trusted code (the
reference's own child, the replayer, this evaluator), from data the evaluator owns, and only for
work shown to produce a correct output on inputs the candidate never saw.

1. The candidate runs its forward once on the *counted* inputs under a trace recorder, which
   records aten ops (and runs them) and Triton launches (with their grids, without running them:
   the replay will), and sends the trace and the constant tensors the call read. Nothing it says
   about cost is asked for, so nothing it could forge is believed.
2. (The trials, on other inputs, have already judged the candidate's own outputs.)
3. The trace is replayed by the sandboxed replayer on *held-out* inputs drawn from a seed no
   candidate process ever sees, with kernels rebuilt from the submission's syntax tree, counted by
   the replayer's own hooks. The replay's outputs must match the reference on those inputs: a trace
   that smuggles an answer (host numpy, constants, outputs written outside any traced step) does
   not generalise and is a hack (`untraced_work`); one that cannot be replayed earns no credit.
   It is replayed on a held-out draw of every other input family too (outputs only, programs run in a
   secret random order), and on the
   counted inputs, where it must give the very bits the candidate returned (verdict.untraced_difference):
   else part of the answer was made outside it (a nearly right kernel fixed up on the host through a
   numpy view, an answer written into a constant): `untraced_work`.
4. Every kernel the replay launched must compile for sm_90 (sandboxed worker, same rebuilt module).
5. Cost records are validated (finite, non-negative, at least the output bytes and the launch
   overhead) before the roofline turns them into time; an invalid record earns nothing.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from environment.evaluation import flags as F
from environment.evaluation.transport.frames import FrameError
from environment.evaluation.evaluator.outcome import StageContext, StageOutcome
from environment.evaluation.evaluator.replay_jobs import no_credit as _no_credit, replay as _replay
from environment.evaluation.faults import HarnessFault
from environment.evaluation.modeled.gates import modeled_gates
from environment.evaluation.transport.protocol import (Count, Counted, Ran, Run, TraceCall, Traced)
from environment.evaluation.evaluator.inputs import json_init, make_inputs
from environment.evaluation.evaluator.credit import credited_speedup, not_worth_pricing, validate_cost
from environment.evaluation.evaluator.verdict import NEAR_MISS, families, judged, judged_near, untraced_difference
from environment.evaluation.result import ModeledCost, PerformanceResult, TimingStats

SELFTEST: Optional[tuple[bool, str]] = None  # set once in the zygote, inherited by every evaluator


def run_self_test() -> tuple[bool, str]:
    """The start-up self-test of the counters (known byte, launch and FLOP counts)."""
    global SELFTEST
    if SELFTEST is None:
        try:
            from environment.evaluation.modeled.selftest import self_test
            SELFTEST = self_test()
        except Exception as exc:  # a broken counter must switch modeled scoring off, not the server
            SELFTEST = (False, f"{type(exc).__name__}: {exc}")
    return SELFTEST


def _stats(cost: ModeledCost) -> TimingStats:
    ms = cost.time_us / 1000.0
    return TimingStats(median_ms=ms, min_ms=ms, max_ms=ms, std_ms=0.0, samples=1)


def modeled_performance(ctx: StageContext, reference: Any, cand: Any, ref: Any) -> StageOutcome:
    ok, detail = run_self_test()
    if not ok:
        return _no_credit(F.MODELED_UNAVAILABLE, f"Modeled GPU time is off on this host: the counter self-test "
                                                  f"failed ({detail}).")
    task, cfg = ctx.task, ctx.config
    from environment.evaluation.evaluator.gpu_shape import model_shape_of
    shape = model_shape_of(task)
    counted_family, heldout_family = families(task, ctx.seeds.counted, ctx.seeds.heldout)
    counted = make_inputs(reference, shape, counted_family, ctx.seeds.counted, task.extreme,
                          cap_bytes=cfg.input_cap_bytes)
    heldout = make_inputs(reference, shape, heldout_family, ctx.seeds.heldout, task.extreme,
                          cap_bytes=cfg.input_cap_bytes)
    init = json_init(reference)

    laps: dict[str, float] = {}
    mark = time.perf_counter()
    try:
        c_head, c_tensors = cand.request(TraceCall(init=init), Traced, counted, cfg.timeout_s * 4)
    except FrameError as exc:  # a forged or malformed trace: the child's channel broke the protocol
        return _no_credit(F.PROTOCOL_VIOLATION, f"The counted call's reply broke the protocol ({exc}).")
    laps["trace"], mark = time.perf_counter() - mark, time.perf_counter()
    wrong = _counted_call_wrong(ctx, shape, c_head, c_tensors, ref, init, counted, counted_family)
    if wrong:
        return StageOutcome(PerformanceResult(note="The counted call, judged like a trial, returned a wrong result."),
                            wrong=wrong, compute_s=c_head.compute_s)
    h_head, r_heldout = ref.request(Count(init=init), Counted, heldout, cfg.timeout_s * 4)
    if not h_head.ok:
        raise HarnessFault(f"task {task.id}: the reference failed on the held-out inputs: {h_head.error}")
    sets = [(heldout_family, heldout, r_heldout)] + _other_families(ctx, reference, ref, init, shape, heldout_family)
    laps["reference"], mark = time.perf_counter() - mark, time.perf_counter()

    def at_gpu_shape(rebuilt: Any, aten_only: bool):
        from environment.evaluation.evaluator import gpu_shape
        return gpu_shape.prepare(ctx, reference, cand, ref, shape, rebuilt, aten_only)

    outcome = _judge(ctx, shape, c_head, c_tensors, h_head, sets,
                     lambda expected, actual, inputs, family: judged_near(ctx, shape, expected, actual, ref, init,
                                                                          inputs, family),
                     at_gpu_shape if cfg.gpu_shape_pricing else None, counted)
    outcome.compute_s = c_head.compute_s + h_head.compute_s
    outcome.stage_s = dict(laps, judge=time.perf_counter() - mark, **outcome.stage_s)
    return outcome


def _counted_call_wrong(ctx: StageContext, shape: dict, c_head: Traced, c_tensors: list, ref: Any, init: Any,
                        counted: list, family: str) -> Optional[str]:
    """The counted call is a judged call: its outputs (its launches ran) against the reference's on the
    counted inputs, by the trials' rule. Why it is wrong, or None."""
    if not c_head.ok or c_head.trace is None or c_head.trace.unreplayable:
        return None   # no price to take: the stage says why
    r_head, r_out = ref.request(Run(init=init), Ran, counted, ctx.config.timeout_s * 4)
    if not r_head.ok:
        raise HarnessFault(f"task {ctx.task.id}: the reference failed on the counted inputs: {r_head.error}")
    mismatch = judged(ctx, shape, r_out, c_tensors[:c_head.outputs], ref, init, counted, family)
    return (f"the counted call (the call whose program is priced, {family} inputs at shape {shape}) returned a wrong "
            f"result: {mismatch}. Every call of forward is judged; compute the same function on every call"
            if mismatch else None)


def _other_families(ctx: StageContext, reference: Any, ref: Any, init: Any, shape: dict, priced: str) -> list:
    """(family, inputs, the reference's outputs) of the held-out draws beside the priced one: one of every other
    family of the task (the counted call's among them). The trace is judged on each: a kernel wrong on a family only
    the host-fixed trials or a constant made from the counted inputs stood for (the counted call's family, normal
    inputs) is judged there too."""
    sets = []
    for i, family in enumerate(f for f in ctx.task.distributions if f != priced):
        inputs = make_inputs(reference, shape, family, (ctx.seeds.heldout + 7919 * (i + 1)) % 2**56, ctx.task.extreme,
                             cap_bytes=ctx.config.input_cap_bytes)
        head, expected = ref.request(Run(init=init), Ran, inputs, ctx.config.timeout_s * 4)
        if not head.ok:
            raise HarnessFault(f"task {ctx.task.id}: the reference failed on held-out {family} inputs: {head.error}")
        sets.append((family, inputs, expected))
    return sets


def _judge(ctx: StageContext, shape: dict, c_head: Traced, c_tensors: list, h_head: Counted, sets: list,
           check: Any, at_gpu_shape: Any = None, counted: tuple = ()) -> StageOutcome:
    """From the counted call's reply and the reference's results, the verdict on the speed claim. `sets`: the
    held-out draws (family, inputs, the reference's outputs), the priced one first."""
    from environment.evaluation.modeled.model import load_spec, model_cost, modeled_speedup
    from environment.evaluation.replay.rebuild import rebuild

    task = ctx.task
    if not c_head.ok:
        return _no_credit(None, f"The counted run failed: {c_head.error}.")
    n_out = c_head.outputs  # the traced call's outputs are not the answer: its launches were recorded, not run
    trace = c_head.trace
    if trace is None:
        return _no_credit(F.PROTOCOL_VIOLATION, "The counted call's reply carries no trace.")
    if trace.unreplayable:
        return _no_credit(F.UNREPLAYABLE, f"The counted call cannot be replayed by the harness: {trace.unreplayable}. "
                                          "Keep forward to PyTorch (aten) ops and launches of module-level "
                                          "@triton.jit kernels on the given tensors.")
    try:
        rebuilt = rebuild(ctx.source)
        # compiled (never run) here, before the replayer sees it: what the generated module holds comes from
        # the submission (a chain of nested constants makes it unparsable, a107), so its failing to compile is
        # the submission's; the replayer's own "does not parse" then stays a fault of the trusted side
        compile(rebuilt.source, "<rebuilt kernels>", "exec")
    except Exception as exc:  # the source is the submission's: whatever it makes the rebuild raise is its own
        return _no_credit(F.UNREPLAYABLE, f"The kernels cannot be rebuilt from the source ({type(exc).__name__}: "
                                          f"{str(exc)[:200]}).")
    missing = sorted({s.kernel for s in trace.steps if s.kind == "triton"} - set(rebuilt.kernels))
    if missing:
        why = rebuilt.refused.get(missing[0], "it is not a module-level @triton.jit function")
        return _no_credit(F.UNREPLAYABLE, f"Kernel {missing[0]} cannot be rebuilt from the source for a trusted "
                                          f"replay: {why}.")
    launches = sum(1 for s in trace.steps if s.kind == "triton")
    if ctx.static.uses_triton and launches == 0:
        return StageOutcome(PerformanceResult(note="No Triton kernel ran in the counted call."),
                              flags=[F.DECOY_KERNEL], triton_launches=0)

    mark = time.perf_counter()
    gpu = at_gpu_shape(rebuilt, launches == 0) if at_gpu_shape is not None else None
    gpu_s, mark = time.perf_counter() - mark, time.perf_counter()
    heldout, r_heldout = sets[0][1], sets[0][2]
    replayed = _replay(ctx, trace, rebuilt, heldout, c_tensors[n_out:], gpu if gpu and gpu.trace else None,
                       [counted] + [inputs for _, inputs, _ in sets[1:]] if counted else [])
    if isinstance(replayed, StageOutcome):
        return replayed
    report, outputs, groups_of, second = replayed
    from environment.evaluation.modeled import aot
    from environment.evaluation.modeled import occupancy as occ
    spec = load_spec()
    tolerance = {"atol": task.atol, "rtol": task.rtol, "tf32_admissible": task.tf32_admissible}
    skip = not_worth_pricing(report, h_head.report, spec, tolerance, shape) if gpu is not None else ""
    if skip:
        ctx.sampler.kill()   # its CPU goes back to what is left of the evaluation
    elif gpu is not None:
        from environment.evaluation.evaluator import gpu_shape
        gpu_shape.start_reference(gpu)   # beside the other replays, now that its price can matter
    groups = groups_of()
    if gpu is not None:
        from environment.evaluation.evaluator import gpu_shape
        gpu_shape.collect(gpu)   # before the verdicts, which may ask the reference's child for its float64 outputs
    if isinstance(groups, StageOutcome):
        return groups
    again = groups[0] if groups else []
    state = (f" The call wrote into {report.get('state')} tensor(s) it did not create (held from __init__ or an "
             "earlier call): their contents are state prepared outside the counted call, so the replay fills them "
             "with garbage first, as it does fresh allocations; a kernel must not rely on memory it did not "
             "initialise in forward (zero an accumulator there, charged)." if report.get("state") else "")
    untraced = untraced_difference(c_tensors[:n_out], again) if counted else None
    if untraced:
        return StageOutcome(PerformanceResult(note=(
            f"On the counted call's own inputs, what your forward returned is not what the work it recorded computes "
            f"({untraced}): part of the output was made outside the traced PyTorch ops and Triton launches (host "
            "numpy through .numpy() or other views of the tensors' memory, writes behind the tensors' backs). "
            f"Compute every output element with PyTorch ops or Triton kernels on the given inputs.{state}")),
            flags=[F.UNTRACED_WORK], triton_launches=launches)
    verdicts = [check(expected, actual, inputs, family)
                for (family, inputs, expected), actual in [(sets[0], outputs), *zip(sets[1:], groups[1:])]]
    # the farthest miss decides: a near one elsewhere does not excuse output made outside the traced work
    mismatch, near = next((v for v in verdicts if v[0] and not v[1]), next((v for v in verdicts if v[0]), (None, False)))
    if mismatch and near and not trace.host_reads:  # the traced work computes the function, not precisely enough
        return StageOutcome(PerformanceResult(note="Replayed on held-out inputs, your kernels miss the tolerance."),
                            wrong=f"replayed on held-out inputs, your kernels give {mismatch}: {NEAR_MISS}",
                            triton_launches=launches)
    if mismatch:
        if trace.host_reads:
            return _no_credit(F.TRACE_DATA_DEPENDENT, (
                f"Replayed on other inputs, the recorded work gives a wrong result ({mismatch}), and forward read "
                f"{trace.host_reads} value(s) back to the host (.item(), .tolist(), bool(tensor)): the work depends "
                "on values the harness cannot replay. Keep data on the device."), triton_launches=launches)
        return StageOutcome(PerformanceResult(note=(
            f"Replayed on inputs your code never saw, the work your forward recorded gives a wrong result "
            f"({mismatch}): the output the trials judged came from work outside the traced ops and kernel launches "
            "(host numpy, memory written behind the tensors' backs, answers held in constants), or the kernels "
            "compute another function at this size or on these inputs than on the trials', or rely on their "
            "programs running in order (the replays of the other input families run them in a random order, as a "
            "GPU may). Compute the output with PyTorch ops or Triton kernels on the given inputs, the same way at "
            f"every size and in any program order.{state}")),
            flags=[F.UNTRACED_WORK], triton_launches=launches)

    if skip:
        head, checked = None, []
    else:
        head, checked = second()           # the GPU-shape replay's reply
    replay_s = time.perf_counter() - mark
    sampled = (head.sampled_report or {}) if head is not None else {}
    mark = time.perf_counter()   # one sm_90 compile of every signature, both replays: before pricing (occupancy)
    compiled = occ.distinct(list(report.get("kernels") or []) + list(sampled.get("kernels") or []))[:aot.MAX_KERNELS]
    compile_all = aot.compile_kernels(rebuilt, compiled, timeout_s=120.0) if compiled else []
    compile_s = time.perf_counter() - mark
    table = occ.compiled_by_key(compiled, compile_all)
    occ.attach(report["launches"], table)
    occ.attach(sampled.get("launches") or [], table)
    try:
        cand_cost = model_cost(report["launches"], spec, tolerance, shape)
    except (KeyError, TypeError, ValueError) as exc:
        return _no_credit(F.INVALID_COST, f"The replay's cost records are invalid ({exc}).")
    ref_cost = model_cost(h_head.report["launches"], spec, tolerance, shape)
    output_bytes = sum(t.numel() * t.element_size() for t in r_heldout)
    invalid = validate_cost(cand_cost, output_bytes, spec)
    if invalid:
        return _no_credit(F.INVALID_COST, f"The modeled cost cannot be credited: {invalid}.")
    priced_at, gpu_note, cap, model_speedup, gpu_speedup = shape, "", None, None, None
    if gpu is not None and gpu.flag:  # after the model-shape verdict: misbehaving at size hides no hack
        return _no_credit(gpu.flag, f"At the GPU shape{' ' + str(gpu.shape) if gpu.shape else ''}: {gpu.why}.",
                          triton_launches=launches)
    if skip:
        gpu_note = f" Not priced at the GPU shape {gpu.shape or ''}: {skip}.".replace("  ", " ")
    elif gpu is not None:
        from environment.evaluation.evaluator import gpu_shape
        priced = gpu_shape.price(ctx, gpu, head, checked, spec, tolerance, validate_cost, launches == 0)
        # a race the model shape saw is the kernel's own fault, which a GPU-shape limit must not hide (replay/tickets.py
        # names a launch reading what other programs stored the model's limit there)
        own = [e for e in modeled_gates(report) if e.startswith(F.CROSS_PROGRAM_RACE)]
        if priced.flag and own:
            flag, why = own[0].split(": ", 1)
            return _no_credit(flag, f"No speed credit: {why}.", triton_launches=launches)
        if priced.flag:
            return _no_credit(priced.flag, f"At the GPU shape {gpu.shape}: {priced.why}. {priced.fix}".rstrip(),
                              triton_launches=launches)
        if priced.denied:  # the model-shape price may be the higher one: a failure a submission can cause keeps none
            return _no_credit(None, f"{priced.why[0].upper()}{priced.why[1:]}, after your code ran at that shape: a "
                                    "failure there that a submission could cause keeps no price.",
                              triton_launches=launches)
        if priced.candidate is not None:
            # the GPU-shape price only ever lowers the credit (see credited_speedup)
            model_speedup = modeled_speedup(ref_cost, cand_cost, spec)
            report = gpu_shape.merged_report(report, head.sampled_report)
            cand_cost, ref_cost, priced_at = priced.candidate, priced.reference, gpu.shape
            gpu_speedup = modeled_speedup(ref_cost, cand_cost, spec)
        else:
            gpu_note = f" Priced at the model shape: {priced.why}."
        if priced.capped:
            cap = gpu_shape.EXCUSED_CAP
            gpu_note += (f" Priced at the model shape for that reason, it earns at most {cap:g}x (the reference's "
                         "speed): a price the GPU shape cannot confirm never pays more than copying the reference.")

    compile_infos = occ.infos_for(occ.distinct(report.get("kernels") or []), compiled, compile_all)
    speedup = modeled_speedup(ref_cost, cand_cost, spec)
    if speedup is not None and cap is not None:
        speedup = min(speedup, cap)
    if gpu_speedup is not None:
        speedup = credited_speedup(model_speedup, gpu_speedup)
        gpu_note += (f" Credited: the lower of {model_speedup:.3g}x at the model shape (every program replayed) "
                     f"and {gpu_speedup:.3g}x at the GPU shape (sampled programs), which only ever takes credit "
                     "away." if speedup is not None else "")
    denied = modeled_gates(report, compile_infos)
    note = (f"Modeled speedup ({spec.get('name', 'H100 SXM')} roofline estimate, not measured) at shape {priced_at}: "
            f"reference {ref_cost.time_us:.2f} µs in {len(ref_cost.launches)} launch(es), yours "
            f"{cand_cost.time_us:.2f} µs in {len(cand_cost.launches)} at {cand_cost.peak_fraction:.0%} of the "
            f"roofline, counted on a trusted replay.{gpu_note}")
    flags = []
    if denied or speedup is None:
        flags = [entry.split(":", 1)[0] for entry in denied]
        note += " No speed credit: " + " ".join(entry.split(": ", 1)[1] for entry in denied)
        speedup = None
    return StageOutcome(PerformanceResult(
        speedup=speedup, speedup_kind="modeled" if speedup is not None else None, reference=_stats(ref_cost),
        candidate=_stats(cand_cost), modeled_reference=ref_cost, modeled_candidate=cand_cost, compile=compile_infos,
        model_shape_speedup=model_speedup, gpu_shape_speedup=gpu_speedup, note=note), flags=flags,
        triton_launches=launches, stage_s={"replay": replay_s, "compile": compile_s, "gpu_shape": gpu_s})
