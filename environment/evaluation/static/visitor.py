"""The AST visitor of stage 1: imports, calls, attributes, patching, exception swallowing, subclasses,
with module aliases resolved over the whole file before any check runs."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from environment.evaluation import flags as F
from environment.evaluation.static import import_guard, runtime_features
from environment.evaluation.static.rules import (EXIT_METHODS, FORBIDDEN_ATTRS, FORBIDDEN_CALLS, FORBIDDEN_MODULES,
                                                 PATCHABLE_ROOTS, SWALLOWERS, Finding)


@dataclass
class Visitor(ast.NodeVisitor):
    module_aliases: dict[str, str] = field(default_factory=dict)
    value_aliases: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    import_guards: set[int] = field(default_factory=set)   # id() of the module-level version guards (import_guard.py)

    def add(self, flag: str, node: ast.AST, message: str) -> None:
        finding = Finding(flag, message, getattr(node, "lineno", 0))
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
    def visit_Module(self, node: ast.Module) -> None:
        self.import_guards = import_guard.module_level_guards(node)
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        if id(node) in self.import_guards:
            pass   # the version guard: imports and literal bindings only, checked like any other (import_guard.py)
        elif isinstance(node, ast.Try) and import_guard.is_import_guard(node):
            self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: an import guard (try: import ... except "
                     "ImportError) is only allowed at module level, where it runs once when the module loads; "
                     "move it to the top of the file")
        elif node.handlers:
            self.add(F.TRY_EXCEPT_FALLBACK, node, f"line {node.lineno}: try/except is not allowed (a fallback to "
                     "PyTorch would hide a failing kernel); let errors surface and fix them. Only a module-level "
                     "import guard is allowed: a try of imports and NAME = literal lines, except ImportError or "
                     "ModuleNotFoundError with imports, pass or NAME = literal lines, no else or finally")
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


def collect_module_aliases(tree: ast.Module, visitor: "Visitor") -> None:
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


def collect_value_aliases(tree: ast.Module, visitor: "Visitor") -> None:
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
