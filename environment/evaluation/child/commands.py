"""What a child does for each command: the judged calls (launches counted, races and swallowed exceptions
recorded), the counted and traced calls, the timed loop, the digests. Runs in the sandboxed child."""
from __future__ import annotations

import contextlib
import copy
import hashlib
import time
from typing import Any

import torch

from environment.evaluation.child import fallback_guard, gpu_numerics, outputs
from environment.evaluation.child.launches import LaunchCounter
from environment.evaluation.evaluator.inputs import fingerprint, geometry
from environment.evaluation.transport import frames
from environment.evaluation.transport.protocol import NOT_PLAIN, Counted, Ran, Run, Traced


def digest(tensors: list[torch.Tensor]) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(frames.tensor_bytes(t))
    return h.hexdigest()


def _outputs(out: Any) -> tuple[list[torch.Tensor], bool]:
    items, plain, _ = outputs.classify(out)
    return items, plain


def _not_plain(out: Any) -> str:
    """The error for a result that is no plain tensor: a wrong answer's own message when it is a plain value."""
    returned = outputs.classify(out)[2]
    return outputs.wrong_output_message(returned) if returned else NOT_PLAIN


def cmd_count(model, tensors, device, planned: bool = False):
    """The counted call; planned: on inputs made here (their geometry and fingerprint in the reply),
    the outputs kept here, only their geometry sent."""
    from environment.evaluation.modeled.counting import CostCounter
    extra = {"inputs": geometry(tensors), "fingerprint": fingerprint(tensors)} if planned else {}
    inputs = [t.to(device) for t in tensors]
    counter = CostCounter()
    start = time.perf_counter()
    with torch.no_grad(), counter:
        out = model(*inputs)
    compute = time.perf_counter() - start
    items, _ = _outputs(out)
    items = [t.detach().to("cpu") for t in items]
    if planned:
        extra["kept"] = geometry(items)
    return (Counted(kind="counted", nonce="", ok=True, report=counter.report(outputs=items), compute_s=compute,
                    **extra), items)


def pick(kept: list[torch.Tensor], indices: list[torch.Tensor]) -> list[torch.Tensor]:
    """The kept outputs' values at the flat positions given (one int64 index tensor per output, for the
    first len(indices) outputs)."""
    if len(indices) > len(kept):
        raise ValueError(f"{len(indices)} index tensor(s) for {len(kept)} kept output(s)")
    for index, out in zip(indices, kept):
        if index.dtype != torch.int64 or index.dim() != 1 or (index.numel() and (
                int(index.min()) < 0 or int(index.max()) >= out.numel())):
            raise ValueError("an index tensor is not int64 flat positions inside its output")
    return [out.reshape(-1)[index] for index, out in zip(indices, kept)]


def _judged_call(model, args: list[torch.Tensor], device, order_seed=None, recorder=None):
    """One call of forward as every judged call of the candidate makes it: launches counted, races
    and swallowed exceptions recorded, under a trace recorder that runs its launches (a trial's trace
    is dropped, the counted call's priced): the priced call looks like any other judged call.
    Returns (output, launch counter, numerics report, swallowed exceptions)."""
    if recorder is None and JUDGED_CALLS_RECORDED:  # imported before the sandbox where it is used (CPU hosts);
        from environment.evaluation.replay.recorder import TraceRecorder  # a CUDA host's child cannot read it
        recorder = TraceRecorder(args, run_launches=True)
    recorder = recorder if recorder is not None else contextlib.nullcontext()
    fallback_guard.RECORDER.begin()
    try:
        with torch.no_grad(), LaunchCounter() as counter, gpu_numerics.trial(order_seed) as numerics, recorder:
            out = model(*args)
            _sync(device)
    finally:
        swallowed = fallback_guard.RECORDER.end()
    return out, counter, numerics, swallowed


JUDGED_CALLS_RECORDED = False   # set in the candidate's child (CPU hosts), where the counted call is traced


def cmd_trace(model, tensors, device, geometry=None):
    """Run the forward once under the trace recorder; send the outputs, then the constants. The
    launches run and the call is made as a trial's (`_judged_call`): its outputs are judged. With
    `geometry`, on zero-filled inputs of those shapes (the GPU-shape trace), launches recorded and not
    run, sending only the constants."""
    from environment.evaluation.replay.recorder import TraceRecorder
    if geometry is not None:
        dtypes = [getattr(torch, name, None) for _, name in geometry]
        if not all(isinstance(d, torch.dtype) for d in dtypes):
            raise ValueError("unknown dtype in the trace geometry")
        tensors = [torch.zeros(shape, dtype=d) for (shape, _), d in zip(geometry, dtypes)]
    inputs = [t.to(device) for t in tensors]
    start = time.perf_counter()
    if geometry is not None:
        with torch.no_grad(), TraceRecorder(inputs) as recorder:
            out = model(*inputs)
    else:
        recorder = TraceRecorder(inputs, run_launches=True)
        out = _judged_call(model, inputs, device, recorder=recorder)[0]
    compute = time.perf_counter() - start
    items, plain = _outputs(out)
    if not plain:
        return Traced(kind="traced", nonce="", ok=False, error=_not_plain(out)), []
    trace, constants = recorder.finish(items)
    if geometry is not None:
        return Traced(kind="traced", nonce="", ok=True, trace=trace, outputs=0, compute_s=compute), constants
    return (Traced(kind="traced", nonce="", ok=True, trace=trace, outputs=len(items), compute_s=compute),
            [t.detach().to("cpu") for t in items] + constants)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


_FLOAT64_MODELS: dict[int, Any] = {}


def _float64(model, tensors: list[torch.Tensor]) -> tuple[Any, list[torch.Tensor]]:
    """The reference as a float64 oracle: a float64 copy of the model (same weights) and inputs."""
    if id(model) not in _FLOAT64_MODELS:
        copied = copy.deepcopy(model)
        _FLOAT64_MODELS[id(model)] = copied.double() if isinstance(copied, torch.nn.Module) else copied
    return _FLOAT64_MODELS[id(model)], [t.double() if t.is_floating_point() else t for t in tensors]


def cmd_run(model, cmd: Run, tensors, device, audit_events):
    """Run the forward `repeat` times on fresh copies of the same inputs (determinism) and report
    the outputs, whether the inputs were written to, and the Triton launches of the first run.
    float64: run a float64 copy of the model (the reference's oracle). order_seed: launches run
    their programs in that order (CPU hosts). Also reported: stores two programs raced on, and
    exceptions that were raised inside the call and swallowed."""
    if cmd.float64:
        model, tensors = _float64(model, tensors)
    inputs = [t.to(device) for t in tensors]
    digest_before = digest(inputs)
    outs: list[torch.Tensor] = []
    launches: dict[str, int] = {}
    plain_all, mutated, n_out, compute, returned = True, False, 0, 0.0, None
    races: list[str] = []
    swallowed: list[str] = []
    for rep in range(cmd.repeat):
        args = [t.clone() for t in inputs]
        start = time.perf_counter()
        out, counter, numerics, caught = _judged_call(model, args, device, cmd.order_seed)
        swallowed += caught
        compute += time.perf_counter() - start
        races += numerics.races
        items, plain, returned = outputs.classify(out)
        plain_all &= plain
        if not plain:
            break
        mutated |= digest(args) != digest_before
        if rep == 0:
            launches, n_out = dict(counter.counts), len(items)
        # copies, also on a CPU host (where .to("cpu") is the same storage): an output buffer kept on the module
        # and returned by every call would otherwise hold the last run's values in every run's place, and the
        # determinism check would compare a run with itself
        outs.extend(t.detach().to("cpu", copy=True) for t in items)
    return (Ran(kind="ran", nonce=cmd.nonce, ok=True, plain=plain_all, returned=returned, mutated=mutated,
                launches=launches, outputs=n_out, audit=list(audit_events), compute_s=compute, races=races[:5],
                swallowed=swallowed[:5]),
            outs if plain_all else [])


def cmd_time(model, staged, device, skip_model: bool = False):
    """Run each staged input set once; with skip_model, the same loop without the model (the
    evaluator's baseline for the loop, flush and channel costs). On CUDA the L2 is flushed before
    every call (we care about cold-cache performance) and the device synchronised after it; CUDA
    events give the evaluator a finer hint, its own clock stays the timing of record."""
    outs = []
    cuda = device.type == "cuda"
    flush = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device=device) if cuda else None
    hint = 0.0
    start = time.perf_counter()
    with torch.no_grad():
        for args in staged:
            if cuda:
                flush.zero_()
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()
            if not skip_model:
                outs.append(model(*args))
            if cuda:
                torch.cuda.synchronize()
                end.record()
                end.synchronize()
                hint += begin.elapsed_time(end) / 1e3
    elapsed = time.perf_counter() - start
    timed = [_outputs(o) for o in outs]
    for out, (_, plain) in zip(outs, timed):  # a stand-in would do its work when the Digest step reads it (a151)
        if not plain:
            raise TypeError(_not_plain(out))
    return [items for items, _ in timed], (hint if cuda else elapsed)
