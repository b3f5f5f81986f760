"""The red-team attacks of tests/redteam/, read from the repository at run time (never copied).

Each attack file's docstring says what it tries; tests/redteam/expected.py says its task, the
flag it must raise and the layer that stops it; the section comments of expected.py name the
class of attack it belongs to. Where the attacks are not present (an image built without
tests/), the gallery says so and the rest of the playground works.
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
REDTEAM = ROOT / "tests" / "redteam"
LAYER_TEXT = {
    "static": "the static checks (AST rules, before any code runs)",
    "seccomp": "the seccomp filter (forbidden system calls kill the child)",
    "landlock": "Landlock (the child cannot open files outside its sandbox)",
    "process": "process isolation (a separate, unprivileged child)",
    "protocol": "the typed result protocol (forged frames are rejected)",
    "runtime-check": "the runtime checks (launch counting, output and input checks)",
    "replay": "the trusted replay of the recorded work on held-out inputs",
    "rebuild": "the rebuild of the cost record from trusted data",
    "none": "nothing needs to: it earns no more than honest work",
}


@dataclass(frozen=True)
class Attack:
    file: str          # a07_decoy_kernel.py
    name: str          # a07_decoy_kernel
    group: str         # "4 decoy kernel" (the section of expected.py)
    tries: str         # the docstring's first sentence
    task: str
    outcome: str       # flag | harmless
    flag: Optional[str]
    layer: str

    @property
    def stopped_by(self) -> str:
        return LAYER_TEXT.get(self.layer, self.layer)

    def code(self) -> str:
        return (REDTEAM / "attacks" / self.file).read_text()


@functools.lru_cache(maxsize=1)
def attacks() -> tuple[Attack, ...]:
    expected_py = REDTEAM / "expected.py"
    if not expected_py.is_file():
        return ()
    spec = importlib.util.spec_from_file_location("kp_redteam_expected", expected_py)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    groups = _groups(expected_py.read_text())
    out = []
    for file, exp in module.EXPECTED.items():
        path = REDTEAM / "attacks" / file
        if not path.is_file():
            continue
        out.append(Attack(file=file, name=path.stem, group=groups.get(file, "other"), tries=_tries(path),
                          task=exp.task, outcome=exp.outcome, flag=exp.flag, layer=exp.layer))
    return tuple(out)


def for_task(task_id: str) -> list[Attack]:
    return [a for a in attacks() if a.task == task_id]


def by_name(name: str) -> Attack:
    for a in attacks():
        if a.name == name or a.file == name:
            return a
    raise KeyError(name)


def _groups(source: str) -> dict[str, str]:
    """file -> the first line of the comment block above it in expected.py."""
    groups, current, in_comment = {}, "other", False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            if not in_comment:
                current = stripped.lstrip("# ").strip()
            in_comment = True
            continue
        in_comment = False
        m = re.match(r'"(a\d+[^"]*\.py)"\s*:', stripped)
        if m:
            groups[m.group(1)] = current
    return groups


def _tries(path: Path) -> str:
    source = path.read_text()
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except (SyntaxError, RecursionError, ValueError):  # some attacks are deliberately unparsable
        doc = source.split('"""')[1] if source.startswith('"""') else ""
    text = " ".join(doc.split())
    return text.split(": ", 1)[1] if ": " in text[:60] else text
