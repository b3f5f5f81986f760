"""The API tab: a complete, runnable client snippet for this very server (the address the page is served
from, filled in by the page itself), the task chosen in Play and the install line."""
from __future__ import annotations

from typing import Any

import gradio as gr

from environment.config import setting
from ui.markup import esc

# The page writes its own origin into every .kp-origin (the server cannot know the address a proxy shows).
FILL_ORIGIN = """() => {
  const fill = () => document.querySelectorAll('.kp-origin').forEach(e => {
    if (e.textContent !== location.origin) e.textContent = location.origin;  // (no change: no new mutation)
  });
  fill(); new MutationObserver(fill).observe(document.body, {subtree: true, childList: true});
}"""


def install_line() -> str:
    space = setting("SPACE_ID") or None
    if space:
        return f'pip install "git+https://huggingface.co/spaces/{space}"'
    return "git clone <this repository> && cd kernel-playground && pip install -e ."


def snippet_html(task_id: str) -> str:
    """A whole program: install, connect, reset on ``task_id``, submit the starting template, print the verdict."""
    code = (f'from environment.client import KernelEnv\nfrom environment.models import KernelAction\n\n'
            f'with KernelEnv(base_url="<span class="kp-origin">http://localhost:7860</span>").sync() as env:\n'
            f'    obs = env.reset(task_id="{esc(task_id)}", seed=0).observation\n'
            '    print(obs.prompt)  # the task, its reference Model and the rules\n'
            '    code = open("my_kernel.py").read()  # your ModelNew (the Play tab\'s editor)\n'
            '    result = env.step(KernelAction(code=code))\n'
            '    print(result.reward, result.observation.feedback)\n')
    return (f'<div class="kp-api" data-task="{esc(task_id)}"><p>Install the client:</p>'
            f'<pre><code>{esc(install_line())}</code></pre><p>Play the task chosen in Play '
            f'(<code>{esc(task_id)}</code>) on this server:</p><pre><code>{code}</code></pre>'
            '<p>The same server speaks OpenEnv over <code>/ws</code> and HTTP (<code>POST /reset</code>, '
            '<code>POST /step</code>, <code>GET /tasks</code>, <code>GET /sandbox</code>); '
            'see <a href="../docs" target="_blank">the API docs</a>.</p></div>')


def build(play: Any, first_task: str) -> Any:
    box = gr.HTML(snippet_html(first_task), elem_id="api-snippet")
    play.task.change(lambda t: snippet_html(t or first_task), [play.task], [box], queue=False, show_progress="hidden")
    return box
