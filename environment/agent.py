"""Prompt building and reply parsing for model players (the playground's model player and inference.py).

Everything here is a pure function of its arguments: no network, no environment, no clock. An
observation may be a ``KernelObservation`` or its ``model_dump()`` dict (as stored in trajectories).

>>> messages = build_messages(observation, best_code=best, history=previous_observations)
>>> parsed = parse_reply(reply_text)
>>> parsed.code or parsed.error
"""
from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

# Bounds that keep a prompt small enough for an 8k-context model and a fast router call.
MAX_FEEDBACK_CHARS = 3000
MAX_CODE_CHARS = 12000
MAX_HISTORY_LINES = 5

SYSTEM_PROMPT = """\
You are an expert GPU kernel engineer. You receive a PyTorch reference module `Model` and write \
`ModelNew`, a faster drop-in replacement that computes the same function.

Rules:
- Define `class ModelNew(torch.nn.Module)` with the same constructor arguments and the same \
`forward` signature as `Model`, plus every import and helper it needs (a complete Python module).
- Write Triton kernels (`import triton`, `import triton.language as tl`, `@triton.jit`, launched \
from `forward`) or plain PyTorch. Both are graded; fused Triton kernels usually earn the most.
- Stay device-agnostic: the harness may run on a GPU or on a CPU (Triton in interpreter mode). \
Allocate outputs on the inputs' device (`torch.empty_like(x)`); never hard-code "cuda" or assert \
`x.is_cuda`.
- Match the reference within tolerance for any size, including sizes that are not multiples of \
your block size (mask loads and stores). Do not modify the inputs. Be deterministic.
- No threads, processes, files, network, timer or torch monkey-patching, and no try/except \
fallbacks: they are flagged as reward hacks and score 0.

Reply with exactly one ```python code block holding the complete module. A short explanation \
before the block is fine."""


@dataclass(frozen=True)
class ParsedReply:
    """What a model reply yields: the code to submit, or why there is none."""

    code: Optional[str]
    error: Optional[str]
    origin: str = ""  # where the code came from, for diagnostics: "fenced block 2 of 3", "whole reply"


def field_of(observation: Any, name: str, default: Any = None) -> Any:
    """A field of a KernelObservation or of its dict form; ``default`` when missing or None."""
    if observation is None:
        return default
    if isinstance(observation, Mapping):
        value = observation.get(name, default)
    else:
        value = getattr(observation, name, default)
    return default if value is None else value


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} characters omitted]"


def _fence(code: str) -> str:
    return "```python\n" + code.rstrip("\n") + "\n```"


def summarize_step(observation: Any) -> str:
    """One line about a step's outcome, e.g. ``turn 2: score 0.41, correct, speedup 1.30x (modeled)``."""
    parts = [f"turn {field_of(observation, 'turn', '?')}: score {float(field_of(observation, 'score', 0.0)):.2f}"]
    error = field_of(observation, "error")
    if error:
        parts.append("error: " + " ".join(str(error).split())[:200])
    elif field_of(observation, "correct") is True:
        parts.append("correct")
    elif field_of(observation, "compiled") is True:
        parts.append(f"incorrect ({field_of(observation, 'trials_passed', 0)}/{field_of(observation, 'trials_total', 0)} trials)")
    speedup = field_of(observation, "speedup")
    if speedup is not None:
        parts.append(f"speedup {float(speedup):.2f}x ({field_of(observation, 'speedup_kind', 'unknown')})")
    flags = field_of(observation, "flags", [])
    if flags:
        parts.append("flags: " + ", ".join(str(f) for f in flags))
    return ", ".join(parts)


def feedback_message(observation: Any) -> str:
    """The environment's report on one step, as a model reads it (also the user turns of TRL exports)."""
    feedback = str(field_of(observation, "feedback", "")).strip() or "(no feedback)"
    return f"Result: {summarize_step(observation)}\n\n{_clip(feedback, MAX_FEEDBACK_CHARS)}"


def build_messages(
    observation: Any,
    best_code: Optional[str] = None,
    history: Sequence[Any] = (),
    *,
    best_score: Optional[float] = None,
    last_code: Optional[str] = None,
    last_error: Optional[str] = None,
) -> list[dict[str, str]]:
    """The chat messages (system + user) asking for the next submission.

    ``observation`` is the latest one (from ``reset`` or the last ``step``); ``history`` the
    observations of earlier steps, oldest first (summarised, one line each); ``best_code`` the best
    submission so far and ``best_score`` its score; ``last_code`` the last submission, shown next to
    its feedback when it is not the best one; ``last_error`` why the model's last reply could not
    be used (no code, timeout), which the observation cannot tell. The user message always starts
    with a ``Task: <id>`` line.
    """
    task_id = field_of(observation, "task_id", "unknown")
    turn = int(field_of(observation, "turn", 0))
    max_turns = int(field_of(observation, "max_turns", 1))
    lines = [
        f"Task: {task_id}",
        f"Difficulty: {field_of(observation, 'difficulty', 'unknown')}; backend: {field_of(observation, 'backend', 'cpu')}; "
        f"submission {min(turn + 1, max_turns)} of {max_turns}.",
        "",
    ]
    prompt = str(field_of(observation, "prompt", "")).strip()
    if prompt:
        lines += [prompt, ""]
    reference = str(field_of(observation, "reference_code", "")).strip()
    if reference and reference not in prompt:
        lines += ["Reference implementation:", _fence(reference), ""]
    if history:
        lines += ["Earlier submissions:"] + [f"- {summarize_step(o)}" for o in list(history)[-MAX_HISTORY_LINES:]] + [""]
    if turn > 0:
        if last_code and last_code != best_code:
            lines += ["Your last submission:", _fence(_clip(last_code, MAX_CODE_CHARS)), ""]
        lines += ["Feedback on your last submission:", feedback_message(observation), ""]
    if last_error:
        lines += [f"Your last reply could not be used: {last_error}", ""]
    if best_code:
        score = f" (score {best_score:.2f})" if best_score is not None else ""
        lines += [f"Your best submission so far{score}:", _fence(_clip(best_code, MAX_CODE_CHARS)), ""]
        lines.append("Improve on it: keep it correct and make it faster.")
    else:
        lines.append("Write ModelNew.")
    lines.append("Reply with one ```python code block holding the complete module.")
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
# An opening fence (``` or ~~~, optional language tag) up to its closing fence, or to the end of a
# reply cut off by max_tokens.
_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_DEFINES_MODELNEW = re.compile(r"^[ \t]*class[ \t]+ModelNew\b", re.MULTILINE)
_CODE_START = re.compile(r"^(import |from |class |def |@|#)", re.MULTILINE)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _strip_thinking(text: str) -> str:
    text = _THINK_BLOCK.sub("", text)
    close = list(_THINK_CLOSE.finditer(text))
    if close:  # a reply whose opening tag was eaten by the chat template: drop the reasoning before it
        text = text[close[-1].end():]
    opened = _THINK_OPEN.search(text)
    if opened:  # reasoning cut off before it closed
        text = text[: opened.start()]
    return text


def _trim_to_code(text: str) -> Optional[str]:
    """A reply without fences: from the first code-looking line, without trailing prose."""
    start = _CODE_START.search(text)
    if start is None:
        return None
    lines = text[start.start():].rstrip().split("\n")
    for end in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:end])
        if _DEFINES_MODELNEW.search(candidate) and _parses(candidate):
            return candidate.rstrip() + "\n"
    return "\n".join(lines) + "\n"


def parse_reply(text: Optional[str]) -> ParsedReply:
    """Extract the submission from a model reply.

    Removes ``<think>`` sections and Windows line endings, then takes the last fenced block that
    defines ``ModelNew`` (preferring one that parses as Python), else the whole reply when it
    defines ``ModelNew`` without fences (leading and trailing prose trimmed).
    """
    if not text or not text.strip():
        return ParsedReply(None, "the reply was empty")
    raw = text.replace("\r\n", "\n").replace("\r", "\n")
    body = _strip_thinking(raw)
    blocks = [m.group(3) for m in _FENCE.finditer(body)]
    defining = [(i, b) for i, b in enumerate(blocks) if _DEFINES_MODELNEW.search(b)]
    if defining:
        parsing = [(i, b) for i, b in defining if _parses(b)]
        index, code = (parsing or defining)[-1]
        return ParsedReply(code.rstrip() + "\n", None, f"fenced block {index + 1} of {len(blocks)}")
    if _DEFINES_MODELNEW.search(body):
        code = _trim_to_code(body)
        if code is not None:
            return ParsedReply(code, None, "whole reply")
    if not body.strip() and _THINK_OPEN.search(raw):
        return ParsedReply(None, "the reply ended inside a <think> section (raise max_tokens)")
    if blocks:
        return ParsedReply(None, f"none of the {len(blocks)} code blocks defines class ModelNew")
    return ParsedReply(None, "the reply has no code block defining class ModelNew")


def summarize_action(code: Optional[str]) -> str:
    """A short single-line stand-in for a submission in logs: ``sha=ab12cd34 bytes=1234 lines=40``."""
    if code is None:
        return "none"
    data = code.encode("utf-8")
    return f"sha={hashlib.sha256(data).hexdigest()[:8]} bytes={len(data)} lines={len(code.splitlines())}"
