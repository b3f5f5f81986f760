"""Kernel languages other than Triton and PyTorch, told apart before anything runs.

KernelBench's default backend is CUDA C++ through ``torch.utils.cpp_extension.load_inline``;
others write CuTe (CUTLASS's Python DSL) or TileLang. A CPU host has neither a CUDA compiler nor
a GPU, so such a submission cannot be evaluated here. The harness does not run it and says why
(outcome ``submission_failed``, flag ``unsupported_language``, the message names the host's
languages and the fix): the turn is spent and it earns nothing, as on this host it is not a kernel
the environment can score. It is deliberately not a ``harness_error``: that outcome means the
environment failed and carries a null reward and a free turn, and any submission could claim it by
naming ``cupy`` in code that never runs.
"""
from __future__ import annotations

import ast
from typing import Optional

# module prefix -> the language it means
FOREIGN_MODULES = {
    "torch.utils.cpp_extension": "CUDA C++",
    "pycuda": "CUDA C++",
    "cupy": "CUDA C++",
    "cutlass": "CuTe",
    "cuda.cooperative": "CUDA C++",
    "tilelang": "TileLang",
    "thunderkittens": "ThunderKittens",
}
FOREIGN_CALLS = {"load_inline": "CUDA C++", "cpp_extension": "CUDA C++"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _language(module: str) -> Optional[str]:
    for prefix, language in FOREIGN_MODULES.items():
        if module == prefix or module.startswith(prefix + "."):
            return language
    return None


def foreign_language(source: str) -> Optional[tuple[str, str]]:
    """(language, what in the source says so) for a submission written for another backend."""
    words = [m.split(".")[0] for m in FOREIGN_MODULES] + ["cpp_extension"] + list(FOREIGN_CALLS)
    if not any(word in source for word in words):
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError, ValueError):  # the static checks report these
        return None
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Attribute):
            names = [_dotted(node)]
        for name in names:
            language = _language(name) or next((lang for call, lang in FOREIGN_CALLS.items()
                                                if name.split(".")[-1] == call), None)
            if language:
                return language, name
    return None


def unsupported_here(source: str, backend: str) -> Optional[str]:
    """The message for a submission this host cannot run, or None."""
    if backend == "cuda":
        return None
    found = foreign_language(source)
    if found is None:
        return None
    language, where = found
    return (f"this host runs Triton and PyTorch; {language} needs a CUDA host (the submission uses `{where}`). "
            "It was not run and earns nothing here (this is not a judgement of the code): rewrite ModelNew with "
            "Triton kernels or PyTorch ops, or send the same code to a server on a CUDA host.")
