"""HTML escaping and the one-line status notice every tab writes."""
from __future__ import annotations

import html
from typing import Any


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def status_html(message: str, kind: str = "info") -> str:
    """A one-line notice in the page: info, ok, busy or error."""
    return f'<div class="kp-status kp-status-{kind}" data-kind="{kind}">{esc(message)}</div>'


