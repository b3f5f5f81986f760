"""The replayer: a sandboxed process that re-executes a candidate's trace and counts it.

Forked from the evaluator before the evaluator reads its request (like the candidate and reference
children), so it inherits no seed, no source and no other session's data. It never imports the
submission: its kernels come from the module rebuild.py generated from the submission's syntax
tree, written into its own temp dir. Its job frame carries that module, the trace, the held-out
inputs (values the candidate never saw), more input groups (the counted call's own inputs, held-out
draws of the task's other input families) and the candidate's constant tensors; it answers with the
counted launch records of the held-out replay, its outputs, and the outputs of the same trace
replayed on each group (outputs only). The evaluator decides what they are worth. The
GPU-shape inputs of a sampled replay are made here from the job's plan (the reference's get_inputs
under the seed derived for them; while the trials run when the plan comes first, in a MakeInputs
frame), and their fingerprint sent in a first reply, before the submission's kernels are even
loaded: nothing the submission does can change what that reply says.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import time
from typing import NoReturn, Optional

import torch

from environment.evaluation.child import gpu_numerics
from environment.evaluation.transport import frames, sandbox
from environment.evaluation.evaluator.inputs import fingerprint, planned_inputs
from environment.evaluation.modeled import triton_hooks
from environment.evaluation.modeled.counting import CostCounter
# imported here, not where it runs: a sampled launch runs inside a sandbox that reads no source files
from environment.evaluation.replay.sampled import aten_reads, run_sampled
from environment.evaluation.replay.execute import Replay, ReplayError
from environment.evaluation.child.lifecycle import enter_child, enter_sandbox, send_reply, serve_then_exit
from environment.evaluation.transport.protocol import InputPlan, MakeInputs, Replayed, ReplayJob


def replayer_main(nonce: str, cmd_fd: int, res_fd: int) -> NoReturn:
    serve_then_exit(lambda: _wait_and_serve(nonce, cmd_fd, res_fd))


def _wait_and_serve(nonce: str, cmd_fd: int, res_fd: int) -> None:
    # seccomp while idle (forked ahead of the request, it waits here): nothing below needs a
    # process, a socket or ptrace, and the request then pays only for Landlock and the rlimits
    try:
        early = {"seccomp": sandbox.apply_seccomp(allow_threads=False)}
    except Exception as exc:  # the host refuses it: reported as degraded like any child's
        early = {"seccomp": False, "seccomp_error": f"{type(exc).__name__}: {exc}"}
    if os.environ.get("TRITON_INTERPRET") == "1":  # CPU hosts (the pool sets it); a CUDA host never replays
        triton_hooks.install()
        gpu_numerics.install()  # tl.dot rounds its operands as sm_90 does, as in the candidate's child
    header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 10**9)
    made = None
    if header.get("cmd") == "inputs" or header.get("sampled"):  # the sampler
        _yield_cpu()
    if header.get("cmd") == "inputs":  # the GPU-shape inputs, made while the trials run; the job follows
        plan = MakeInputs.model_validate(header).plan
        made = (plan, *_made(plan))
        header, tensors = frames.read_frame(cmd_fd, nonce, time.monotonic() + 10**9)
    _serve(ReplayJob.model_validate(header), tensors, cmd_fd, res_fd, early, made)


def _serve(job: ReplayJob, tensors: list[torch.Tensor], cmd_fd: int, res_fd: int, early: dict,
           made: Optional[tuple] = None) -> None:
    enter_child(job.tmpdir, cmd_fd, res_fd)
    name = f"kernels_{job.digest[:16]}"
    path = os.path.join(job.tmpdir, name + ".py")
    with open(path, "w") as fh:
        fh.write(job.module)
    layers = dict(enter_sandbox(job.model_copy(update={"limits": job.limits.model_copy(update={"seccomp": False})})),
                  **early)
    reply = functools.partial(Replayed, kind="replayed", nonce=job.nonce, layers=layers)
    inputs: list[torch.Tensor] = []
    if job.sampled is not None:  # the GPU-shape inputs, before any of the submission's code is loaded
        inputs, said = made[1:] if made is not None and made[0] == job.sampled.plan else _made(job.sampled.plan)
        if not said.get("sampled_inputs_error") and len(inputs) != job.sampled.inputs:
            inputs, said = [], {"sampled_inputs_error": f"the plan made {len(inputs)} input(s), the trace has "
                                                        f"{job.sampled.inputs}"}
        send_reply(res_fd, reply(ok=True, **said))
    del made
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # generated code: imports, literals and @triton.jit definitions
    except SyntaxError as exc:  # rebuild.py only emits literals and parsed code: its own bug, not the trace's
        send_reply(res_fd, reply(ok=False, harness=True, error=f"the generated kernel module does not parse: {exc}"))
        return
    except Exception as exc:  # built from the submission's source: the submission's
        send_reply(res_fd, reply(ok=False, error=f"the rebuilt kernels do not load: {type(exc).__name__}: "
                                           f"{str(exc)[:500]}"))
        return
    if job.sampled is not None:  # the sampler: the GPU-shape replay (the replayer runs the first one beside it)
        _send_sampled(job, inputs, tensors, module, res_fd, reply)
        return
    # two replies: the counted replay's (its report decides whether the GPU-shape price can matter, so the evaluator
    # starts the reference there while the groups replay), then the groups' outputs
    ends = [job.inputs + sum(job.again[:i + 1]) for i in range(len(job.again))]
    groups = [tensors[start:end] for start, end in zip([job.inputs] + ends, ends)]
    constants = tensors[(ends[-1] if ends else job.inputs):]
    pristine = [t.clone() for t in constants] if groups else []
    start = time.perf_counter()
    done = _replayed(reply, lambda: _replay_with_state_poisoned(job, tensors[:job.inputs] + constants, module))
    if not _sent(res_fd, reply, *done[:2]) or not done[0].ok or not groups:
        return
    poisoned = done[2]

    def again() -> tuple:
        outputs = []
        for i, group in enumerate(groups):
            shuffled = i > 0 and job.order_seed is not None
            with gpu_numerics.trial(job.order_seed) if shuffled else contextlib.nullcontext():
                outputs.append(_outputs_only(job, group, [t.clone() for t in pristine], module, poisoned))
        return [t for o in outputs for t in o], {"again_outputs": [len(o) for o in outputs]}, None
    _sent(res_fd, reply, *_replayed(reply, again, start)[:2])


def _replayed(reply, work, start: Optional[float] = None) -> tuple:
    """(reply, outputs, what else `work` gave) of one part of the replay; `work()` gives (outputs, the report or
    the reply's other fields, more). Whatever the trace makes the replay raise is the trace's (never a harness
    error)."""
    start = time.perf_counter() if start is None else start
    try:
        outputs, said, more = work()
    except ReplayError as exc:
        return reply(ok=False, error=str(exc)), [], None
    except Exception as exc:
        return reply(ok=False, error=f"{type(exc).__name__}: {str(exc)[:500]}"), [], None
    return reply(ok=True, compute_s=time.perf_counter() - start, **said), list(outputs), more


def _sent(res_fd: int, reply, done: Replayed, outputs: list) -> bool:
    """Send one reply; False when the trace made it too large to send (a failed reply said so instead)."""
    try:
        send_reply(res_fd, done, outputs)
        return True
    except frames.FrameError as exc:  # a report or outputs the trace made too large to send: the trace's
        send_reply(res_fd, reply(ok=False, error=f"the replay's results are too large to send back ({exc})"))
        return False


def _replay_with_state_poisoned(job: ReplayJob, tensors: list[torch.Tensor],
                                module) -> tuple[list, dict, frozenset]:
    """(outputs, {"report": its report}, the poisoned state storages) of the full replay. A trace that writes into (or returns) memory it did not
    create is run again from the job's own tensors with that memory poisoned: its contents were
    prepared outside the counted call, uncharged (execute.py). The report's `state` counts it."""
    pristine = [t.clone() for t in tensors] if len(tensors) > job.inputs else []
    run, poisoned = tensors, frozenset()
    while True:
        counter = CostCounter(lifts_are_copies=True)
        replay = Replay(job.trace, run[:job.inputs], run[job.inputs:], module, job.kernels, counter, poisoned)
        with torch.no_grad(), counter:
            outputs = replay.run()
        if replay.state <= poisoned:
            return outputs, {"report": dict(counter.report(outputs=outputs), state=len(poisoned))}, poisoned
        poisoned, run = poisoned | frozenset(replay.state), [t.clone() for t in pristine]


def _outputs_only(job: ReplayJob, inputs: list[torch.Tensor], constants: list[torch.Tensor], module,
                  poisoned: frozenset) -> list[torch.Tensor]:
    """The trace's outputs on other inputs, uncounted (a counter never entered: no hook counts, no launch record),
    with the state the counted replay found poisoned the same way."""
    with torch.no_grad():
        return Replay(job.trace, inputs, constants, module, job.kernels, CostCounter(lifts_are_copies=True),
                      poisoned).run()


def _send_sampled(job: ReplayJob, inputs: list[torch.Tensor], constants: list[torch.Tensor], module, res_fd: int,
                  reply) -> None:
    update, checked = _sampled(job, inputs, constants, module)
    try:
        send_reply(res_fd, reply(ok=True, **update), checked)
    except frames.FrameError as exc:
        send_reply(res_fd, reply(ok=True, sampled_error=f"its results are too large to send back ({exc})"))


# The sampler's CPU priority below the other processes of the evaluation: its GPU-shape replay only matters once
# the model-shape replay (which decides whether the GPU shape is priced at all) and the trials are done, so it
# takes the CPU they leave, and a kernel at the reward's floor ends without waiting for it.
SAMPLER_NICENESS = 5


def _yield_cpu() -> None:
    try:
        os.nice(SAMPLER_NICENESS)
    except OSError:  # a host that refuses it: the sampler runs at the evaluation's priority
        pass


def _made(plan: InputPlan) -> tuple[list[torch.Tensor], dict]:
    """The GPU-shape inputs from the plan and what the first reply says of them: {fingerprint}, or
    {sampled_inputs_error} (the task's code failing here is the environment's, as in the reference)."""
    try:
        inputs = planned_inputs(plan)
    except Exception as exc:
        return [], {"sampled_inputs_error": f"{type(exc).__name__}: {str(exc)[:500]}"}
    return inputs, {"fingerprint": fingerprint(inputs)}


def _sampled(job: ReplayJob, inputs: list[torch.Tensor], constants: list[torch.Tensor],
             module) -> tuple[dict, list[torch.Tensor]]:
    """The replay at the GPU shape (a sample of each launch's programs, counts scaled to the grid):
    ({sampled_report} or {sampled_error}, the checked output positions and their values)."""
    sampled = job.sampled
    if len(inputs) != sampled.inputs:  # no inputs made (the first reply said why): nothing to replay
        return {"sampled_error": "no inputs were made"}, []
    try:
        # the programs sampled (the estimate's too) are keyed to the secret seed and this submission's kernels
        seed = int.from_bytes(hashlib.sha256(f"{sampled.seed}|{job.digest}".encode()).digest()[:8], "little") >> 1
        counter = CostCounter(lifts_are_copies=True, sample_seed=seed, sampler=run_sampled, aten_reads=aten_reads)
        replay = Replay(sampled.trace, inputs, constants, module, job.kernels, counter)
        with torch.no_grad(), counter:
            replay.run(keep=False)
            checked = replay.checked_outputs()
        return {"sampled_report": counter.report(outputs=[])}, checked   # (its provenance fields are unused)
    except ReplayError as exc:
        return {"sampled_error": str(exc)[:1000]}, []
    except Exception as exc:  # the trace's, as in the first replay
        return {"sampled_error": f"{type(exc).__name__}: {str(exc)[:500]}"}, []
