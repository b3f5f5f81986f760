"""Stage 1: static checks on the AST (never regex), before any candidate code runs.

A finding is a named flag plus a message that says what to change. These checks are the first
wall, not the only one: whatever slips past them meets the sandbox (sandbox.py).
"""
from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from typing import Optional

from environment.evaluation import flags as F
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
}
PATCHABLE_ROOTS = {"torch", "time", "triton", "numpy", "np", "os", "sys", "math", "builtins", "environment",
                   "random", "functools", "tl"}


@dataclass
class _Finding:
    flag: str
    message: str
    line: int


@dataclass
class _Visitor(ast.NodeVisitor):
    module_aliases: dict[str, str] = field(default_factory=dict)
    findings: list[_Finding] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)

    def add(self, flag: str, node: ast.AST, message: str) -> None:
        self.findings.append(_Finding(flag, message, getattr(node, "lineno", 0)))

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
            if alias.name == "Model":
                self.add(F.REFERENCE_MODEL_USE, node, f"line {node.lineno}: do not import the reference Model; "
                         "write ModelNew yourself")
            self.module_aliases[alias.asname or alias.name] = f"{mod}.{alias.name}"
        self.generic_visit(node)

    # calls and attributes -----------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            if node.func.id in FORBIDDEN_CALLS:
                flag = F.MONKEY_PATCH if node.func.id in ("setattr", "delattr") else F.FORBIDDEN_CALL
                self.add(flag + ":" + node.func.id, node, f"line {node.lineno}: calling {node.func.id}() is not "
                         "allowed in a submission; compute the result with torch or a Triton kernel")
            if node.func.id == "Model":
                self.add(F.REFERENCE_MODEL_USE, node, f"line {node.lineno}: instantiating the reference Model is "
                         "not allowed; ModelNew must compute the result itself")
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            call = item.context_expr
            name = ast.unparse(call.func if isinstance(call, ast.Call) else call)
            if name.split(".")[-1] == "suppress":
                self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: contextlib.suppress is a "
                         "try/except in disguise (a silent fallback); let errors surface and fix them")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FORBIDDEN_ATTRS:
            flag = F.TENSOR_SUBCLASS if "subclass" in node.attr else F.FORBIDDEN_CALL
            self.add(flag + ":" + node.attr, node, f"line {node.lineno}: .{node.attr} is not allowed in a "
                     "submission (process, frame, environment or raw-memory access)")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            self.add(F.FORBIDDEN_CALL + ":" + node.id, node, f"line {node.lineno}: {node.id} is not allowed")
        self.generic_visit(node)

    # patching -----------------------------------------------------------------
    def _root(self, node: ast.AST) -> Optional[str]:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def _check_target(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check_target(t, node)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            root = self._root(target)
            module = self.module_aliases.get(root or "", root or "")
            if root and (root in PATCHABLE_ROOTS or module.split(".")[0] in PATCHABLE_ROOTS):
                self.add(F.MONKEY_PATCH + ":" + module, node, f"line {node.lineno}: assigning into {module} "
                         "(monkey-patching a library) is not allowed; define your own functions instead")

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    # structure ----------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        if node.handlers:
            self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: try/except is not allowed (a fallback to "
                     "PyTorch would hide a failing kernel); let errors surface and fix them")
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
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for dec in node.decorator_list:
            text = ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)
            if text.split(".")[-1] in ("jit", "autotune", "heuristics") and "torch" not in text:
                if node.name not in self.kernels:
                    self.kernels.append(node.name)
        self.generic_visit(node)


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
                                              + ". Fix the syntax; the module must import cleanly."])
    depth = _depth(tree)
    if depth > MAX_AST_DEPTH:
        return StaticResult(ok=False, errors=[f"The submission's syntax tree is {depth} levels deep, over the "
                                              f"{MAX_AST_DEPTH}-level limit every harness pass is built for: split "
                                              "long chained expressions into several statements."])
    visitor = _Visitor()
    visitor.visit(tree)
    errors = [f.message for f in visitor.findings]
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
    return StaticResult(ok=not errors, errors=errors, flags=flags, triton_kernels=visitor.kernels,
                        uses_triton=bool(visitor.kernels))
