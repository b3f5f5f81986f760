"""Rebuild a submission's Triton kernels from its syntax tree, without running any of its code.

The trusted side (the replayer and the sm_90 compile worker) needs the submission's kernels, but
importing the submission would run its module-level code. Instead this module *generates* a new
module from the parse tree:

- imports of `triton`, `triton.language` (and its submodules) and `math` are kept; others dropped;
- module-level constants are evaluated by a small interpreter of literals, arithmetic, `math.*`,
  `tl.constexpr(...)`, `triton.cdiv`/`next_power_of_2` and earlier constants, and written back as
  literals (nothing is executed: `BLOCK = tl.constexpr(math.ceil(1024 / 3))` becomes
  `BLOCK = tl.constexpr(342)`);
- every module-level function decorated with a Triton `jit` (possibly under `autotune` or
  `heuristics`) is kept with its decorators replaced by the harness's own `@triton.jit`: the
  launch records carry the configuration autotune or heuristics chose, so neither is needed;
- kernel bodies are checked: they may use their own locals, the constants, other rebuilt kernels,
  `triton.language` (and `math`) members and a few builtins; no dunder names, no attribute of a
  value that is not part of a Triton tensor or type (the interpreter's numpy handle is out of reach).

The result is the same text for the same submission (deterministic), so it identifies the kernels
the replayer ran and the sm_90 compiler accepted.
"""
from __future__ import annotations

import ast
import hashlib
import math
import operator
from dataclasses import dataclass, field
from typing import Any

from environment.evaluation.replay.body_check import _MATH_FUNCS, Unrebuildable, _BodyCheck, _is_module  # noqa: F401 (Unrebuildable re-exported)

_HOST_HELPERS = {"cdiv": lambda a, b: -(-a // b), "next_power_of_2": lambda n: 1 << (int(n) - 1).bit_length() if n > 1 else 1}
_BUILTIN_CALLS = {"int": int, "float": float, "bool": bool, "min": min, "max": max, "abs": abs, "round": round}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
MAX_INT_BITS = 64


@dataclass(frozen=True)
class _Constexpr:
    value: Any


@dataclass(frozen=True)
class _DType:
    name: str


@dataclass
class Rebuilt:
    """The generated module: its source, the kernels it defines, and why others were left out."""
    source: str
    kernels: list[str]
    refused: dict[str, str] = field(default_factory=dict)   # kernel name -> reason

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def _tl_members() -> set[str]:
    import triton.language as tl
    names = set()
    for cls in (tl.tensor, tl.dtype, tl.pointer_type, tl.block_type, tl.constexpr, tl.tuple):
        names.update(n for n in dir(cls) if not n.startswith("_"))
    return names | {"dtype", "shape", "type", "numel", "element_ty", "value", "T"}


class _Constants:
    """Evaluates constant expressions of the module; never calls submission code."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.modules: dict[str, str] = {}        # alias -> module name (triton, triton.language..., math)
        self.host_names: dict[str, str] = {}     # alias -> triton attribute (jit, cdiv, Config, ...)

    def _module_attr(self, node: ast.AST) -> str | None:
        """Dotted name of an attribute chain rooted at an imported module, e.g. 'triton.language.constexpr'."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.modules:
            return ".".join([self.modules[node.id], *reversed(parts)])
        if isinstance(node, ast.Name) and node.id in self.host_names:
            return ".".join(["triton", self.host_names[node.id], *reversed(parts)])
        return None

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str, type(None))):
            if isinstance(node.value, str) and len(node.value) > 64:
                raise Unrebuildable("string constants longer than 64 characters are not kept")
            return self._check(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.values:
                return self.values[node.id]
            raise Unrebuildable(f"{node.id} is not a constant the harness can evaluate")
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.eval(e) for e in node.elts)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            operand = self._plain(self.eval(node.operand))
            if not isinstance(operand, (int, float)):
                raise Unrebuildable("arithmetic in constants is on numbers only")
            return self._check(_UNARY[type(node.op)](operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = self._plain(self.eval(node.left)), self._plain(self.eval(node.right))
            if not all(isinstance(v, (int, float)) for v in (left, right)):
                raise Unrebuildable("arithmetic in constants is on numbers only")
            if isinstance(node.op, ast.Pow) and isinstance(right, int) and abs(right) > MAX_INT_BITS:
                raise Unrebuildable("exponent too large for a constant")
            if isinstance(node.op, ast.LShift) and isinstance(right, int) and right > MAX_INT_BITS:
                raise Unrebuildable("shift too large for a constant")
            try:
                return self._check(_BINOPS[type(node.op)](left, right))
            except (ArithmeticError, TypeError, ValueError) as exc:
                raise Unrebuildable(f"constant expression fails: {exc}") from None
        if isinstance(node, ast.IfExp):
            return self.eval(node.body) if self._plain(self.eval(node.test)) else self.eval(node.orelse)
        if isinstance(node, ast.Attribute):
            dotted = self._module_attr(node)
            if dotted and dotted.startswith("math.") and dotted[5:] in ("pi", "e", "tau", "inf"):
                return getattr(math, dotted[5:])
            if dotted and dotted.startswith("triton.language.") and dotted.count(".") == 2:
                import triton.language as tl
                value = getattr(tl, dotted.rsplit(".", 1)[1], None)
                if isinstance(value, tl.dtype):
                    return _DType(value.name)
            raise Unrebuildable(f"{ast.unparse(node)} is not a constant the harness can evaluate")
        if isinstance(node, ast.Call) and not any(isinstance(k.value, ast.Starred) for k in node.keywords):
            return self._call(node)
        raise Unrebuildable(f"`{ast.unparse(node)[:60]}` is not a constant expression the harness can evaluate")

    def _call(self, node: ast.Call) -> Any:
        args = [self._plain(self.eval(a)) for a in node.args]
        if node.keywords:
            raise Unrebuildable("keyword arguments in constant expressions are not supported")
        dotted = self._module_attr(node.func)
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if dotted in ("triton.language.constexpr", "triton.language.core.constexpr") and len(args) == 1:
            return _Constexpr(args[0])
        if dotted and dotted.startswith("math.") and dotted[5:] in _MATH_FUNCS:
            fn = getattr(math, dotted[5:])
        elif dotted in ("triton.cdiv", "triton.next_power_of_2"):
            fn = _HOST_HELPERS[dotted.split(".")[1]]
        elif name in _BUILTIN_CALLS and name not in self.values:
            fn = _BUILTIN_CALLS[name]
        else:
            raise Unrebuildable(f"`{ast.unparse(node.func)}` cannot be called in a constant the harness evaluates")
        try:
            return self._check(fn(*args))
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise Unrebuildable(f"constant expression fails: {exc}") from None

    @staticmethod
    def _plain(value: Any) -> Any:
        return value.value if isinstance(value, _Constexpr) else value

    @staticmethod
    def _check(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
            raise Unrebuildable("integer constant too large")
        return value


def _literal(value: Any) -> str:
    if isinstance(value, _Constexpr):
        return f"_kp_tl.constexpr({_literal(value.value)})"
    if isinstance(value, _DType):
        return f"_kp_tl.core.dtype({value.name!r})"
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


def _is_kernel(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
        return False
    innermost = node.decorator_list[-1]
    target = innermost.func if isinstance(innermost, ast.Call) else innermost
    return ast.unparse(target).split(".")[-1] == "jit"


def rebuild(source: str) -> Rebuilt:
    """Generate the kernel module of a submission (raises SyntaxError when it does not parse)."""
    tree = ast.parse(source)
    consts = _Constants()
    consts.modules["tl"] = "triton.language"   # kernels' constexpr annotations are written tl.constexpr
    header = ["import triton as _kp_triton", "import triton.language as _kp_tl", "import triton.language as tl"]
    kernels: dict[str, ast.FunctionDef] = {}
    counts: dict[str, int] = {}
    statements: list[str] = []
    refused: dict[str, str] = {}
    for node in tree.body:
        for name in _bound_names(node):
            counts[name] = counts.get(name, 0) + 1
        if "tl" in _bound_names(node) and not _kernel_name_is(node, "tl"):
            continue  # `tl` stays triton.language (a submission that rebinds it keeps its own meaning there)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            statements.extend(_imports(node, consts))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            name = targets[0].id
            try:
                value = consts.eval(node.value)
                if isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation).endswith("constexpr") \
                        and not isinstance(value, _Constexpr):
                    value = _Constexpr(value)
            except Unrebuildable:
                consts.values.pop(name, None)
                continue
            consts.values[name] = value
            statements.append(f"{name} = {_literal(value)}")
        elif _is_kernel(node):
            kernels[node.name] = node
    # a name bound more than once at module level (a tuple target, a loop, an import, a second
    # assignment) has no single value the harness could know: it is no constant
    for name in [n for n, c in counts.items() if c > 1]:
        consts.values.pop(name, None)
    statements = [st for st in statements if not _assigns_dropped(st, consts)]
    members = _tl_members()
    kept: list[str] = []
    for name, fn in kernels.items():
        try:
            if counts.get(name, 0) > 1:
                raise Unrebuildable(f"{name} is bound more than once at module level")
            _BodyCheck(fn, consts, set(kernels), members).visit(ast.Module(body=fn.body, type_ignores=[]))
            statements.append(_kernel_text(fn, consts))
            kept.append(name)
        except Unrebuildable as exc:
            refused[name] = str(exc)
    # a kernel that calls a refused kernel cannot run either
    changed = True
    while changed:
        changed = False
        for name in list(kept):
            calls = {n.id for n in ast.walk(kernels[name]) if isinstance(n, ast.Name)} & set(refused)
            if calls:
                kept.remove(name)
                refused[name] = f"it calls {sorted(calls)[0]}, which cannot be rebuilt ({refused[sorted(calls)[0]]})"
                changed = True
    statements = [s for s in statements if not _defines_refused(s, refused)]
    return Rebuilt(source="\n".join(header + statements) + "\n", kernels=kept, refused=refused)


def _assigns_dropped(text: str, consts: "_Constants") -> bool:
    """A generated `NAME = literal` line whose name is no longer a constant."""
    head = text.split(" = ", 1)[0]
    return " = " in text and head.isidentifier() and not text.startswith("@") and head not in consts.values


def _kernel_name_is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name == name


def _defines_refused(text: str, refused: dict[str, str]) -> bool:
    return any(text.startswith(f"@_kp_triton.jit\ndef {name}(") for name in refused)


def _bound_names(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            targets.append(sub.id)
    return targets


def _imports(node: ast.AST, consts: _Constants) -> list[str]:
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            if name == "math" or name == "triton" or name.startswith("triton.language"):
                if alias.asname:
                    consts.modules[alias.asname] = name
                    out.append(f"import {name} as {alias.asname}")
                else:
                    consts.modules[name.split(".")[0]] = name.split(".")[0]
                    out.append(f"import {name}")
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        for alias in node.names:
            bound = alias.asname or alias.name
            full = f"{node.module}.{alias.name}"
            if node.module == "triton" and alias.name == "language" or full.startswith("triton.language.") \
                    and _is_module(full):
                consts.modules[bound] = full
                out.append(f"import {full} as {bound}")
            elif node.module == "triton" and alias.name in ("jit", "cdiv", "next_power_of_2", "autotune",
                                                             "heuristics", "Config"):
                consts.host_names[bound] = alias.name
    return out


def _kernel_text(fn: ast.FunctionDef, consts: _Constants) -> str:
    """The kernel with `@_kp_triton.jit` as its only decorator, defaults as literals, annotations
    kept only where they say constexpr."""
    args = fn.args
    if args.vararg or args.kwarg:
        raise Unrebuildable("*args/**kwargs are not supported in a Triton kernel")
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        if a.annotation is None:
            continue
        text = a.annotation.value if isinstance(a.annotation, ast.Constant) else ast.unparse(a.annotation)
        # the interpreter compiles kernels under `from __future__ import annotations` and reads the
        # annotation's text: it must say tl.constexpr (`tl` is always triton.language here)
        a.annotation = ast.parse("tl.constexpr", mode="eval").body if str(text).endswith("constexpr") else None
    defaults = []
    for d in args.defaults:
        defaults.append(ast.parse(_literal(consts.eval(d)), mode="eval").body)
    args.defaults = defaults
    args.kw_defaults = [None if d is None else ast.parse(_literal(consts.eval(d)), mode="eval").body
                        for d in args.kw_defaults]
    clean = ast.FunctionDef(name=fn.name, args=args, body=fn.body, decorator_list=[], returns=None,
                            type_comment=None, lineno=fn.lineno)
    return "@_kp_triton.jit\n" + ast.unparse(ast.fix_missing_locations(clean))
