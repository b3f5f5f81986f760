"""Any observation as HTML: scalars, text, markdown (raw HTML off), lists, tables and images.

Every string is escaped; markdown is rendered with raw HTML disabled; images are shown only from
``data:image/(png|jpeg|gif|webp);base64`` values, bare base64 in an image-named field, or http(s)
URLs ending in an image extension.
"""
from __future__ import annotations

import base64
import binascii
import html
import json
import re
from typing import Any, Optional

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).disable("image")
_DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=\s]+$")
_URL_IMAGE = re.compile(r"^https?://[^\s\"'<>]+\.(png|jpe?g|gif|webp)(\?[^\s\"'<>]*)?$", re.IGNORECASE)
_IMAGE_NAMES = re.compile(r"image|img|frame|screenshot|picture|render", re.IGNORECASE)
_MARKDOWN_NAMES = re.compile(r"markdown|_md$|^md$|prompt|instructions|description|feedback|text", re.IGNORECASE)
_MAGIC = {b"\x89PNG": "png", b"\xff\xd8\xff": "jpeg", b"GIF8": "gif", b"RIFF": "webp"}
MAX_DEPTH = 6
MAX_ITEMS = 200
MAX_TEXT = 200_000


def _bare_base64_image(value: str) -> Optional[str]:
    if len(value) < 16 or not re.fullmatch(r"[A-Za-z0-9+/=\s]+", value[:4096]):
        return None
    try:
        head = base64.b64decode(value[:64] + "=" * (-len(value[:64]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return f"data:image/{kind};base64,{value.strip()}"
    return None


def image_src(name: str, value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _DATA_IMAGE.match(text):
        return text
    if _URL_IMAGE.match(text):
        return text
    if _IMAGE_NAMES.search(name or ""):
        return _bare_base64_image(text)
    return None


def _string(name: str, value: str) -> str:
    src = image_src(name, value)
    if src:
        return f'<img class="gen-img" alt="{html.escape(name)}" src="{html.escape(src, quote=True)}">'
    value = value[:MAX_TEXT]
    if _MARKDOWN_NAMES.search(name or "") and ("\n" in value or len(value) > 80):
        return f'<div class="gen-md">{_MD.render(value)}</div>'
    if "\n" in value or len(value) > 120:
        return f'<pre class="gen-text">{html.escape(value)}</pre>'
    return f'<span class="gen-str">{html.escape(value)}</span>'


def _table(rows: list[Any]) -> Optional[str]:
    if rows and all(isinstance(r, dict) for r in rows):
        columns: list[str] = []
        for r in rows:
            columns += [k for k in r if k not in columns]
        if len(columns) > 30:
            return None
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{value_html(c, r.get(c), 3)}</td>" for c in columns) + "</tr>"
                       for r in rows[:MAX_ITEMS])
        return f'<table class="gen-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    if rows and all(isinstance(r, list) for r in rows) and all(
            not isinstance(c, (dict, list)) for r in rows for c in r):
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                       for r in rows[:MAX_ITEMS])
        return f'<table class="gen-table"><tbody>{body}</tbody></table>'
    return None


def value_html(name: str, value: Any, depth: int = 0) -> str:
    if depth > MAX_DEPTH:
        return f'<pre class="gen-text">{html.escape(json.dumps(value, default=str)[:2000])}</pre>'
    if value is None:
        return '<span class="gen-null">null</span>'
    if isinstance(value, bool):
        return f'<span class="gen-bool">{str(value).lower()}</span>'
    if isinstance(value, (int, float)):
        return f'<span class="gen-num">{html.escape(repr(value))}</span>'
    if isinstance(value, str):
        return _string(name, value)
    if isinstance(value, list):
        table = _table(value)
        if table:
            return table
        items = "".join(f"<li>{value_html(name, v, depth + 1)}</li>" for v in value[:MAX_ITEMS])
        more = f"<li>… {len(value) - MAX_ITEMS} more</li>" if len(value) > MAX_ITEMS else ""
        return f'<ol class="gen-list" start="0">{items}{more}</ol>' if value else '<span class="gen-null">[]</span>'
    if isinstance(value, dict):
        if not value:
            return '<span class="gen-null">{}</span>'
        rows = "".join(f'<dt>{html.escape(str(k))}</dt><dd data-field="{html.escape(str(k), quote=True)}">'
                       f"{value_html(str(k), v, depth + 1)}</dd>" for k, v in value.items())
        return f'<dl class="gen-dict">{rows}</dl>'
    return f'<span class="gen-str">{html.escape(str(value))}</span>'


def step_html(n: int, label: str, action: Any, result: dict[str, Any], error: Optional[str] = None) -> str:
    """One step: its action, the reward and done, and the observation."""
    reward = result.get("reward")
    done = bool(result.get("done"))
    head = (f'<div class="gen-step-head"><b>{html.escape(label)}</b> '
            f'<span class="gen-reward" data-reward="{html.escape(str(reward))}">reward {html.escape(str(reward))}</span> '
            f'<span class="gen-done" data-done="{str(done).lower()}">{"done" if done else "not done"}</span></div>')
    parts = [head]
    if action is not None:
        parts.append(f'<details><summary>action</summary>{value_html("action", action)}</details>')
    if error:
        parts.append(f'<div class="gen-error">{html.escape(error)}</div>')
    observation = result.get("observation")
    if observation is not None:
        parts.append(f'<div class="gen-obs">{value_html("observation", observation)}</div>')
    return f'<div class="gen-step" data-step="{n}">{"".join(parts)}</div>'


STYLE = """<style>
.gen-step{border:1px solid #d0d7de;border-radius:6px;padding:.5em .8em;margin:.5em 0}
.gen-step-head{margin-bottom:.3em}.gen-reward{font-weight:600;color:#0a6b2d;margin-left:.6em}
.gen-done{margin-left:.6em;color:#57606a}.gen-done[data-done="true"]{color:#8250df;font-weight:600}
.gen-dict{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:0}
.gen-dict dt{font-family:monospace;color:#57606a}.gen-dict dd{margin:0}
.gen-text{white-space:pre-wrap;max-height:24em;overflow:auto;background:#f6f8fa;padding:.4em;margin:0}
.gen-table{border-collapse:collapse}.gen-table td,.gen-table th{border:1px solid #d0d7de;padding:.15em .5em}
.gen-img{max-width:100%;max-height:24em}.gen-error{color:#b3261e;font-weight:600}.gen-null{color:#8c959f}
.gen-warn{color:#9a6700}
</style>"""


def episode_html(steps_html: list[str]) -> str:
    body = "".join(reversed(steps_html)) if steps_html else "No episode yet: connect, then Reset."
    return f'{STYLE}<div class="gen-episode{"" if steps_html else " gen-empty"}">{body}</div>'
