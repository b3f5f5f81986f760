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


TEMPLATE_SCORE = "0.75"  # the reference renamed to ModelNew: correct at 1x (ui/play_tab.py's TEMPLATE_NOTE)
BROKEN_SCORE = 0.10  # an honest kernel that compiles but passes no trial


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
    open: bool = False  # still beats its pinned outcome (expected.OPEN_GAPS): not stopped yet
    correct: Optional[bool] = None  # the pinned correctness verdict of a harmless attack, when pinned

    @property
    def verdict(self) -> str:
        """caught (flagged, score 0), harmless (earns no more than honest work) or open (not stopped yet)."""
        return "open" if self.open else "caught" if self.outcome == "flag" else "harmless"

    @property
    def title(self) -> str:
        return plain_title(self.group)

    @property
    def stopped_by(self) -> str:
        return LAYER_TEXT.get(self.layer, self.layer)

    @property
    def defeated_by(self) -> str:
        return "" if self.layer == "none" else f"its trick is stopped by {self.stopped_by}"

    @property
    def harmless_why(self) -> str:
        """Why a harmless attack earns nothing over honest work (its pinned correctness and layer)."""
        trick = f"{self.defeated_by}; " if self.defeated_by else ""
        if self.correct is False:
            return (trick + "its output is wrong, so it earns at most the partial credit any wrong kernel gets "
                    f"(0.10 compiled + 0.30 × the trials it passes), below honest correct work "
                    f"(the untouched starting template earns about {TEMPLATE_SCORE})")
        if self.correct is True:
            return trick + "it is correct, so it earns what honest correct work of its speed earns, nothing more"
        return trick + "it gains nothing that honest work would not earn"

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
    open_gaps = getattr(module, "OPEN_GAPS", frozenset())
    out = []
    for file, exp in module.EXPECTED.items():
        path = REDTEAM / "attacks" / file
        if not path.is_file():
            continue
        out.append(Attack(file=file, name=path.stem, group=groups.get(file, "other"), tries=_tries(path),
                          task=exp.task, outcome=exp.outcome, flag=exp.flag, layer=exp.layer,
                          open=file in open_gaps, correct=exp.correct if exp.outcome == "harmless" else None))
    return tuple(out)


def for_task(task_id: str) -> list[Attack]:
    return [a for a in attacks() if a.task == task_id]


def by_name(name: str) -> Attack:
    for a in attacks():
        if a.name == name or a.file == name:
            return a
    raise KeyError(name)


# The section comments of expected.py past class 19 are development notes; a visitor reads these titles.
_TITLES = (
    ("OPEN", "Open: not stopped yet"),
    ("rule evasions", "Forbidden builtins reached another way"),
    ("class 1,", "Cost accounting: work the counter never sees"),
    ("class 2,", "Cost accounting: forged counts"),
    ("class 3,", "Cost accounting: predictable fresh inputs"),
    ("class 4,", "Code smuggled into the GPU compile worker"),
    ("review of the replay", "Evading the trusted replay"),
    ("harness-error dodges", "Passing its own failure off as the environment's"),
    ("measured timing", "Timing tricks (GPU hosts)"),
    ("timed calls", "Timing tricks (GPU hosts)"),
    ("timing loop", "Timing tricks (GPU hosts)"),
    ("loop cost", "Timing tricks (GPU hosts)"),
    ("TorchFunctionMode", "Hidden work through torch hooks and threads"),
    ("_fork", "Hidden work through torch hooks and threads"),
)
_SAMPLING = "Kernels that do less work than the sampled programs show"


def plain_title(group: str) -> str:
    """A class title for people: "4 decoy kernel" -> "Decoy kernel"; a development note -> its topic."""
    numbered = re.match(r"^(\d+) ([^(:]+)$", group)
    if numbered and int(numbered.group(1)) < 20:
        return numbered.group(2).strip().capitalize()
    for key, title in _TITLES:
        if key in group:
            return title
    return _SAMPLING if group != "other" else "Other attacks"


@functools.lru_cache(maxsize=1)
def _by_code() -> dict[str, Attack]:
    return {a.code().strip(): a for a in attacks()}


def attack_of_code(code: Optional[str]) -> Optional[Attack]:
    """The red-team attack whose file is exactly this code (as loaded from the gallery or the examples)."""
    return _by_code().get((code or "").strip()) if code else None


def harmless_note(a: Attack, reward: Optional[float]) -> str:
    """The step verdict's line for a harmless attack that was played: its score against honest work."""
    from ui.verdict import num
    if reward is None:
        return f"harmless: earns no more than honest work ({a.harmless_why})"
    if reward <= BROKEN_SCORE + 1e-9:
        where = f"no more than an honest broken kernel ({BROKEN_SCORE:.2f})"
    elif a.correct is not True and reward < float(TEMPLATE_SCORE):
        where = (f"more than an honest broken kernel ({BROKEN_SCORE:.2f}) only by partial trial credit, and less "
                 f"than honest correct work (the untouched starting template earns about {TEMPLATE_SCORE})")
    else:
        where = "what honest correct work of the same speed earns"
    return (f"harmless: earns no more than honest work. It scored {num(reward)}, {where}"
            + (f"; {a.defeated_by}." if a.defeated_by else "."))


def summary(items: tuple[Attack, ...]) -> dict[str, int]:
    counts = {"attacks": len(items), "caught": 0, "harmless": 0, "open": 0}
    for a in items:
        counts[a.verdict] += 1
    return counts


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
