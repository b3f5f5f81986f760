"""Stage 1: static checks on the AST (never regex), before any candidate code runs.

A finding is a named flag plus a message that says what to change. These checks are the first
wall, not the only one: whatever slips past them meets the sandbox (sandbox.py).
"""
from __future__ import annotations

import ast
from typing import Optional

from environment.evaluation.static import runtime_features
from environment.evaluation.static.builtin_uses import builtin_value_uses
from environment.evaluation.static.rules import PARSE_LOCK
from environment.evaluation.result import StaticResult
from environment.evaluation.static.visitor import Visitor, collect_module_aliases, collect_value_aliases

MAX_SOURCE_BYTES = 256 * 1024

# Deeper trees than this would exhaust the recursion of the harness's own passes over the tree
# (this visitor, the kernel rebuild, ast.unparse): honest code stays far below it.
MAX_AST_DEPTH = 100


def _depth(tree: ast.AST) -> int:
    """Depth of the syntax tree, walked without recursion."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, level = todo.pop()
        deepest = max(deepest, level)
        todo.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _parse(source: str, filename: str = "<unknown>") -> ast.Module:
    with PARSE_LOCK:
        return ast.parse(source, filename=filename)


def _forward_arity(tree: ast.Module, class_name: str) -> Optional[tuple[int, bool]]:
    """(positional params after self, has *args) of class_name.forward, or None if absent."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return len(item.args.posonlyargs) + len(item.args.args) - 1, item.args.vararg is not None
            return (-1, False)
    return None


def check_source(source: str, reference_code: str) -> StaticResult:
    """Parse and inspect a submission. Never raises: problems become errors with a fix."""
    raw = source.encode("utf-8", errors="replace")
    if not source.strip():
        return StaticResult(ok=False, errors=["The submission is empty: send Python source that defines "
                                              "class ModelNew(torch.nn.Module)."])
    if len(raw) > MAX_SOURCE_BYTES:
        return StaticResult(ok=False, errors=[f"The submission is {len(raw)} bytes, over the {MAX_SOURCE_BYTES} "
                                              "byte limit: send only the ModelNew module, without data."])
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return StaticResult(ok=False, errors=["The submission is not valid UTF-8 text: send plain Python source."])
    try:
        tree = _parse(source, filename="submission.py")
    except (RecursionError, MemoryError):
        return StaticResult(ok=False, errors=["The submission nests expressions too deeply for the parser: split "
                                              "long chained expressions into several statements."])
    except SyntaxError as exc:
        line = (exc.text or "").rstrip()
        return StaticResult(ok=False, errors=[f"SyntaxError at line {exc.lineno}: {exc.msg}"
                                              + (f" in `{line.strip()}`" if line else "")
                                              + ". Fix the syntax; the module must import cleanly."],
                            line=exc.lineno if exc.lineno and exc.lineno > 0 else None)
    depth = _depth(tree)
    if depth > MAX_AST_DEPTH:
        return StaticResult(ok=False, errors=[f"The submission's syntax tree is {depth} levels deep, over the "
                                              f"{MAX_AST_DEPTH}-level limit every harness pass is built for: split "
                                              "long chained expressions into several statements."])
    visitor = Visitor()
    collect_module_aliases(tree, visitor)
    collect_value_aliases(tree, visitor)
    visitor.visit(tree)
    for finding in builtin_value_uses(tree, source):
        if finding not in visitor.findings:
            visitor.findings.append(finding)
    errors = [f.message for f in visitor.findings]
    unsupported = runtime_features.unsupported(tree, visitor.module_of)  # honest, unavailable here: no flag
    errors += [text for _, text in unsupported]
    flags = sorted({f.flag for f in visitor.findings})
    arity = _forward_arity(tree, "ModelNew")
    if arity is None:
        errors.append("No top-level class ModelNew found: define class ModelNew(torch.nn.Module) with the same "
                      "constructor and forward signature as the reference Model.")
    else:
        try:
            ref = _forward_arity(_parse(reference_code), "Model")
        except SyntaxError:
            ref = None
        if arity[0] == -1:
            errors.append("ModelNew has no forward method: define forward with the same arguments as Model.forward.")
        elif ref and ref[0] >= 0 and not arity[1] and arity[0] != ref[0]:
            errors.append(f"ModelNew.forward takes {arity[0]} input(s) but the reference Model.forward takes "
                          f"{ref[0]}: use the same signature.")
    flag_lines: dict[str, int] = {}
    for f in visitor.findings:
        if f.line > 0:
            flag_lines.setdefault(f.flag, f.line)
    first = visitor.findings[0].line if visitor.findings and visitor.findings[0].line > 0 else None
    first = first or next((line for line, _ in unsupported if line > 0), None)
    return StaticResult(ok=not errors, errors=errors, flags=flags, triton_kernels=visitor.kernels,
                        uses_triton=bool(visitor.kernels), line=first, flag_lines=flag_lines)
