"""The trusted replays' jobs and replies, as the modeled-speed stage (modeled_speed.py) sends and reads them: the
replayer's job (the held-out inputs, the input groups replayed after them, the constants) and the sampler's
GPU-shape job sent beside it; the replayer answers the counted replay first and the groups' outputs second."""
from __future__ import annotations

import time
from typing import Any, Optional

from environment.evaluation import flags as F
from environment.evaluation.evaluator.outcome import StageContext, StageOutcome
from environment.evaluation.faults import HarnessFault
from environment.evaluation.result import PerformanceResult
from environment.evaluation.transport.children import ChildDied
from environment.evaluation.transport.frames import FrameError, encode_header
from environment.evaluation.transport.protocol import Limits, Replayed, ReplayJob, SampledReplay


def no_credit(flag: Optional[str], note: str, **extra: Any) -> StageOutcome:
    return StageOutcome(PerformanceResult(note=note + " No speed credit."), flags=[flag] if flag else [], **extra)


def replay(ctx: StageContext, trace: Any, rebuilt: Any, heldout: list, constants: list, gpu: Any = None,
            groups: list = ()):
    """(report, outputs, groups_of, second) of the trusted replay (`groups_of()`: its outputs on each of the input
    `groups`, replayed after the held-out inputs), or the outcome that ends the stage. With
    `gpu`, the sampler (a second replayer) replays the GPU-shape trace with sampled programs beside it;
    `second()` waits for that reply, (reply, checked GPU-shape outputs), ((None, []) without `gpu`)."""
    cfg = ctx.config
    jobs = []
    if gpu is not None:  # sent first: the sampler starts while the replayer replays the model shape
        sampled = SampledReplay(trace=gpu.trace, plan=gpu.plan, inputs=len(gpu.geometry),
                                constants=len(gpu.constants), seed=gpu.sample_seed)
        jobs.append((ctx.sampler, replay_job(ctx, rebuilt, gpu.trace, 0, sampled), list(gpu.constants)))
    jobs.append((ctx.replayer, replay_job(ctx, rebuilt, trace, len(heldout), again=[len(g) for g in groups],
                                    order_seed=(ctx.seeds.heldout ^ 0x5EED) % 2**62),
                 list(heldout) + [t for g in groups for t in g] + list(constants)))
    try:  # the frames as they will be sent: the trace, the kernels and the constants are the submission's, so is
        for child, job, tensors in jobs:  # their size
            encode_header(child.header(job), tensors)
    except FrameError as exc:
        return no_credit(F.UNREPLAYABLE, f"The trace and the rebuilt kernels are too large to replay ({exc}): "
                                          "launch fewer, smaller kernels and hold fewer constant tensors.")
    unmade = ""   # the sampler found dead before its first reply: no submission code has run there
    try:
        deadline = time.monotonic() + cfg.timeout_s * 4
        for child, job, tensors in jobs:
            try:
                child.send(job, tensors, cfg.timeout_s * 4)
            except ChildDied as died:
                if died.role != "sampler":
                    raise
                unmade = died.reason
        head, outputs = ctx.replayer.receive(Replayed, max(0.0, deadline - time.monotonic()))
    except ChildDied as died:
        return no_credit(F.UNREPLAYABLE, f"The trusted replay of your kernels stopped: {died.reason}.")
    if not head.ok and head.harness:
        raise HarnessFault(f"the replayer failed: {head.error}")
    if not head.ok:
        return no_credit(F.UNREPLAYABLE, f"The trusted replay of the counted call failed: {head.error}.")

    def groups_of():
        """The outputs of the trace replayed on each input group (the replayer's second reply, sent while the
        evaluator starts the reference at the GPU shape), or the outcome that ends the stage."""
        if not groups:
            return []
        try:
            again, outputs = ctx.replayer.receive(Replayed, max(0.0, deadline - time.monotonic()))
        except ChildDied as died:
            return no_credit(F.UNREPLAYABLE, f"The trusted replay of your kernels on other inputs stopped: "
                                              f"{died.reason}.")
        if not again.ok:
            return no_credit(F.UNREPLAYABLE, f"The trusted replay of your kernels on other inputs failed: "
                                              f"{again.error}.")
        return split(outputs, again.again_outputs)[1]

    if gpu is None:
        return head.report, outputs, groups_of, lambda: (None, [])

    def second() -> tuple[Replayed, list]:
        """The sampler's replies: what it says of the GPU-shape inputs it made (gpu_shape.price), sent
        before it loads the submission's kernels, then the GPU-shape replay's (whatever stops that one, the
        first replay's verdict stands)."""
        reason = unmade
        if not reason:
            try:
                gpu.replayer_inputs, _ = ctx.sampler.receive(Replayed, cfg.timeout_s * 4)
            except ChildDied as died:
                reason = died.reason
            except FrameError as exc:
                reason = f"its first reply is malformed ({exc})"
        if reason:  # the environment's (gpu_shape.inputs_differ): the model-shape price stands
            gpu.replayer_inputs = Replayed(kind="replayed", nonce="", ok=True,
                                           sampled_inputs_error=f"the sampler stopped before its first reply: {reason}")
            return Replayed(kind="replayed", nonce="", ok=True, sampled_error="no inputs were made"), []
        try:
            return ctx.sampler.receive(Replayed, cfg.timeout_s * 4)
        except ChildDied as died:
            return Replayed(kind="replayed", nonce="", ok=True, sampled_error=f"it stopped: {died.reason}"), []
        except FrameError as exc:
            return Replayed(kind="replayed", nonce="", ok=True, sampled_error=f"its reply is malformed: {exc}"), []
    return head.report, outputs, groups_of, second


def split(outputs: list, counts: list) -> tuple[list, list]:
    """The replay's outputs on the held-out inputs, and on each group replayed after them (`counts` from the
    replayer's reply: how many outputs each group's replay returned, last in the frame)."""
    end = len(outputs) - sum(counts)
    first, groups = outputs[:end], []
    for n in counts:
        groups.append(outputs[end:end + n])
        end += n
    return first, groups


def replay_job(ctx: StageContext, rebuilt: Any, trace: Any, inputs: int, sampled: Any = None, again: tuple = (),
         order_seed: Optional[int] = None) -> ReplayJob:
    import tempfile
    return ReplayJob(tmpdir=tempfile.mkdtemp(prefix="replay-", dir=ctx.workdir), module=rebuilt.source,
                     digest=rebuilt.digest, kernels=rebuilt.kernels, trace=trace, inputs=inputs,
                     backend=ctx.backend, limits=Limits.of(ctx.config), sampled=sampled, again=list(again),
                     order_seed=order_seed)
