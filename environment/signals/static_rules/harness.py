"""Rules on code aimed at the harness rather than the task: other runtimes and raw assembly, host
libraries inside kernel bodies, words that imitate the environment's own failures, sizes and depths past
what the harness's parsers, frames and headers take, fixed-count repetition, module constants rebound or
computed by the submission's own functions."""
from __future__ import annotations

import ast
import builtins
import re

from environment.signals.static_rules.common import (Source, call_name, classes, int_literal, is_jit, kernel_defs,
                                                     mentions)

FOREIGN = re.compile(r"\b(cupy|numba|pycuda|jax|tensorflow|cpp_extension|load_inline|cuda\.core|tilelang|"
                     r"inline_asm\w*|asm_volatile)\b")
PRIVATE_OP = re.compile(r"\b(torch|F|functional|nn)\.(_[a-z]\w*)|\baten\.\w+")
HOST_IN_KERNEL = {"np", "numpy", "torch", "os", "sys", "random", "builtins", "print"}
ERROR_NAMES = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
               and issubclass(getattr(builtins, n), BaseException)}
LONG_NAME = 64         # characters in one identifier
LONG_LITERAL = 2000    # characters in one string constant
DEEP = 40              # nesting of one expression
CHAIN = 8              # module constants each made from the one before
REPEAT = 32            # host loop over a count fixed in the source


def foreign_runtime(src: Source) -> list[tuple[int, str]]:
    """Another GPU runtime (cupy, numba, a C++ extension) or raw inline assembly, even in dead code, and host
    libraries (numpy, torch, os) called inside a kernel body: code the harness does not evaluate or count,
    or that only the GPU compiler lowers."""
    hits = [(i, f"names {m}") for i, m in src.lines(FOREIGN)]
    for k in kernel_defs(src.tree):
        body = ast.Module(body=k.body, type_ignores=[])
        hits += [(n.lineno, f"kernel {k.name} uses host {n.id}") for n in ast.walk(body)
                 if isinstance(n, ast.Name) and n.id in HOST_IN_KERNEL]
    return hits


def private_library_op(src: Source) -> list[tuple[int, str]]:
    """Private or raw library entry points (torch._addmm_activation, torch._dynamo, aten.* by name): ops the
    documented API does not offer, whose cost or behaviour the harness may not know (a fused op without a
    FLOP formula); the public ops do the same work. Quiet on what the reference itself calls."""
    return [(i, f"calls a private library entry point ({m})") for i, m in src.lines(PRIVATE_OP)
            if m not in src.reference]


def _depth(node: ast.AST) -> int:
    """The deepest chain of nested expressions under node (iterative: the tree may be deeper than the stack)."""
    best, stack = 0, [(node, 0)]
    while stack:
        n, d = stack.pop()
        d = d + 1 if isinstance(n, ast.expr) else 0
        best = max(best, d)
        stack.extend((c, d) for c in ast.iter_child_nodes(n))
    return best


def _module_ints(tree: ast.Module) -> dict[str, int]:
    return {t.id: v for n in tree.body if isinstance(n, ast.Assign) and (v := int_literal(n.value)) is not None
            for t in n.targets if isinstance(t, ast.Name)}


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b if b else None}


def _value(node: ast.AST, consts: dict[str, int]):
    """The int a literal expression of literals and module constants stands for (never run: arithmetic only)."""
    if (v := int_literal(node)) is not None:
        return v
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _value(node.operand, consts)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _value(node.left, consts), _value(node.right, consts)
        return None if a is None or b is None or abs(a) > 1 << 40 or abs(b) > 1 << 40 else _OPS[type(node.op)](a, b)
    return None


def _fixed_count(node: ast.AST, consts: dict[str, int]) -> int:
    """The count of range(...) when every argument is a literal or a module constant (else 0)."""
    if not (isinstance(node, ast.Call) and call_name(node) == "range" and 1 <= len(node.args) <= 3):
        return 0
    values = [_value(a, consts) for a in node.args]
    return 0 if None in values or values[2:] == [0] else len(range(*values))


def harness_bait(src: Source) -> list[tuple[int, str]]:
    """Code shaped against the harness's limits and messages: a source too deeply nested to parse, expressions
    nested past DEEP, identifiers past LONG_NAME or strings past LONG_LITERAL characters (headers and frames
    overflow), chains of module constants each made from the last (a literal nested past a parser's limit
    once inlined), host loops repeated a count fixed in the source (launches or tensors by the thousand), and
    built-in exception names bound as variables (an error message that blames the sandbox)."""
    if src.tree is None:
        return [(1, f"source does not parse: {src.parse_error}")] if "recursion" in src.parse_error else []
    hits, tree = [], src.tree
    depth = _depth(tree)
    if depth > DEEP:
        hits.append((1, f"an expression nested {depth} deep"))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in ERROR_NAMES:
            hits.append((n.lineno, f"binds the exception name {n.id}"))
        name = n.name if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else n.arg if isinstance(n, ast.arg) else \
            n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if len(name) > LONG_NAME:
            hits.append((getattr(n, "lineno", 1), f"an identifier of {len(name)} characters"))
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) > LONG_LITERAL:
            hits.append((n.lineno, f"a string of {len(n.value)} characters"))
    chain: dict[str, int] = {}
    for n in tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            chain[n.targets[0].id] = 1 + max((chain[e.id] for e in ast.walk(n.value)
                                              if isinstance(e, ast.Name) and e.id in chain), default=0)
    if max(chain.values(), default=0) > CHAIN:
        hits.append((1, f"a chain of {max(chain.values())} module constants, each made from the last"))
    consts = _module_ints(tree)
    for cls in classes(tree, "ModelNew"):
        for n in ast.walk(cls):
            loops = [n.iter] if isinstance(n, ast.For) else [g.iter for g in n.generators] \
                if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)) else []
            for it in loops:
                if (count := _fixed_count(it, consts)) >= REPEAT:
                    hits.append((n.lineno, f"repeats {count} times, a count fixed in the source"))
    return hits


def _rebound(code: str) -> set[str]:
    """Module-level names the reference itself binds twice (a KernelBench file may): not the submission's doing."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = [e.id for n in body if isinstance(n, ast.Assign) for t in n.targets for e in ast.walk(t)
             if isinstance(e, ast.Name)]
    return {x for x in names if names.count(x) > 1}


def combine_memory(src: Source) -> list[tuple[int, str]]:
    """A function handed to tl.reduce or tl.associative_scan as the combine function that loads, stores, dots
    or adds atomically: the work of the kernel hidden where a combine only merges values (an honest combine
    merges its operands: max, sums, Welford's moments)."""
    if src.tree is None:
        return []
    combines = {a.id for c in ast.walk(src.tree) if isinstance(c, ast.Call)
                and call_name(c) in ("reduce", "associative_scan") for a in c.args[2:3] if isinstance(a, ast.Name)}
    hits = []
    for f in (n for n in ast.walk(src.tree) if isinstance(n, ast.FunctionDef) and n.name in combines):
        hits += [(c.lineno, f"combine {f.name} calls {call_name(c)}") for c in ast.walk(f) if isinstance(c, ast.Call)
                 and (call_name(c) in ("load", "store", "dot") or (call_name(c) or "").startswith("atomic_"))]
    return hits


def module_constants(src: Source) -> list[tuple[int, str]]:
    """Module-level names bound more than once (what a kernel sees differs from the first definition) or
    computed by calling one of the submission's own functions at import where a kernel reads the constant as a
    global or it is wrapped in tl.constexpr (code run where the compiler's constants are rebuilt). A host-side
    constant (NUM_SMS = _num_sms(), passed to the kernel as an argument) is quiet."""
    if src.tree is None:
        return []
    own = {n.name for n in src.tree.body if isinstance(n, ast.FunctionDef)
           and not any(is_jit(d) for d in n.decorator_list)}
    seen, hits, honest, kernel_globals = set(), [], _rebound(src.reference), _kernel_globals(src.tree)
    for n in src.tree.body:
        if not isinstance(n, (ast.Assign, ast.AnnAssign)):
            continue
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        names = [e.id for t in targets for e in ast.walk(t) if isinstance(e, ast.Name)]
        hits += [(n.lineno, f"rebinds the module constant {x}") for x in names if x in seen and x not in honest]
        seen |= set(names)
        if n.value is not None and mentions(n.value, own) and any(
                isinstance(c, ast.Call) and call_name(c) in own for c in ast.walk(n.value)) and (
                set(names) & kernel_globals or mentions(n.value, {"constexpr"})):
            hits.append((n.lineno, f"a module constant computed by the submission's {ast.unparse(n.value)[:40]}"))
    return hits


def _kernel_globals(tree: ast.Module) -> set[str]:
    """Names a kernel body reads that are not its parameters: module constants the compiler (and a compile worker
    that rebuilds the module) evaluates."""
    out = set()
    for k in kernel_defs(tree):
        local = {a.arg for a in k.args.args} | {e.id for e in ast.walk(k) if isinstance(e, ast.Name)
                                                and isinstance(e.ctx, ast.Store)}
        out |= {e.id for e in ast.walk(k) if isinstance(e, ast.Name) and isinstance(e.ctx, ast.Load)
                and e.id not in local}
    return out
