"""The shape of the code, read from its syntax trees (nothing is imported): no import circle among the
environment's modules, a modeled time that imports nothing from the replay, no production file over 400 lines,
and a harness that imports nothing from the reward (it is scored after it, by code it cannot see)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())  # wherever this file sits
MAX_LINES = 400
# Over the limit and not split yet (none today; an entry names who splits it):
TOO_LONG_FOR_NOW: set[str] = set()
REWARD = ("environment.reward", "environment.rubric")


def _modules(top: str) -> dict[str, Path]:
    mods = {}
    for path in (ROOT / top).rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


MODULES = _modules("environment")


def _imports(name: str, path: Path) -> set[str]:
    """The environment modules `name` imports, at module level or inside functions, resolved to modules
    (`from package import module` is the module; `from module import name` is the module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_circle_of_two_and_of_three():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_resolver_sees_module_and_function_level_imports():
    harness = GRAPH["environment.evaluation.harness"]
    assert "environment.evaluation.static.checks" in harness          # from module import name
    assert "environment.evaluation.flags" in harness                  # from package import module, in a function
    assert "environment.evaluation.transport.frames" in GRAPH["environment.evaluation.transport.pool"]


def test_no_import_circle_among_the_environment_modules():
    assert _cycles(GRAPH) == []


def test_the_harness_imports_nothing_from_the_reward_even_through_other_modules():
    harness = [name for name in GRAPH if name.startswith("environment.evaluation")]
    seen, todo = set(harness), list(harness)
    while todo:
        for child in GRAPH[todo.pop()]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    assert sorted(name for name in seen if name.startswith(REWARD)) == []


MODELED, REPLAY = "environment.evaluation.modeled", "environment.evaluation.replay"


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_modeled_time_is_a_pure_model_that_imports_nothing_from_the_replay():
    """replay/ runs the model (counters, hooks, pricing); the model never reaches back into the replay, not even
    from inside a function: what a sampled launch needs from the replay is handed to the counter by its maker."""
    assert [name for name in GRAPH if _under(name, MODELED)] and [name for name in GRAPH if _under(name, REPLAY)]
    reaching = sorted(f"{name} -> {target}" for name, targets in GRAPH.items() if _under(name, MODELED)
                      for target in targets if _under(target, REPLAY))
    assert reaching == []


def test_the_modeled_check_sees_a_function_level_import_of_the_replay(tmp_path):
    (tmp_path / "probe.py").write_text("def f():\n    from environment.evaluation.replay import recorder\n"
                                       "    from ..replay.sampled import run_sampled\n")
    found = _imports(f"{MODELED}.probe", tmp_path / "probe.py")
    assert {f"{REPLAY}.recorder", f"{REPLAY}.sampled"} <= found


def _production_files() -> list[Path]:
    """Every .py file of the project outside the tests, virtual environments and build output."""
    skipped = {"tests", "build", "dist", "artifacts", "node_modules", "__pycache__"}
    return sorted(path for path in ROOT.rglob("*.py")
                  if not any(part in skipped or part.startswith(".") for part in path.relative_to(ROOT).parts))


def test_the_length_check_reads_every_production_file():
    found = {path.relative_to(ROOT).as_posix() for path in _production_files()}
    assert {"inference.py", "app.py", "environment/config.py", "server/app.py", "ui/__init__.py"} <= found
    assert not any(rel.startswith(("tests/", ".venv")) for rel in found)


def test_no_production_module_is_over_400_lines():
    too_long = {}
    for path in _production_files():
        rel = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and rel not in TOO_LONG_FOR_NOW:
            too_long[rel] = lines
    assert too_long == {}


README_MAX_BYTES = 12 << 10   # a front door: read in minutes; the rest lives in docs/
DOC_MAX_BYTES = 20 << 10


def test_the_readme_and_every_docs_page_stay_short():
    """The README at most 12 KiB, each docs/ page at most 20 KiB, and no issue number or red-team id in the README
    (history lives in git): a page past its size is split, not trimmed of facts."""
    readme = (ROOT / "README.md").read_text()
    pages = {p.name: p.stat().st_size for p in (ROOT / "docs").glob("*.md")}
    assert len(readme.encode()) <= README_MAX_BYTES, f"README.md is {len(readme.encode())} bytes"
    assert pages and {n: b for n, b in pages.items() if b > DOC_MAX_BYTES} == {}
    assert re.findall(r"(?i)\bissues? ?#?\d+|\ba\d{1,3}\b", readme) == []  # issue numbers, red-team ids


# Read outside environment/config.py on purpose: facts of the host or internal hand-offs, not configuration.
HOST_FACTS = {
    "PATH", "CC", "CUDA_HOME", "CUDA_PATH",  # where the sandbox and the sm_90 compile find their tools
    "TRITON_INTERPRET",                      # set by the pool for its evaluators (CPU hosts)
    "KERNEL_ENV_ROOT",                       # set by modeled/aot.py for the compile worker it starts
}
SECRET_VALUES_READ = "environment/trajectory.py"  # the secrets' own values, read only to redact them


def _environment_reads(path: Path) -> list[tuple[int, str]]:
    """(line, variable) of every read of os.environ / os.getenv (a name that is no literal reads as '?')."""
    reads = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            spelled = ast.unparse(node.func)
            if spelled in ("os.environ.get", "os.getenv", "environ.get", "getenv") and node.args:
                target = node.args[0]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and ast.unparse(node.value) == "os.environ":
            target = node.slice
        elif isinstance(node, ast.Compare) and any(ast.unparse(c) == "os.environ" for c in node.comparators):
            target = node.left
        if target is not None:
            reads.append((node.lineno, target.value if isinstance(target, ast.Constant) else "?"))
    return reads


def test_every_configuration_variable_is_read_in_one_module():
    stray = []
    for path in [ROOT / "app.py", *[p for top in ("environment", "ui", "server") for p in (ROOT / top).rglob("*.py")]]:
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("environment/config.py", SECRET_VALUES_READ):
            continue
        stray += [f"{rel}:{line} {name}" for line, name in _environment_reads(path) if name not in HOST_FACTS]
    assert stray == []


def test_every_configuration_variable_is_in_the_deploy_table():
    from environment.config import ENV_DEFAULTS
    config = ast.parse((ROOT / "environment/config.py").read_text())
    read_here = {name for _, name in _environment_reads(ROOT / "environment/config.py") if name != "?"}
    read_here |= {node.args[0].value for node in ast.walk(config) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Name) and node.func.id in ("_int", "_float")}
    assert {"KERNEL_ENV_TRIALS", "KERNEL_ENV_RAY_CPU_ACTORS", "KERNEL_ENV_FP64_ORACLE"} <= read_here
    rows = [line for line in (ROOT / "docs/deploy.md").read_text().splitlines() if line.startswith("| `")]
    documented = {word for row in rows for word in row.split("`")[1::2]}
    assert sorted((set(ENV_DEFAULTS) | read_here) - documented) == []
