"""The Play tab's model player: a model plays as a server-side job the page follows (Model step,
Auto-play, Stop, Continue after a restart cut it off), the 3-minute tour that ends with one model step,
and the model settings the browser keeps (never the token)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Optional

import gradio as gr

from environment.tasks import get_task
from ui.autoplay import INTERRUPTED, ModelJob
from ui.common import SESSIONS, checked_seed, checked_task, example_choices, example_code, guarded
from ui.markup import status_html
from ui.players import ModelSettings, human_turn, model_unreachable, resolve_token
from ui.session import PlayError, busy
from ui.verdict import verdict_of

TOUR = (("correct/", "a correct kernel"), ("wrong/", "a wrong one"), ("attack/", "a reward hack"))
PREFS_KEY = "kernel-playground-model-settings"  # localStorage: model id, base URL, sampling (not a secret)


# What the browser keeps of the Model player (never the token), made in the page from the four settings
REMEMBER_SETTINGS_JS = "(model, base_url, temperature, max_tokens) => ({model, base_url, temperature, max_tokens})"


class ModelPlay:
    """The model player's part of PlayTab (its components are PlayTab's: status, view, editor, model, ...)."""

    def apply_prefs(self, prefs: Any) -> dict:
        """The model settings this browser last used (kept in its localStorage), where they are valid."""
        if not isinstance(prefs, dict):
            return {}
        try:
            s = ModelSettings.checked(prefs.get("model"), prefs.get("base_url"), prefs.get("temperature"),
                                      prefs.get("max_tokens"))
        except PlayError:
            return {}
        return {self.model: s.model, self.base_url: s.base_url, self.temperature: s.temperature,
                self.max_tokens: s.max_tokens}

    def interrupted(self, session: Any, record: Any, settings: dict, why: str = INTERRUPTED) -> dict:
        """An auto-play a server restart (or a lost environment connection) cut off: shown as such, with
        its model settings and the action that continues it (the token is not stored: the visitor
        enters it again)."""
        handle = session.slot("play")
        handle.record, handle.done, handle.memory = record, True, None
        session.interrupted = record.episode_id
        step = record.steps[-1] if record.steps else None
        out = self.view.values(record, step, INTERRUPTED if why == INTERRUPTED else "interrupted")
        what = INTERRUPTED if why == INTERRUPTED else f"interrupted ({why})"
        out[self.status] = status_html(
            f"Auto-play of {settings.get('model')} on {record.task_id} (seed {record.seed}) was {what} after "
            f"{handle.turns_used} of {record.max_turns} turn(s). Press Continue auto-play to go on from step "
            f"{len(record.steps) + 1}: enter your token again (tokens are never stored), or leave it empty for "
            "the Space's own token (Hugging Face router only).", "warn")
        out.update(self.show_task(record.task_id))
        out.update({self.seed: record.seed, self.turns: record.max_turns,
                    self.model: settings.get("model"), self.base_url: settings.get("base_url"),
                    self.temperature: settings.get("temperature"), self.max_tokens: settings.get("max_tokens"),
                    self.continue_btn: gr.Button(visible=True)})
        last_code = next((s.code for s in reversed(record.steps) if s.code), None)
        if last_code:
            out[self.editor] = last_code
        return out

    def follow(self, session: Any):
        """Stream the browser's model job into the page until it ends (nothing when none runs)."""
        job = session.job
        if job is None:
            yield {self.status: gr.skip()}  # nothing to follow: leave the page as it is (no yield would clear it)
            return
        while True:
            version = job.version
            record = job.handle.record
            step = record.steps[-1] if record and record.steps else None
            out = self.episode(session, step, job.message, job.kind, progress=True)
            if step is not None and step.code:
                out[self.editor] = step.code
            if job.finished and job.interrupted:
                out.update(self.view.values(record, step, "interrupted"))
            yield out
            if job.finished and version == job.version:
                return
            job.wait_change(version)

    def model_handlers(self, ensure_episode: Any) -> SimpleNamespace:
        """The model player's event handlers; ``ensure_episode`` is the Play tab's (same task, seed, turns:
        the episode in play, else a new one)."""
        status = self.status

        def start_model(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request,
                        max_steps: Optional[int]):
            task_id, s = checked_task(task_id), checked_seed(seed_value)
            settings = ModelSettings.checked(model_id, url, temp, max_tok)
            session = SESSIONS.get(request)
            if session.running:
                raise PlayError("a model is already playing for this browser: wait for it, or press Stop")
            with busy(session):
                handle, note = ensure_episode(session, task_id, s, int(turns_value))
            ModelJob(session, handle, settings, resolve_token(tok, settings.base_url), max_steps=max_steps).start()
            yield from self.follow(session)

        @guarded(status)
        def on_model_step(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request: gr.Request):
            yield from start_model(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request, 1)

        @guarded(status)
        def on_autoplay(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request: gr.Request):
            yield from start_model(task_id, seed_value, turns_value, model_id, url, tok, temp, max_tok, request, None)

        def on_stop(request: gr.Request):
            session = SESSIONS.get(request)
            if not session.running:
                return {status: status_html("Nothing is running.", "info")}
            # What happens next is shown by the page following the job: writing the status here could
            # land after the job's last word and hide it.
            session.job.request_stop()
            return {status: gr.skip()}

        @guarded(status)
        def on_continue(model_id, url, tok, temp, max_tok, request: gr.Request):
            """Auto-play the interrupted episode on from its last stored step: same id, task, seed, history."""
            from ui.store import store
            settings = ModelSettings.checked(model_id, url, temp, max_tok)
            session = SESSIONS.get(request)
            if session.running:
                raise PlayError("a model is already playing for this browser: wait for it, or press Stop")
            episode_id = getattr(session, "interrupted", None)
            if not episode_id:
                raise PlayError("no interrupted auto-play to continue for this browser")
            with busy(session):
                handle = session.slot("play")
                record = store().get(episode_id)
                handle.resume(record)
                session.started(record)
            store().autoplay_ended(episode_id)  # the new job marks it again, for this process
            session.interrupted = None
            ModelJob(session, handle, settings, resolve_token(tok, settings.base_url)).start()
            yield {self.continue_btn: gr.Button(visible=False)}
            yield from self.follow(session)

        @guarded(status)
        def on_tour(task_id, seed_value, _turns, model_id, url, tok, temp, max_tok, request: gr.Request):
            """Correct, wrong, a hack, then the model: one episode of four turns on a graded task."""
            task_id, s = checked_task(task_id), checked_seed(seed_value)
            if not get_task(task_id).graded:
                task_id = "gelu_bias"
            settings = ModelSettings.checked(model_id, url, temp, max_tok)
            session = SESSIONS.get(request)
            if session.running:
                raise PlayError("a model is already playing for this browser: wait for it, or press Stop")
            keys = [v for _, v in example_choices(task_id)]
            picks = [(next((k for k in keys if k.startswith(prefix)), None), what) for prefix, what in TOUR]
            token = resolve_token(tok, settings.base_url)
            unreachable = model_unreachable(settings, token)  # asked first: the tour then says what it needs
            with busy(session):
                handle = session.slot("play")
                handle.reset(task_id, s, len(picks) + 1, player="human")
                session.started(handle.record)
            for i, (key, what) in enumerate(picks, 1):
                if key is None:
                    continue
                code = example_code(task_id, key)
                yield {status: status_html(f"Tour {i}/4: submitting {what} ({key})…", "busy"), self.editor: code,
                       **self.show_task(task_id), self.turns: len(picks) + 1}
                with busy(session):
                    step = human_turn(handle, code)
                v = verdict_of(step)
                yield self.episode(session, step, f"Tour {i}/4, {what}: {v.title}", v.style, progress=True)
            if unreachable:
                yield self.episode(session, step, f"Tour 4/4 needs a model, and none is reachable: {unreachable}. "
                                   "Enter a model id, API base URL and token under Model player and press Model "
                                   "step to watch one play. That is the tour: now write your own kernel.", "warn",
                                   progress=True)
                return
            ModelJob(session, handle, settings, token, max_steps=1).start()
            for out in self.follow(session):
                if self.status in out and not session.running:
                    line = status_html(f"Tour 4/4, the model {settings.model}: {session.job.message} — that is the "
                                       "tour: now write your own kernel.", session.job.kind)
                    out[self.status] = out[self.view.progress] = line
                yield out

        return SimpleNamespace(model_step=on_model_step, autoplay=on_autoplay, stop=on_stop,
                               continue_autoplay=on_continue, tour=on_tour)
