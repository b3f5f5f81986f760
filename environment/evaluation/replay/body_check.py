"""What a Triton kernel body may reference when rebuild.py regenerates it (no submission code runs): its
locals, constants the harness evaluated, Triton's own modules and types, other @triton.jit functions."""
from __future__ import annotations

import ast
from typing import Any

_TRITON_ROOTS = ("triton.language",)
_MATH_FUNCS = {"sqrt", "log", "log2", "log10", "exp", "exp2", "ceil", "floor", "erf", "tanh", "cos", "sin",
               "pow", "isqrt", "fabs", "trunc", "gcd", "log1p", "expm1", "atan", "prod"}
_BODY_BUILTINS = {"range", "min", "max", "len", "int", "float", "bool", "abs", "tuple", "isinstance", "print",
                  "True", "False", "None", "zip", "enumerate", "list"}
_FORBIDDEN_BODY_NODES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global,
                         ast.Nonlocal, ast.Import, ast.ImportFrom, ast.Yield, ast.YieldFrom, ast.Await,
                         ast.Try, ast.With, ast.AsyncWith, ast.Delete, ast.Starred, ast.JoinedStr)


class Unrebuildable(ValueError):
    """A kernel (or a constant it needs) cannot be rebuilt without running submission code."""


class _BodyCheck(ast.NodeVisitor):
    """What a kernel body may reference (see the module docstring)."""

    def __init__(self, fn: ast.FunctionDef, consts: Any, kernels: set[str], members: set[str]):
        self.consts, self.kernels, self.members = consts, kernels, members
        args = fn.args
        self.locals = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.locals.add(node.id)

    def fail(self, node: ast.AST, why: str) -> None:
        raise Unrebuildable(f"line {getattr(node, 'lineno', '?')}: {why}")

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, _FORBIDDEN_BODY_NODES):
            self.fail(node, f"{type(node).__name__} is not allowed in a kernel body")
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id.startswith("__"):
            self.fail(node, f"dunder name {node.id}")
        if isinstance(node.ctx, ast.Load) and node.id not in self.locals:
            if not (node.id in self.consts.values or node.id in self.consts.modules or node.id in self.kernels
                    or node.id in _BODY_BUILTINS):
                self.fail(node, f"`{node.id}` is neither a local, a constant the harness can evaluate, a Triton "
                                "module nor another @triton.jit function")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.fail(node, f"private attribute .{node.attr}")
        dotted = self.consts._module_attr(node)
        if dotted is not None:
            self._check_module_path(node, dotted)
            return  # the whole chain is resolved against the harness's own modules
        if node.attr not in self.members:
            self.fail(node, f".{node.attr} is not an attribute of a Triton tensor or type")
        self.visit(node.value)

    def _check_module_path(self, node: ast.AST, dotted: str) -> None:
        import importlib
        root, *rest = dotted.split(".")
        if root == "math":
            if len(rest) != 1 or not (rest[0] in _MATH_FUNCS or rest[0] in ("pi", "e", "inf", "tau")):
                self.fail(node, f"{dotted} is not an allowed math function")
            return
        obj: Any = importlib.import_module(root)
        for i, part in enumerate(rest):
            path = ".".join([root, *rest[: i + 1]])
            parent, obj = obj, getattr(obj, part, None)
            if obj is None and type(parent).__name__ == "module" and _is_module(path):
                obj = importlib.import_module(path)  # a submodule not yet imported (triton.language.extra.*)
            if obj is None:
                self.fail(node, f"{path} does not exist in this Triton")
        if not (_home(obj).startswith(_TRITON_ROOTS) or _is_triton_value(obj)):
            self.fail(node, f"{dotted} is not part of triton.language")


def _home(obj: Any) -> str:
    """The module an object belongs to: a module's own name, a function's or class's __module__, a
    @jit function's wrapped function's, an instance's class's."""
    if type(obj).__name__ == "module":
        return obj.__name__
    inner = getattr(obj, "fn", None)
    if inner is not None and type(obj).__module__.startswith("triton.runtime"):
        return str(getattr(inner, "__module__", ""))
    home = getattr(obj, "__module__", None) if isinstance(obj, type) or callable(obj) else None
    return str(home if isinstance(home, str) else type(obj).__module__)


def _is_triton_value(obj: Any) -> bool:
    import triton.language as tl
    return isinstance(obj, (tl.dtype, tl.constexpr, int, float, bool))


def _is_module(dotted: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False
