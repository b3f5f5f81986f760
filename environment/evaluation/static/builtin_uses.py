"""Forbidden builtins used as values (stored, passed, given as defaults), resolved with Python's own
scoping rules (symtable), not by spelling."""
from __future__ import annotations

import ast
import symtable

from environment.evaluation import flags as F
from environment.evaluation.static.rules import FORBIDDEN_CALLS, PARSE_LOCK, Finding


def builtin_value_uses(tree: ast.Module, source: str) -> list[Finding]:
    """Every use of a forbidden builtin that is not a direct call (`f = exec`, `def g(e=eval)`,
    `map(eval, ...)`), resolved with Python's own scoping rules (symtable): a parameter or variable
    that happens to be called `input` is not the builtin."""
    try:
        with PARSE_LOCK:
            top = symtable.symtable(source, "submission.py", "exec")
    except SyntaxError:
        return []
    module_bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    scopes: dict[tuple[str, str, int], set[str]] = {}

    def walk(table) -> None:
        for sym in table.get_symbols():
            name = sym.get_name()
            if name not in FORBIDDEN_CALLS or not sym.is_referenced() or name in module_bound:
                continue
            if table.get_type() == "module" or (sym.is_global() and not sym.is_local()):
                scopes.setdefault((table.get_type(), table.get_name(), table.get_lineno()), set()).add(name)
        for child in table.get_children():
            walk(child)

    walk(top)
    if not scopes:
        return []
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    found: list[Finding] = []
    seen: set[str] = set()

    def visit(node: ast.AST, scope: tuple[str, str, int]) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scopes.get(scope, ()):
            seen.add(node.id)
            if id(node) not in called:  # direct calls are reported by the call check
                found.append(Finding(F.FORBIDDEN_CALL + ":" + node.id, f"line {node.lineno}: {node.id} is used as a "
                                      "value (stored, passed or given as a default); a forbidden builtin may not "
                                      "be referred to at all", node.lineno))
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            outer = [*getattr(node, "decorator_list", []), *args.defaults, *[d for d in args.kw_defaults if d],
                     *[a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs if a.annotation],
                     *[a.annotation for a in (args.vararg, args.kwarg) if a is not None and a.annotation]]
            if getattr(node, "returns", None) is not None:
                outer.append(node.returns)
            for child in outer:
                visit(child, scope)
            inner = ("function", "lambda" if isinstance(node, ast.Lambda) else node.name, node.lineno)
            for child in (node.body if isinstance(node.body, list) else [node.body]):
                visit(child, inner)
            return
        if isinstance(node, ast.ClassDef):
            for child in [*node.decorator_list, *node.bases, *node.keywords]:
                visit(child, scope)
            for child in node.body:
                visit(child, ("class", node.name, node.lineno))
            return
        comp = {ast.ListComp: "listcomp", ast.SetComp: "setcomp", ast.DictComp: "dictcomp",
                ast.GeneratorExp: "genexpr"}.get(type(node))
        if comp:
            inner = ("function", comp, node.lineno)
            visit(node.generators[0].iter, scope)  # evaluated in the enclosing scope
            for gen in node.generators:
                for child in [gen.target, *gen.ifs] + ([] if gen is node.generators[0] else [gen.iter]):
                    visit(child, inner)
            for child in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                visit(child, inner)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(tree, ("module", "top", 0))
    missed = {name for names in scopes.values() for name in names} - seen
    for name in sorted(missed):  # a scope this walk could not match: still a use of the builtin
        found.append(Finding(F.FORBIDDEN_CALL + ":" + name, f"{name} is referred to; a forbidden builtin may not "
                              "be used at all", 0))
    return found
