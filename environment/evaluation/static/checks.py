"""Stage 1: static checks on the AST (never regex), before any candidate code runs.

A finding is a named flag plus a message that says what to change. These checks are the first
wall, not the only one: whatever slips past them meets the sandbox (sandbox.py).
"""
from __future__ import annotations

import ast
import symtable
import threading
from dataclasses import dataclass, field
from typing import Optional

from environment.evaluation import flags as F
from environment.evaluation.static import runtime_features
from environment.evaluation.result import StaticResult

MAX_SOURCE_BYTES = 256 * 1024
# CPython 3.11's AST constructor keeps its recursion depth in shared state, so two threads parsing at
# once can fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905);
# the server checks many sessions' submissions in a thread pool.
_PARSE_LOCK = threading.Lock()


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
    with _PARSE_LOCK:
        return ast.parse(source, filename=filename)

FORBIDDEN_MODULES = {
    "threading": "threads", "_thread": "threads", "multiprocessing": "processes", "concurrent": "threads/processes",
    "subprocess": "processes", "_posixsubprocess": "processes", "pty": "processes", "socket": "network",
    "ssl": "network", "http": "network", "urllib": "network", "requests": "network", "asyncio": "event loops",
    "ctypes": "raw memory", "cffi": "raw memory", "mmap": "raw memory", "gc": "reading other objects",
    "inspect": "frame access", "traceback": "frame access", "signal": "signals", "pickle": "code execution",
    "marshal": "code execution", "shelve": "code execution", "importlib": "dynamic imports",
    "builtins": "patching builtins", "code": "code execution", "codeop": "code execution", "pdb": "frame access",
    "resource": "resource limits", "fcntl": "file descriptors", "posix": "raw os access", "shutil": "file writes",
    "tempfile": "file writes", "environment": "the harness itself", "reference": "the reference module",
    "torch.multiprocessing": "processes", "torch.testing": "the checker", "sysconfig": "host introspection",
    "torch.utils._python_dispatch": "the cost counter", "torch.overrides": "the cost counter",
    "triton.runtime.interpreter": "the cost counter", "triton.testing": "timers",
    "torch.jit._fork": "threads", "torch.jit.fork": "threads", "torch.jit._async": "threads",
}
FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "open", "globals", "vars", "breakpoint", "input",
                   "setattr", "delattr", "memoryview"}
FORBIDDEN_ATTRS = {
    "__subclasses__", "__globals__", "__code__", "__closure__", "__builtins__", "__dict__", "__class__",
    "__bases__", "__mro__", "__getattribute__", "f_back", "f_locals", "f_globals", "gi_frame", "tb_frame",
    "_getframe", "settrace", "setprofile", "addaudithook", "_current_frames", "modules",
    "fork", "forkpty", "kill", "killpg", "system", "popen", "spawnv", "spawnl", "execv", "execve", "execl",
    "execvp", "posix_spawn", "_exit", "environ", "getenv", "putenv", "unsetenv", "setsid", "setpgid",
    "from_file", "_make_subclass", "_make_wrapper_subclass", "from_dlpack",
    "interpreter", "_python_dispatch", "TorchDispatchMode", "TorchFunctionMode", "do_bench",
    "_fork",   # torch.jit._fork: inside TorchScript a task on torch's inter-op thread pool (red team a154)
}
PATCHABLE_ROOTS = {"torch", "time", "triton", "numpy", "np", "os", "sys", "math", "builtins", "environment",
                   "random", "functools", "tl"}
# Exception swallowers of the standard library, however they are reached (attribute or import).
SWALLOWERS = {"suppress", "ExitStack", "AsyncExitStack"}
EXIT_METHODS = ("__exit__", "__aexit__")


@dataclass
class _Finding:
    flag: str
    message: str
    line: int


@dataclass
class _Visitor(ast.NodeVisitor):
    module_aliases: dict[str, str] = field(default_factory=dict)
    value_aliases: dict[str, str] = field(default_factory=dict)
    findings: list[_Finding] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)

    def add(self, flag: str, node: ast.AST, message: str) -> None:
        finding = _Finding(flag, message, getattr(node, "lineno", 0))
        if finding not in self.findings:
            self.findings.append(finding)

    # imports ------------------------------------------------------------------
    def _check_module(self, name: str, node: ast.AST) -> None:
        for banned, why in FORBIDDEN_MODULES.items():
            if name == banned or name.startswith(banned + "."):
                self.add(F.FORBIDDEN_IMPORT + ":" + banned, node,
                         f"line {node.lineno}: importing {name} is not allowed ({why}); a kernel needs only "
                         "torch, triton, triton.language and math")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            self.module_aliases[alias.asname or alias.name.split(".")[0]] = alias.name
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            self.add(F.FORBIDDEN_IMPORT + ":relative", node, f"line {node.lineno}: relative imports are not allowed")
        self._check_module(mod, node)
        for alias in node.names:
            self._check_module(f"{mod}.{alias.name}", node)
            if mod.split(".")[0] == "contextlib" and alias.name in SWALLOWERS:
                self._swallower(alias.name, node)
            if alias.name == "Model":
                self.add(F.REFERENCE_MODEL_USE, node, f"line {node.lineno}: do not import the reference Model; "
                         "write ModelNew yourself")
            self.module_aliases[alias.asname or alias.name] = f"{mod}.{alias.name}"
        self.generic_visit(node)

    # calls and attributes -----------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            # `from torch import compile` shadows the builtin of its own name: refused by name below, not flagged.
            # Only that name: `from torch import compile as exec` + `del exec` uncovers the builtin exec (a170)
            bound = self.module_aliases.get(node.func.id) or ""
            shadowed = runtime_features.refused(bound) and bound.rsplit(".", 1)[-1] == node.func.id
            if node.func.id in FORBIDDEN_CALLS and not shadowed:
                flag = F.MONKEY_PATCH if node.func.id in ("setattr", "delattr") else F.FORBIDDEN_CALL
                self.add(flag + ":" + node.func.id, node, f"line {node.lineno}: calling {node.func.id}() is not "
                         "allowed in a submission; compute the result with torch or a Triton kernel")
            if node.func.id == "Model":
                self.add(F.REFERENCE_MODEL_USE, node, f"line {node.lineno}: instantiating the reference Model is "
                         "not allowed; ModelNew must compute the result itself")
        self.generic_visit(node)

    def _swallower(self, name: str, node: ast.AST) -> None:
        self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: contextlib.{name} swallows exceptions (a "
                 "try/except in disguise, a silent fallback); let errors surface and fix them")

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            call = item.context_expr
            name = ast.unparse(call.func if isinstance(call, ast.Call) else call)
            if name.split(".")[-1] in SWALLOWERS:
                self._swallower(name.split(".")[-1], node)
            if item.optional_vars is not None:
                self._check_target(item.optional_vars, node)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FORBIDDEN_ATTRS:
            flag = F.TENSOR_SUBCLASS if "subclass" in node.attr else F.FORBIDDEN_CALL
            self.add(flag + ":" + node.attr, node, f"line {node.lineno}: .{node.attr} is not allowed in a "
                     "submission (process, frame, environment or raw-memory access)")
        if node.attr in SWALLOWERS:
            self._swallower(node.attr, node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if node.value in EXIT_METHODS:
            self._exit_method(node, "named in a string (a class built with type() or a dict)")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            self.add(F.FORBIDDEN_CALL + ":" + node.id, node, f"line {node.lineno}: {node.id} is not allowed")
        self.generic_visit(node)

    # patching -----------------------------------------------------------------
    def _root(self, node: ast.AST) -> Optional[str]:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def module_of(self, node: ast.AST) -> Optional[str]:
        """The library module an expression names: `torch.nn`, an import alias, or a variable (or
        attribute) that was assigned a module anywhere in the file; None for anything else."""
        suffix = ""
        while True:
            text = ast.unparse(node)
            if text in self.value_aliases:
                return self.value_aliases[text] + suffix
            if isinstance(node, ast.Name):
                module = self.module_aliases.get(node.id, node.id)
                ok = node.id in PATCHABLE_ROOTS or module.split(".")[0] in PATCHABLE_ROOTS
                return module + suffix if ok else None
            if isinstance(node, ast.Attribute):
                suffix = "." + node.attr + suffix
            elif not isinstance(node, ast.Subscript):
                return None
            node = node.value

    def _check_target(self, target: ast.AST, node: ast.AST) -> None:
        """Every binding target: assignment, augmented/annotated assignment, del, for, with ... as,
        comprehension and := targets. Binding a plain name only shadows; binding into a module patches it."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check_target(t, node)
            return
        if isinstance(target, ast.Starred):
            return self._check_target(target.value, node)
        if isinstance(target, ast.Attribute) and target.attr in EXIT_METHODS:
            self._exit_method(node, f"assigned onto {ast.unparse(target.value)}")
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            module = self.module_of(target.value)
            if module and not runtime_features.precision_setting(node, target, module):
                self.add(F.MONKEY_PATCH + ":" + module, node, f"line {node.lineno}: assigning into {module} "
                         "(monkey-patching a library) is not allowed; define your own functions instead")

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self._check_target(node.target, node)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._check_target(node.target, node.iter)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._check_target(node.target, node)
        self.generic_visit(node)

    # structure ----------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        if node.handlers:
            self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: try/except is not allowed (a fallback to "
                     "PyTorch would hide a failing kernel); let errors surface and fix them")
        if any(_leaves_finally(stmt) for stmt in node.finalbody):
            self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: return, break or continue inside finally "
                     "discards the exception in flight (a try/except in disguise); let errors surface and fix them")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            text = ast.unparse(base)
            if text.split(".")[-1] == "Tensor":
                self.add(F.TENSOR_SUBCLASS, node, f"line {node.lineno}: subclassing torch.Tensor is not allowed; "
                         "return a plain torch.Tensor")
            if text == "Model" or text.endswith(".Model"):
                self.add(F.REFERENCE_MODEL_USE, node, f"line {node.lineno}: ModelNew must not subclass the "
                         "reference Model; subclass torch.nn.Module")
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in ("__torch_function__", "__torch_dispatch__"):
                self.add(F.TENSOR_SUBCLASS, item, f"line {item.lineno}: {item.name} overrides are not allowed")
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in EXIT_METHODS:
                if not _exit_never_suppresses(item):
                    self._exit_method(item, f"of class {node.name} can return a true value")
            elif any(isinstance(t, ast.Name) and t.id in EXIT_METHODS for t in _bound_names(item)):
                self._exit_method(item, f"of class {node.name} is not a plain method")
        self.generic_visit(node)

    def _exit_method(self, node: ast.AST, how: str) -> None:
        self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: an __exit__ {how}; a context manager whose "
                 "__exit__ returns True swallows the exception (a try/except fallback in disguise). An __exit__ "
                 "may only return nothing, None or False")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for dec in node.decorator_list:
            text = ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)
            if text.split(".")[-1] in ("jit", "autotune", "heuristics") and "torch" not in text:
                if node.name not in self.kernels:
                    self.kernels.append(node.name)
        self.generic_visit(node)


def _collect_module_aliases(tree: ast.Module, visitor: "_Visitor") -> None:
    """Import aliases, before any check runs, so a use above its import is still resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                visitor.module_aliases[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                visitor.module_aliases[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}"


def _bound_names(stmt: ast.stmt) -> list[ast.AST]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return [stmt.target]
    return []


def _own_nodes(node: ast.AST):
    """Nodes of a function body, not descending into nested functions, lambdas or classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield child
        yield from _own_nodes(child)


def _exit_never_suppresses(fn: ast.AST) -> bool:
    """Known safe: every return gives nothing, None or False (and the method is not a generator)."""
    for node in _own_nodes(fn):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value in (None, False)):
            return False
    return True


def _leaves_finally(node: ast.AST, in_loop: bool = False) -> bool:
    """A return anywhere in a finally block, or a break/continue not inside a loop of its own."""
    if isinstance(node, ast.Return):
        return True
    if isinstance(node, (ast.Break, ast.Continue)):
        return not in_loop
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return False
    loop = isinstance(node, (ast.For, ast.AsyncFor, ast.While))
    return any(_leaves_finally(child, in_loop or loop) for child in ast.iter_child_nodes(node))


def _collect_value_aliases(tree: ast.Module, visitor: "_Visitor") -> None:
    """Variables and attributes that hold a library module (`t = torch.testing`, `self.m = torch`,
    `for m in (torch,)`), anywhere in the file: assigning into them is patching that module."""
    for _ in range(4):  # aliases of aliases
        before = dict(visitor.value_aliases)
        for node in ast.walk(tree):
            pairs: list[tuple[ast.AST, ast.AST]] = []
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                values = node.iter.elts if isinstance(node.iter, (ast.Tuple, ast.List, ast.Set)) else []
                pairs = [(node.target, v) for v in values]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                pairs = [(i.optional_vars, i.context_expr) for i in node.items if i.optional_vars is not None]
            for target, value in pairs:
                values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
                targets = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target] * len(values)
                for t, v in zip(targets, values):
                    module = visitor.module_of(v) if isinstance(v, (ast.Name, ast.Attribute)) else None
                    if module and isinstance(t, (ast.Name, ast.Attribute)):
                        visitor.value_aliases[ast.unparse(t)] = module
        if visitor.value_aliases == before:
            return


def _builtin_value_uses(tree: ast.Module, source: str) -> list[_Finding]:
    """Every use of a forbidden builtin that is not a direct call (`f = exec`, `def g(e=eval)`,
    `map(eval, ...)`), resolved with Python's own scoping rules (symtable): a parameter or variable
    that happens to be called `input` is not the builtin."""
    try:
        with _PARSE_LOCK:
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
    found: list[_Finding] = []
    seen: set[str] = set()

    def visit(node: ast.AST, scope: tuple[str, str, int]) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scopes.get(scope, ()):
            seen.add(node.id)
            if id(node) not in called:  # direct calls are reported by the call check
                found.append(_Finding(F.FORBIDDEN_CALL + ":" + node.id, f"line {node.lineno}: {node.id} is used as a "
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
        found.append(_Finding(F.FORBIDDEN_CALL + ":" + name, f"{name} is referred to; a forbidden builtin may not "
                              "be used at all", 0))
    return found


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
    visitor = _Visitor()
    _collect_module_aliases(tree, visitor)
    _collect_value_aliases(tree, visitor)
    visitor.visit(tree)
    for finding in _builtin_value_uses(tree, source):
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
