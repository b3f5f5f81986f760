"""The one try/except stage 1 admits: the version guard copied between Triton releases.

    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
        HAS_TENSOR_DESCRIPTOR = True
    except ImportError:
        HAS_TENSOR_DESCRIPTOR = False

It chooses what is importable, never what runs after a failing kernel: it stands at module level (it runs once,
when the module loads, before any trial; a swallow during a trial call is still found at runtime by
child/fallback_guard.py), its body holds only imports and literal bindings, its handlers catch only ImportError or
ModuleNotFoundError and hold only imports, `pass` and literal bindings, and it has no `else` and no `finally`. The
imports inside are checked like every other import. What it can switch (a flag, a name bound to another import)
is what the file could have written without it: the harness prices and checks whatever path runs (red team a210,
a211)."""
from __future__ import annotations

import ast

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _literal_binding(stmt: ast.stmt) -> bool:
    """NAME = <literal> (one plain-name target, a constant value: True, None, 3, "x")."""
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Constant))


def _plain(body: list[ast.stmt], passes: bool) -> bool:
    return all(isinstance(s, (ast.Import, ast.ImportFrom)) or _literal_binding(s) or (passes and isinstance(s, ast.Pass))
               for s in body)


def _catches_import_errors(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return bool(names) and all(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names)


def is_import_guard(node: ast.AST) -> bool:
    """The shape above, wherever it stands (the caller decides where it may)."""
    return (isinstance(node, ast.Try) and not node.orelse and not node.finalbody and bool(node.handlers)
            and _plain(node.body, passes=False) and any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body)
            and all(h.type is not None and _catches_import_errors(h) and _plain(h.body, passes=True)
                    for h in node.handlers))


def module_level_guards(tree: ast.Module) -> set[int]:
    """id() of the import guards among the module's top-level statements."""
    return {id(stmt) for stmt in tree.body if is_import_guard(stmt)}
