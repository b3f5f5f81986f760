"""The part of a submission the AOT compile needs: imports of triton/math, Triton kernel
definitions and constant assignments. Everything else (ModelNew, top-level calls, other imports)
is dropped, so compiling never runs the candidate's module code."""
from __future__ import annotations

import ast

ALLOWED_IMPORTS = {"triton", "math", "typing", "functools"}
_KERNEL_DECORATORS = ("jit", "autotune", "heuristics")
_CONSTANT_NODES = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Name, ast.Attribute, ast.Tuple, ast.List,
                   ast.Load, ast.operator, ast.unaryop, ast.Call, ast.keyword)


def _allowed_import(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").split(".")[0] in ALLOWED_IMPORTS
    return all(alias.name.split(".")[0] in ALLOWED_IMPORTS for alias in node.names)


def _is_kernel(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        any(word in ast.unparse(d) for word in _KERNEL_DECORATORS) for d in node.decorator_list)


def _is_constant(value) -> bool:
    for node in ast.walk(value):
        if not isinstance(node, _CONSTANT_NODES):
            return False
        if isinstance(node, ast.Call) and not ast.unparse(node.func).endswith("constexpr"):
            return False
    return True


def kernel_source(source: str) -> str:
    """Filtered source; raises SyntaxError when the submission does not parse."""
    keep = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _allowed_import(node):
            keep.append(node)
        elif _is_kernel(node):
            keep.append(node)
        elif isinstance(node, ast.Assign) and _is_constant(node.value):
            keep.append(node)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and _is_constant(node.value):
            keep.append(node)
    return ast.unparse(ast.Module(body=keep, type_ignores=[])) + "\n"
