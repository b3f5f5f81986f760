"""Runtime features the sandbox does not offer, refused by name before anything runs.

``torch.compile`` (TorchDynamo + Inductor) generates C++/Triton code, runs a C compiler and compile
workers; ``torch.set_num_threads`` and ``torch.set_num_interop_threads`` ask for worker threads. A child
on a CPU host may create neither threads nor processes, so these ended as a seccomp kill (scored as the
hack ``sandbox_violation``) or as "exited with code 1" with no cause. They are honest idioms, so they are
refused as a failure to run (outcome ``submission_failed``, no flag, no hack): a static error naming the
call, the reason and the fix, the same on every host. The child also replaces these functions with ones
that raise the same message before the sandbox closes, for a call the static pass cannot see (reached
through ``getattr`` or ``nn.Module.compile``): the submission then fails to load or run, with the message.
Nothing here runs code unsandboxed or lets a compiled wrapper stand in for the work.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Optional

_COMPILE = ("{call} needs a C compiler and worker threads the sandbox does not give; write the kernel in Triton "
            "or plain PyTorch")
_THREADS = ("{call} asks for worker threads the sandbox does not give (each evaluation runs one thread); remove "
            "the call")
# dotted name (a module or a function) -> why it cannot run here
REFUSED = {
    "torch.compile": _COMPILE, "torch._dynamo": _COMPILE, "torch._inductor": _COMPILE,
    "torch.set_num_threads": _THREADS, "torch.set_num_interop_threads": _THREADS,
}
# PyTorch's matmul precision switches: a True/False assigned to one is the attribute spelling of
# torch.set_float32_matmul_precision (allowed), not a patch of the library. The GPU's own check judges the
# precision on CUDA hosts; on CPU hosts they change nothing the model charges.
PRECISION_SETTINGS = frozenset({
    "torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
})
# PyTorch 2.9's spelling of the same switches: a string assigned to one (ieee, tf32 or none). Only the CUDA and
# cuDNN ones: the oneDNN (mkldnn) and global ones turn CPU matmuls to bf16, and stay a patch of the library.
FP32_PRECISION_SETTINGS = frozenset({
    "torch.backends.cuda.matmul.fp32_precision", "torch.backends.cudnn.fp32_precision",
    "torch.backends.cudnn.conv.fp32_precision", "torch.backends.cudnn.rnn.fp32_precision",
})
FP32_PRECISIONS = frozenset({"ieee", "tf32", "none"})
# what the child replaces (attributes of the torch module), by the name in REFUSED
GUARDED = ("compile", "set_num_threads", "set_num_interop_threads")


def refused(name: Optional[str]) -> Optional[str]:
    """The REFUSED entry `name` (a dotted name) is or lies under, or None."""
    for prefix in REFUSED:
        if name and (name == prefix or name.startswith(prefix + ".")):
            return prefix
    return None


def precision_setting(node: ast.AST, target: ast.AST, module: Optional[str]) -> bool:
    """`node` is `<module>.<switch> = True/False` for one of PyTorch's matmul precision switches (one target of a
    chained `a.allow_tf32 = b.allow_tf32 = False`, or annotated: each target is checked on its own)."""
    value = getattr(node, "value", None)
    if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(target, ast.Attribute)
            and isinstance(value, ast.Constant)):
        return False
    name = f"{module}.{target.attr}"
    return (name in PRECISION_SETTINGS and type(value.value) is bool) or (
        name in FP32_PRECISION_SETTINGS and value.value in FP32_PRECISIONS)


def message(prefix: str) -> str:
    return REFUSED[prefix].format(call=f"{prefix}()" if prefix.rsplit(".", 1)[-1][0] != "_" else prefix)


def unsupported(tree: ast.Module, module_of: Callable[[ast.AST], Optional[str]]) -> list[tuple[int, str]]:
    """(line, message) for the first use of each refused feature: imported, called, decorated with or named."""
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, (ast.Attribute, ast.Name)):
            names = [module_of(node) or ""]
        for name in names:
            prefix = refused(name)
            if prefix and prefix not in found:
                found[prefix] = getattr(node, "lineno", 0)
    return sorted((line, f"line {line}: {message(prefix)}") for prefix, line in found.items())


def install_guards(torch: Any, cpu_host: bool = False) -> None:
    """Replace the refused torch functions with ones that raise the static message (the child, before the
    submission loads: on any host, so a file gets the same verdict everywhere). On a CPU host also
    torch.set_float32_matmul_precision: it keeps CPU matmuls in full fp32, as the other precision switches leave
    them (the sm_90 precision is the GPU's to judge). "medium" turns them to bf16 on a CPU with bf16 units, in the
    candidate's process only: its outputs then differ from the trusted replay of its own trace, which is judged
    bit for bit (verdict.untraced_difference), and an honest setting would score as untraced work."""
    for attr in GUARDED:
        def guard(*_args: Any, _name: str = f"torch.{attr}", **_kwargs: Any) -> Any:
            raise RuntimeError(message(_name))
        setattr(torch, attr, guard)
    if cpu_host:
        asked = [torch.get_float32_matmul_precision()]
        original = torch.set_float32_matmul_precision

        def set_float32_matmul_precision(precision: str) -> None:
            original(precision)   # validates the argument as PyTorch does
            original("highest")
            asked[0] = precision
        torch.set_float32_matmul_precision = set_float32_matmul_precision
        torch.get_float32_matmul_precision = lambda: asked[0]
