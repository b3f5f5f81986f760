"""Independent reward signals: each looks at a step apart from the main verdict and says agree,
disagree, veto or abstain, with a value and why (the ``Signal`` record in evaluation/result.py).

- static_rules: a KernelGuard-style detector set over the source (static_rules.py);
- physics_floor: a claimed time under the roofline floor of the task's bytes and FLOPs is a veto;
- own_kernel_share: the modeled time in the submission's own kernels vs library calls;
- measured_vs_modeled: on CUDA hosts, the clock against the roofline model;
- llm_judge: optional, off unless KERNEL_ENV_JUDGE_URL is set (judge.py).

A veto zeroes the reward through the rubric's NoVeto gate (environment/rubric.py); a disagreement
changes nothing in the reward and is flagged: ``disagreements(result)`` lists them.
"""
from __future__ import annotations

from environment.evaluation.result import EvalResult, Signal
from environment.signals import judge, measured, physics, share, static_signal


def compute(task, code: str, result: EvalResult) -> list[Signal]:
    out = [static_signal.signal(task, code, result), physics.signal(task, result), share.signal(result),
           measured.signal(task, result)]
    verdict = judge.signal(task, code, result)
    if verdict is not None:
        out.append(verdict)
    return out


def attach(task, code: str, result: EvalResult) -> EvalResult:
    """The result with its signals (a harness error is the environment's: nothing to judge)."""
    if result.outcome == "harness_error":
        return result
    return result.model_copy(update={"signals": compute(task, code, result)})


def disagreements(result) -> list[Signal]:
    return [s for s in getattr(result, "signals", []) if s.verdict in ("disagree", "veto")]
