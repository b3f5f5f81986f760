"""One rule for every output the harness checks outside the trials (the counted call, the trusted
replay, the timed calls): the same comparison the trials use, with the float64 oracle deciding
where the candidate and the fp32 reference disagree."""
from __future__ import annotations

from typing import Any, Optional

from environment.evaluation.evaluator.compare import compare
from environment.evaluation.transport.protocol import Ran, Run


def first_mismatch(ctx: Any, shape: dict, expected: list, actual: list,
                   oracle: Optional[list] = None, distribution: str = "normal") -> Optional[str]:
    if len(actual) != len(expected):
        return f"it returned {len(actual)} tensor(s), the reference returns {len(expected)}"
    for k, want in enumerate(expected):
        err, _, _ = compare(want, actual[k], ctx.task.atol, ctx.task.rtol, -1, distribution, shape,
                            oracle=oracle[k] if oracle else None, slack=ctx.config.oracle_slack)
        if err:
            return err
    return None


def judged(ctx: Any, shape: dict, expected: list, actual: list, ref: Any, init: Any, inputs: list,
           distribution: str = "normal") -> Optional[str]:
    """The first mismatch, after asking the reference child for a float64 run on `inputs` when the
    fp32 comparison fails (as the trials do)."""
    err = first_mismatch(ctx, shape, expected, actual, distribution=distribution)
    if err is None or not ctx.config.fp64_oracle:
        return err
    head, oracle = ref.request(Run(init=init, float64=True), Ran, inputs, ctx.config.timeout_s)
    if not head.ok or len(oracle) != len(expected):
        return err
    return first_mismatch(ctx, shape, expected, actual, oracle, distribution)
