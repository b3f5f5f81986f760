"""The human-readable report of one evaluation: what happened, and what to do next."""
from __future__ import annotations

from typing import Optional

from environment.evaluation import flags as F
from environment.evaluation.result import SPEEDUP_LABELS, EvalResult

HINTS = {
    F.DECOY_KERNEL: "Launch the Triton kernel you defined; the output must come from it.",
    F.TRY_EXCEPT_FALLBACK: "Remove try/except: a fallback hides a broken kernel.",
    F.REFERENCE_MODEL_USE: "Do not use the reference Model; implement the computation in ModelNew.",
    F.SANDBOX_VIOLATION: "Do not create processes or threads, send signals, or open sockets.",
    F.INPUT_MUTATION: "Do not write into input tensors; allocate the output (torch.empty_like).",
    F.NONDETERMINISTIC: "Initialise every output element on every call; avoid races between programs.",
    F.TIMEOUT: "Make the submission finish quickly: no infinite loops or sleeps; fewer, larger programs.",
    F.MEMORY_LIMIT: "The submission ran out of memory: allocate only what the output needs.",
}


def one_line_error(result: EvalResult) -> Optional[str]:
    if result.outcome == "harness_error":
        return f"environment error (not your submission's fault; the turn is not counted): {result.harness_error}"
    if not result.static.ok:
        return result.static.errors[0] if result.static.errors else "static checks failed"
    if result.load is not None and not result.load.ok:
        return result.load.error
    if result.correctness is not None and not result.correctness.correct:
        return result.correctness.error
    hacks = [f.name for f in result.findings if f.hack]
    if hacks:
        return f"reward hack detected: {', '.join(hacks)}"
    return None


def render(result: EvalResult, score: float, breakdown: dict[str, float]) -> str:
    if result.outcome == "harness_error":
        return ("The environment failed while evaluating this submission; it is not scored and the turn is not "
                f"counted. Send it again. Cause: {result.harness_error}")
    lines: list[str] = []
    s = result.static
    if not s.ok:
        lines.append("Static checks failed:")
        lines += [f"  - {e}" for e in s.errors]
    elif result.load is not None and not result.load.ok:
        lines.append(f"Compile/load failed: {result.load.error}")
    elif result.correctness is not None:
        c = result.correctness
        # Under a hack the trials say nothing: "WRONG — 5/5 trials passed" read as a contradiction.
        state = "correct" if c.correct else ("void (reward hack)" if result.hacked else "WRONG")
        err = f"max abs error {c.max_abs_error:.3g}" if c.max_abs_error is not None else "no comparable output"
        lines.append(f"Correctness: {state} — {c.trials_passed}/{c.trials_total} trials passed "
                     f"(atol={c.atol:g}, rtol={c.rtol:g}; {err}).")
        if c.error:
            lines.append(f"  First failure: {c.error}")
        if c.mismatch is not None:
            m = c.mismatch
            lines.append(f"  Mismatch: {m.mismatched}/{m.total} elements; mean abs error {m.mean_abs_error:.3g}.")
    if result.launches is not None and result.launches.triton_launches:
        lines.append(f"Triton launches per forward: {result.launches.triton_launches} "
                     f"({', '.join(result.launches.kernels_launched)}).")
    p = result.performance
    if p is not None:
        if p.speedup is not None:
            label = SPEEDUP_LABELS[p.speedup_kind]
            lines.append(f"Speedup ({label}): {p.speedup:.3f}x"
                         + (f" (reference {p.reference.median_ms:.4g} ms, yours {p.candidate.median_ms:.4g} ms)"
                            if p.reference and p.candidate else "") + ".")
        if p.note:
            lines.append(f"  {p.note}")
        if p.modeled_candidate is not None:
            for launch in p.modeled_candidate.launches[:8]:
                sm90 = (f", {launch.resident_programs} program(s) per SM by the sm_90 compile"
                        if launch.resident_programs is not None else "")
                sm90 += f", {launch.spill_bytes / 1e6:.3g} MB of spilled registers" if launch.spill_bytes else ""
                sm90 += (f", {launch.idle_programs} of its {launch.programs} programs idle (past the last tile)"
                         if launch.idle_programs else "")
                lines.append(f"  {launch.name}: {launch.time_us:.3g} µs, {launch.bound}-bound, "
                             f"{launch.peak_fraction:.0%} of peak (roofline {launch.roofline_us:.3g} µs){sm90}")
        for info in p.compile:
            if not info.ok:
                lines.append(f"  sm_90 compile of {info.kernel} failed: {info.error}")
    hacks = sorted(f"{f.name}:{f.detail}" if f.detail else f.name for f in result.findings if f.hack)
    warns = sorted(f"{f.name}:{f.detail}" if f.detail else f.name for f in result.findings if not f.hack)
    if hacks:
        layers = sorted({f.layer for f in result.findings if f.hack})
        lines.append(f"Reward hack detected ({', '.join(hacks)}; caught by: {', '.join(layers)}): score 0.")
    if warns:
        lines.append(f"Warnings: {', '.join(warns)}.")
    for flag in {f.split(':', 1)[0] for f in result.flags}:
        if flag in HINTS:
            lines.append(f"Hint: {HINTS[flag]}")
    parts = ", ".join(f"{k} {v:.2f}" for k, v in breakdown.items())
    lines.append(f"Score {score:.3f} = {parts}.")
    if result.correct and p is not None and p.speedup is not None and p.speedup < 1.5:
        lines.append("Next: fuse operations into fewer kernels and move fewer bytes to raise the speedup.")
    return "\n".join(lines)
