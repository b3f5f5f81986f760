"""Modeled speed on CPU hosts: counts come from the children, costs, gates and the verdict stay on
the trusted side. The counted call runs on fresh inputs and its output is checked like a trial."""
from __future__ import annotations

from typing import Any, Optional

from environment.evaluation import flags as F
from environment.evaluation.compare import compare
from environment.evaluation.inputs import json_init, make_inputs
from environment.evaluation.result import PerformanceResult, TimingStats

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


def _stats(cost) -> TimingStats:
    ms = cost.time_us / 1000.0
    return TimingStats(median_ms=ms, min_ms=ms, max_ms=ms, std_ms=0.0, samples=1)


def modeled_performance(ev: Any, reference: Any, cand: Any, ref: Any) -> PerformanceResult:
    ok, detail = run_self_test()
    if not ok:
        ev.flags.append(F.MODELED_UNAVAILABLE)
        return PerformanceResult(note=f"Modeled GPU time is off on this host: the counter self-test failed "
                                      f"({detail}). No speed credit.")
    from environment.evaluation.modeled import aot
    from environment.evaluation.modeled.gates import modeled_gates
    from environment.evaluation.modeled.model import load_spec, model_cost, modeled_speedup

    task, cfg = ev.task, ev.config
    shape = task.model_shape or max(task.cpu_shapes, key=lambda s: sum(s.values()) if s else 0)
    inputs = make_inputs(reference, shape, "normal", ev.seeds[-1] ^ 0x5EED)
    init = json_init(reference)
    c_head, c_out = cand.request({"cmd": "count", "init": init}, inputs, cfg.timeout_s * 4)
    r_head, r_out = ref.request({"cmd": "count", "init": init}, inputs, cfg.timeout_s * 4)
    ev.compute_s += float(c_head.get("compute_s", 0.0)) + float(r_head.get("compute_s", 0.0))
    if not r_head.get("ok"):
        raise RuntimeError(f"task {task.id}: counting the reference failed: {r_head.get('error')}")
    if not c_head.get("ok"):
        return PerformanceResult(note=f"The counted run failed: {c_head.get('error')}. No speed credit.")
    for k, expected in enumerate(r_out):  # the counted call must be right too (no memoized answers)
        err, _, _ = compare(expected, c_out[k] if k < len(c_out) else expected.new_empty(0), task.atol, task.rtol,
                            -1, "normal", shape)
        if err:
            ev.correctness = ev.correctness.model_copy(update={
                "correct": False, "error": f"The counted run on fresh inputs returned a wrong result ({err})"})
            return PerformanceResult(note="The counted run returned a wrong result.")
    report = c_head["report"]
    compile_infos = aot.compile_kernels(ev.source, report.get("kernels") or [], timeout_s=120.0) \
        if report.get("kernels") else []
    spec = load_spec()
    tolerance = {"atol": task.atol, "rtol": task.rtol}
    ref_cost = model_cost(r_head["report"]["launches"], spec, tolerance)
    cand_cost = model_cost(report["launches"], spec, tolerance)
    speedup = modeled_speedup(ref_cost, cand_cost, spec)
    denied = modeled_gates(report, compile_infos)
    note = (f"Modeled speedup ({spec.get('name', 'H100 SXM')} roofline estimate, not measured) at shape {shape}: "
            f"reference {ref_cost.time_us:.2f} µs in {len(ref_cost.launches)} launch(es), yours "
            f"{cand_cost.time_us:.2f} µs in {len(cand_cost.launches)}.")
    if denied:
        ev.flags.extend(entry.split(":", 1)[0] for entry in denied)
        note += " No speed credit: " + " ".join(entry.split(": ", 1)[1] for entry in denied)
        speedup_value = None
    else:
        speedup_value = speedup
    return PerformanceResult(speedup=speedup_value, speedup_kind="modeled" if speedup_value is not None else None,
                             reference=_stats(ref_cost), candidate=_stats(cand_cost), modeled_reference=ref_cost,
                             modeled_candidate=cand_cost, compile=compile_infos, note=note)
