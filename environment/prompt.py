"""The task text an agent sees (KernelObservation.prompt)."""
from __future__ import annotations

from environment.tasks.task import Task


def task_prompt(task: Task, backend: str, max_turns: int) -> str:
    shapes = task.shapes(backend)
    shape_text = ", ".join("{" + ", ".join(f"{k}={v}" for k, v in s.items()) + "}" for s in shapes[:3])
    speed = ("Speed is measured with CUDA events on this GPU." if backend == "cuda" else
             "This host has no GPU: Triton kernels run under the Triton interpreter and speed is MODELED for an "
             "H100 (roofline estimate from the bytes your kernels move, their FLOPs and launch count; fewer launches "
             "and fewer bytes win). PyTorch code is modeled the same way, op by op.")
    return f"""Task: {task.id} ({task.difficulty}) — {task.title}

{task.description.strip()}

Write a Python module that defines `class ModelNew(torch.nn.Module)` with the same constructor and
`forward` signature as the reference `Model` below, computing the same result ({task.dtype},
atol={task.atol:g}, rtol={task.rtol:g}) faster. Use Triton kernels (`import triton`,
`import triton.language as tl`) or plain PyTorch. Keep it device-agnostic: allocate outputs with
`torch.empty_like`/`torch.empty(..., device=x.device)`, never hard-code "cuda". Sizes are not
multiples of block sizes: mask loads and stores. Example problem sizes: {shape_text}; the harness
picks the sizes and the inputs, with a secret seed.

Not allowed (scored 0): calling or importing the reference Model, try/except fallbacks, defining a
kernel you never launch, threads, processes, files, sockets, monkey-patching torch/time/triton,
tensor subclasses, caching results between calls, writing into the inputs.

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
