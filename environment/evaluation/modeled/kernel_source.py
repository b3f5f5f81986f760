"""The part of a submission the AOT compile needs: imports of triton/math, Triton kernel
definitions and constant assignments. Everything else (ModelNew, top-level calls, other imports)
is dropped, so compiling never runs the candidate's module code."""
from __future__ import annotations

import ast

ALLOWED_IMPORTS = {"triton", "math", "typing", "functools"}
_KERNEL_DECORATORS = ("jit", "autotune", "heuristics")
_DECORATOR_CALLS = {"triton.jit", "jit", "triton.autotune", "autotune", "triton.heuristics", "heuristics",
                    "triton.Config", "Config"}
_LAMBDA_CALLS = {"triton.next_power_of_2", "triton.cdiv", "min", "max", "int"}
_CONSTANT_NODES = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Name, ast.Attribute, ast.Tuple, ast.List,
                   ast.Load, ast.operator, ast.unaryop, ast.Call, ast.keyword)


def _allowed_import(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").split(".")[0] in ALLOWED_IMPORTS
    return all(alias.name.split(".")[0] in ALLOWED_IMPORTS for alias in node.names)


def _no_dunder(tree) -> bool:
    return not any(isinstance(n, ast.Attribute) and n.attr.startswith("__") or
                   isinstance(n, ast.Name) and n.id.startswith("__") for n in ast.walk(tree))


def _only_calls(tree, allowed: set[str]) -> bool:
    return all(ast.unparse(n.func) in allowed for n in ast.walk(tree) if isinstance(n, ast.Call))


def _is_kernel(node) -> bool:
    """A Triton kernel whose definition evaluates nothing but constants: decorators call only the
    Triton decorators and triton.Config (heuristics' lambdas are never called here), defaults are
    constants, annotations are names. Anything else would run candidate code in the compiler."""
    if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
        return False
    if not all(any(w in ast.unparse(d) for w in _KERNEL_DECORATORS) for d in node.decorator_list):
        return False
    decorators_ok = all(_no_dunder(d) and _only_calls(d, _DECORATOR_CALLS | _LAMBDA_CALLS)
                        for d in node.decorator_list)
    args = node.args
    defaults_ok = all(_is_constant(d) for d in args.defaults + [d for d in args.kw_defaults if d is not None])
    annotations_ok = all(isinstance(a.annotation, (ast.Name, ast.Attribute, ast.Constant, type(None))) and
                         (a.annotation is None or _no_dunder(a.annotation))
                         for a in args.posonlyargs + args.args + args.kwonlyargs)
    return decorators_ok and defaults_ok and annotations_ok and node.returns is None


def _is_constant(value) -> bool:
    for node in ast.walk(value):
        if not isinstance(node, _CONSTANT_NODES):
            return False
        if isinstance(node, ast.Call) and not ast.unparse(node.func).endswith(("tl.constexpr", "language.constexpr")):
            return False
    return _no_dunder(value)


def kernel_source(source: str) -> str:
    """Filtered source; raises SyntaxError when the submission does not parse."""
    keep = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _allowed_import(node):
            keep.append(node)
        elif _is_kernel(node):
            keep.append(node)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets) \
                and _is_constant(node.value):
            keep.append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None \
                and _is_constant(node.value) and _is_constant(node.annotation):
            keep.append(node)
    return ast.unparse(ast.Module(body=keep, type_ignores=[])) + "\n"
