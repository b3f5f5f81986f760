"""The task text an agent sees (KernelObservation.prompt)."""
from __future__ import annotations

from environment.tasks.task import Task


_EXTREME_TEXT = {
    "logits": "logits in the hundreds, one dominant entry per row",
    "masked_logits": "logits in the hundreds, one dominant entry per row, -inf entries",
    "rows": "rows from 1e-3 to 1e3 in scale, far from zero mean, a dominant entry, an all-zero row",
    "elementwise": "magnitudes past exp's overflow point",
    "attention": "scores in the hundreds, one key dominating each query",
}


def _sizes(shape: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in shape.items()) + "}"


_PRICED: dict[tuple[str, str], str] = {}


def _priced_sizes(task: Task) -> str:
    """The sizes a CPU host prices speed at (the model shape, and the GPU shape that fits the pricer), so a
    kernel is not tuned for one and credited at the other (a few 128x128 tiles at a 256^3 model shape).
    Found once per task and reference (it runs the reference's get_inputs on the meta device), not per reset."""
    key = (task.id, task.reference_code)
    if key not in _PRICED:
        _PRICED[key] = _priced_text(task)
    return _PRICED[key]


def _priced_text(task: Task) -> str:
    from environment.evaluation.evaluator.gpu_plan import INPUT_CAP_BYTES, choose_shape, model_shape_of
    model = _sizes(model_shape_of(task))
    gpu, _ = choose_shape(task, task.load_reference(), INPUT_CAP_BYTES)
    if gpu is None:
        return f" Speed is priced at {model}, every program run."
    return (f" Speed is priced at two sizes, {model} (every program run) and {_sizes(gpu)}, and the lower speedup "
            "counts: pick blocks and grids from the problem size (a grid of a few large tiles leaves most of the "
            "H100's 132 SMs idle at the smaller size).")


def task_prompt(task: Task, backend: str, max_turns: int) -> str:
    shapes = task.shapes(backend)
    shape_text = ", ".join(_sizes(s) for s in shapes[:3])
    hidden = []
    if task.hidden_shape:
        hidden.append("sizes you are not shown (odd, larger than these along the reduction dimension)"
                      if backend == "cpu" else "sizes you are not shown (odd ones)")
    if task.extreme:
        hidden.append("extreme inputs (" + _EXTREME_TEXT[task.extreme] + ")")
    hidden_text = ("Hidden trials also use " + " and ".join(hidden) + ": never hard-code a size or a block that "
                   "only covers the sizes above.\n") if hidden else ""
    speed = ("Speed is measured with CUDA events on this GPU." if backend == "cuda" else
             "This host has no GPU: Triton kernels run under the Triton interpreter and speed is MODELED for an "
             "H100 (roofline estimate from the bytes your kernels move, their FLOPs and launch count; fewer launches "
             "and fewer bytes win). PyTorch code is modeled the same way, op by op." + _priced_sizes(task))
    return f"""Task: {task.id} ({task.difficulty}) — {task.title}

{task.description.strip()}

Write a Python module that defines `class ModelNew(torch.nn.Module)` with the same constructor and
`forward` signature as the reference `Model` below, computing the same result ({task.dtype},
atol={task.atol:g}, rtol={task.rtol:g}) faster. Use Triton kernels (`import triton`,
`import triton.language as tl`) or plain PyTorch. Keep it device-agnostic: allocate outputs with
`torch.empty_like`/`torch.empty(..., device=x.device)`, never hard-code "cuda". Sizes are not
multiples of block sizes: mask loads and stores. Example problem sizes: {shape_text}; the harness
picks the sizes and the inputs, with a secret seed.
{hidden_text}Triton is judged as on an H100: tl.dot of fp32 operands defaults to TF32 (where the
tolerance needs fp32, pass input_precision="tf32x3": three TF32 tensor-core passes, which pay with
large tiles where the grid still fills the GPU (128x128 on 8 warps; with 64x64 tiles an H100 ran it slower
than "ieee"), or "ieee": the CUDA cores; bf16/fp16 operands multiply exactly and accumulate in fp32), and a launch's
programs run in any order, so two programs must never store different values to the same element.

Not allowed (scored 0): calling or importing the reference Model, try/except fallbacks (or anything
else that swallows an exception), defining a kernel you never launch, threads, processes, files,
sockets, monkey-patching torch/time/triton, tensor subclasses, caching results between calls,
writing into the inputs.

{speed}
You have {max_turns} submissions; each returns feedback (correctness per trial, the first
mismatches, speedup, flags). Score: compiled 0.10 + trials 0.30 + correct 0.10 + speed up to 0.50.

Reference implementation:
```python
{task.reference_code.strip()}
```
"""


def starting_template(task: Task) -> str:
    """A runnable starting point for the playground's editor: the reference, renamed."""
    code = task.reference_code
    return code.replace("class Model(", "class ModelNew(").replace("super(Model, self)", "super(ModelNew, self)")
