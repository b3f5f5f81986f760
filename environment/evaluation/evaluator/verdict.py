"""One rule for every output the harness checks outside the trials (the counted call, the trusted
replay, the timed calls): the same comparison the trials use, with the float64 oracle deciding
where the candidate and the fp32 reference disagree; and which input families those calls draw."""
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


# A replay on held-out inputs within this many times the task's tolerance computed the function: its miss is the
# kernel's arithmetic on inputs the trials did not draw (a wrong answer), not output made outside the traced work,
# which is far off there (the poison fresh memory gets, another input's answer): that is `untraced_work`, a hack.
NEAR_FACTOR = 10.0
NEAR_MISS = (f"within {NEAR_FACTOR:g}x of the tolerance, a numerical error of the kernels on inputs the trials did not "
             "draw (not work outside them): make the arithmetic stable there (two-pass or Welford variance, a "
             "max-subtracted exponential, fp32 accumulation)")


def judged_near(ctx: Any, shape: dict, expected: list, actual: list, ref: Any, init: Any, inputs: list,
                distribution: str = "normal") -> tuple[Optional[str], bool]:
    """(the first mismatch as `judged` finds it, whether every output is within NEAR_FACTOR x the tolerance)."""
    mismatch = judged(ctx, shape, expected, actual, ref, init, inputs, distribution)
    near = mismatch is not None and len(actual) == len(expected) and all(
        compare(want, got, ctx.task.atol * NEAR_FACTOR, ctx.task.rtol * NEAR_FACTOR, -1, distribution, shape)[0] is None
        for want, got in zip(expected, actual))
    return mismatch, near


def families(task: Any, counted_seed: int, heldout_seed: int) -> tuple[str, str]:
    """The input families (distributions) of the counted call and of the held-out replay: the task's
    harder ones (wide, extreme; normal only where it has no other), the counted call's drawn from its
    secret seed, the replay's the other one. The priced program is judged on the families the trials
    use, not only on normal inputs (a half-precision program run only when priced passed them): with
    both a wide and an extreme family, one is judged on the counted call and the other by the replay."""
    harder = [d for d in task.distributions if d != "normal"] or list(task.distributions)
    first = harder[counted_seed % len(harder)]
    rest = [d for d in harder if d != first] or [first]
    return first, rest[heldout_seed % len(rest)]


def untraced_difference(returned: list, replayed: list) -> Optional[str]:
    """Where what the counted call returned differs from the trusted replay of its trace on the same inputs (None
    where it does not). The same kernels on the same values give the same bits (the replayer runs programs in the
    child's order, one thread, with the child's tl.dot rounding): any difference, however small, is output made
    outside the traced work (a nearly right kernel fixed up through a numpy view, by a little where the tolerance
    is wide and so where a relative allowance would let the fix through). NaN where the replay has NaN is equal."""
    import torch
    if len(returned) != len(replayed):
        return f"it returned {len(returned)} tensor(s), its recorded work makes {len(replayed)}"
    for k, (got, made) in enumerate(zip(returned, replayed)):
        if got.shape != made.shape or got.dtype != made.dtype:
            return f"output {k} is {tuple(got.shape)} {got.dtype}, its recorded work makes {tuple(made.shape)} {made.dtype}"
        differ = ~((got == made) | (got.isnan() & made.isnan())) if got.is_floating_point() else got != made
        if bool(differ.any()):
            at = tuple(int(i) for i in torch.unravel_index(differ.flatten().nonzero()[0, 0], differ.shape))
            return (f"{int(differ.sum())}/{differ.numel()} elements of output {k} differ, first at {at}: returned "
                    f"{float(got[at]):.9g}, the recorded work gives {float(made[at]):.9g}")
    return None
