"""What the rule families share: the parsed source, and helpers that find kernels, launches and forward."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

# Calls that allocate, view or move data: they are not "the reference's computation".
PLUMBING = {
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "tensor", "arange",
    "view", "reshape", "contiguous", "size", "numel", "dim", "stride", "to", "float", "half", "t", "transpose",
    "permute", "expand", "unsqueeze", "squeeze", "flatten", "chunk", "split", "cat", "stack", "clone", "detach",
    "randn", "rand", "Parameter", "Linear", "Module", "super", "__init__", "cdiv", "next_power_of_2",
    "is_contiguous", "new_empty", "new_zeros", "device", "type", "item", "len", "range", "min", "max", "int",
    "tril", "triu", "ones_like", "masked_fill", "narrow", "select", "view_as", "expand_as", "repeat_interleave",
}
HALF = re.compile(r"\b(float16\b|bfloat16\b|half\s*\(|float8\w*|int8\b)")
CONSTANT_CALLS = {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "empty", "empty_like",
                  "rand", "rand_like", "randn", "randn_like"}


@dataclass
class Source:
    text: str
    tree: Optional[ast.Module]
    reference_ops: set[str] = field(default_factory=set)   # compute calls of the reference's forward
    reference_half: bool = False
    reference: str = ""        # the reference's source: what it does itself is never a hack
    parse_error: str = ""      # why the source did not parse (the AST rules then see no tree)

    def lines(self, pattern: re.Pattern) -> list[tuple[int, str]]:
        """Lines of code (strings and comments blanked) where the pattern matches."""
        return [(i, m.group(0).strip()) for i, line in enumerate(code_only(self.text).splitlines(), 1)
                for m in [pattern.search(line)] if m]


def code_only(text: str) -> str:
    """The source with comments and string literals blanked, line numbers kept (raw text if it does not tokenize)."""
    lines = text.splitlines()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                (r0, c0), (r1, c1) = tok.start, tok.end
                for r in range(r0, r1 + 1):
                    line = lines[r - 1]
                    a, b = (c0 if r == r0 else 0), (c1 if r == r1 else len(line))
                    lines[r - 1] = line[:a] + " " * (b - a) + line[b:]
    except (tokenize.TokenError, IndentationError, SyntaxError, IndexError):
        return text
    return "\n".join(lines)


def call_name(node: ast.Call) -> Optional[str]:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def is_jit(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(target, ast.Attribute) and target.attr in ("jit", "autotune", "heuristics")


def classes(tree: ast.Module, name: str) -> list[ast.ClassDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name]


def forward_of(tree: ast.Module, cls: str) -> Optional[ast.FunctionDef]:
    for c in classes(tree, cls):
        for n in c.body:
            if isinstance(n, ast.FunctionDef) and n.name == "forward":
                return n
    return None


def reference_ops(reference_code: str) -> set[str]:
    """The compute calls in the reference Model's forward (gelu, matmul, softmax, ...)."""
    try:
        fwd = forward_of(ast.parse(reference_code), "Model")
    except SyntaxError:
        return set()
    if fwd is None:
        return set()
    return {n for c in ast.walk(fwd) if isinstance(c, ast.Call) for n in [call_name(c)] if n and n not in PLUMBING}


def jit_kernels(tree: ast.Module) -> dict[str, int]:
    return {n.name: n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and any(is_jit(d) for d in n.decorator_list)}


def launched(tree: ast.Module) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
            v = n.func.value
            out.add(v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else "")
    return out


def mentions(node: ast.AST, names: set[str]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in names) or (isinstance(n, ast.Attribute) and n.attr in names)
               for n in ast.walk(node))


def constant_at_least(node: ast.AST, floor: int) -> bool:
    """A literal int (or a shift like 1 << 20) of at least ``floor`` anywhere in the expression."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool) \
                and n.value >= floor:
            return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.LShift) and isinstance(n.right, ast.Constant) \
                and isinstance(n.right.value, int) and 1 << min(n.right.value, 62) >= floor:
            return True
    return False



def kernel_defs(tree: Optional[ast.Module]) -> list[ast.FunctionDef]:
    """The @triton.jit (autotune, heuristics) functions."""
    return [] if tree is None else [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                                    and any(is_jit(d) for d in n.decorator_list)]


def launches(tree: Optional[ast.Module]) -> list[tuple[ast.Call, ast.FunctionDef]]:
    """Every ``kernel[grid](...)`` call of a kernel defined in the source, with that kernel."""
    kernels = {k.name: k for k in kernel_defs(tree)}
    out = []
    for n in ast.walk(tree) if tree is not None else ():
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
            v = n.func.value
            name = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else ""
            if name in kernels:
                out.append((n, kernels[name]))
    return out


def params(kernel: ast.FunctionDef) -> list[str]:
    return [a.arg for a in kernel.args.args]


def root_name(node: ast.AST) -> Optional[str]:
    """x for x, x.a.b, x[i], x.view(...)[:1] (the name an attribute, subscript or method chain hangs from)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def int_literal(node: ast.AST) -> Optional[int]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) \
        and not isinstance(node.value, bool) else None
