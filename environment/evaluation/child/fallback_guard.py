"""Runtime backing of the no-fallback rule: an exception swallowed during a trial call is found.

The static check bans try/except, `contextlib.suppress` and exception-swallowing `__exit__`
methods by their spelling; this finds the swallow itself, whatever it was spelt as. Python 3.11 has
no cheap "exception raised, then handled" hook (`sys.monitoring`'s RAISE/EXCEPTION_HANDLED events
are 3.12+; `sys.settrace` fires on every Python call and would slow the Triton interpreter several
fold). So the candidate's own code is instrumented when its child compiles it: the body of every
`with` and `try` statement and of every function except Triton kernels (the JIT re-reads their
source) runs inside a guard whose `__exit__` records an exception passing out and lets it go on.
An exception that left a guarded block while the call still returned a result was swallowed by
someone: a `with` whose manager suppresses it, an `except`, a `return` in `finally`, or library
code that catches what the submission raised. Not recorded: the iteration protocol
(StopIteration, StopAsyncIteration, GeneratorExit) and, out of a function body, AttributeError
(`getattr(obj, name, default)` and `hasattr` catch it by design).

The guard lives in the module's globals under a name that is not an identifier, so source code
cannot name it; like every in-process check, a submission that defeats the static checks could
still reach it through memory, and then it is one layer among several.
"""
from __future__ import annotations

import ast
import traceback
from types import CodeType
from typing import Optional

GUARD_NAME = "kernel_env fallback guard"
_KERNEL_DECORATORS = ("jit", "autotune", "heuristics")
_PROTOCOL = (StopIteration, StopAsyncIteration, GeneratorExit)


class _Guard:
    def __init__(self, kind: str, filename: str) -> None:
        self.kind, self.filename = kind, filename

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None and RECORDER.active and not issubclass(exc_type, _PROTOCOL) and not (
                self.kind == "function" and issubclass(exc_type, AttributeError)):
            RECORDER.note(exc, tb, self.filename)
        return False  # never suppress


class _Recorder:
    def __init__(self) -> None:
        self.active = False
        self.seen: list[str] = []

    def begin(self) -> None:
        self.active, self.seen = True, []

    def end(self) -> list[str]:
        self.active = False
        return list(dict.fromkeys(self.seen))[:5]

    def note(self, exc: BaseException, tb, filename: str) -> None:
        frames = [f for f in traceback.extract_tb(tb) if f.filename == filename]
        where = f" at line {frames[-1].lineno}" if frames else ""
        text = str(exc).splitlines()[0][:200] if str(exc) else ""
        self.seen.append(f"{type(exc).__name__}{': ' + text if text else ''}{where}")


RECORDER = _Recorder()


def _is_kernel(node: ast.AST) -> bool:
    for dec in getattr(node, "decorator_list", ()):
        target = dec.func if isinstance(dec, ast.Call) else dec
        if ast.unparse(target).split(".")[-1] in _KERNEL_DECORATORS:
            return True
    return False


class _Instrument(ast.NodeTransformer):
    def _guarded(self, body: list[ast.stmt], kind: str) -> list[ast.stmt]:
        wrapper = ast.With(items=[ast.withitem(context_expr=ast.Name(id=f"{GUARD_NAME}:{kind}", ctx=ast.Load()))],
                           body=body)
        return [ast.copy_location(wrapper, body[0])]

    def _function(self, node):
        if _is_kernel(node):
            return node  # the JIT compiles the original source; never touch a kernel
        self.generic_visit(node)
        body = node.body
        doc = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                                                  ast.Constant) else []
        rest = body[len(doc):]
        if rest:
            node.body = doc + self._guarded(rest, "function")
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def _block(self, node):
        self.generic_visit(node)
        node.body = self._guarded(node.body, "block")
        return node

    visit_With = visit_AsyncWith = visit_Try = visit_TryStar = _block


def compile_guarded(source: str, filename: str) -> tuple[CodeType, dict[str, _Guard]]:
    """Compile the submission with its blocks guarded; returns the code and the globals it needs."""
    tree = _Instrument().visit(ast.parse(source, filename=filename))
    ast.fix_missing_locations(tree)
    guards = {f"{GUARD_NAME}:{kind}": _Guard(kind, filename) for kind in ("function", "block")}
    return compile(tree, filename, "exec"), guards


def swallowed_message(seen: list[str], where: Optional[str] = "forward") -> str:
    return (f"an exception ({seen[0]}) was raised inside {where} and swallowed, and a result was returned "
            "anyway: that is a fallback in disguise (try/except, contextlib.suppress or an __exit__ that "
            "returns True). Let errors surface and fix them")
