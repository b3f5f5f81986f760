"""The Export tab: every stored episode of this browser as JSONL / Parquet, or pushed to a Hub dataset."""
from __future__ import annotations

import gradio as gr

from ui.markup import status_html
from ui.common import SESSIONS, guarded
from ui.players import typed_token
from ui.generic.collect_export import collect_files
from ui.replay_export import export_files, push


def build() -> None:
    gr.Markdown("Every episode this browser played and the server kept (Play and Compare, across reloads; see "
                "Runs), one record per episode: task, seed, "
                "player, per-step records (code, observation, reward, model prompt and reply) and the TRL-ready "
                "`messages` (system/user/assistant) and `prompt` columns. Load them with "
                "`datasets.load_dataset(\"json\" | \"parquet\", data_files=...)`. Tokens are never written.")
    with gr.Row():
        export_btn = gr.Button("Prepare export", variant="primary", elem_id="export-btn")
        dl_jsonl = gr.DownloadButton("Download JSONL", interactive=False, elem_id="download-jsonl")
        dl_parquet = gr.DownloadButton("Download Parquet", interactive=False, elem_id="download-parquet")
    collect = gr.File(label="The same episodes as `openenv collect` writes them: results.jsonl, metadata.json, README.md "
                      "(dataset card; hacked episodes kept with their flags)", file_count="multiple", interactive=False,
                      elem_id="download-collect")
    status = gr.HTML(status_html("Press Prepare export after playing."), elem_id="export-status")
    gr.Markdown("#### Push to a Hugging Face dataset")
    with gr.Row():
        repo = gr.Textbox(label="Dataset repo id (owner/name)", elem_id="hub-repo")
        hub_token = gr.Textbox(label="Write token (yours; the Space's token is never used)", type="password",
                               elem_id="hub-token")
        private = gr.Checkbox(True, label="Private")
        push_btn = gr.Button("Push", elem_id="hub-push-btn")
    hub_status = gr.HTML("", elem_id="hub-status")

    @guarded(status)
    def on_export(request: gr.Request):
        records = SESSIONS.get(request).exportable()
        jsonl, parquet = export_files(records)
        return {dl_jsonl: gr.DownloadButton(value=str(jsonl), interactive=True),
                dl_parquet: gr.DownloadButton(value=str(parquet), interactive=True), collect: collect_files(records),
                status: status_html(f"{len(records)} episode(s) ready: {jsonl.name} and {parquet.name}.", "ok")}

    @guarded(hub_status)
    def on_push(repo_id, tok, is_private, request: gr.Request):
        records = SESSIONS.get(request).exportable()
        url = push(records, repo_id, typed_token(tok), bool(is_private))
        return {hub_status: status_html(f"Pushed {len(records)} episode(s): {url}", "ok")}

    export_btn.click(on_export, None, [dl_jsonl, dl_parquet, collect, status], api_name="export")
    push_btn.click(on_push, [repo, hub_token, private], [hub_status], api_name="push_to_hub",
                   concurrency_limit=4)
