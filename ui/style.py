"""The page's header text and CSS (openenv's mount sets the app CSS, so ours travels in a <style>)."""
from __future__ import annotations

CSS = """
.gradio-container.gradio-container { max-width: 1480px !important; margin: 0 auto !important; }
.kp-hero h1 { margin: 4px 0 6px; font-size: 30px; letter-spacing: -.02em; }
.kp-hero p { margin: 4px 0; max-width: 1100px; color: var(--body-text-color-subdued); }
.kp-hero .kp-score { font-family: var(--font-mono); font-size: 13px; }
.kp-badges { display: flex; flex-wrap: wrap; gap: 8px; margin: 4px 0; }
.kp-badge { border-radius: 999px; padding: 4px 12px; font-size: 13px; border: 1px solid transparent;
  max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.kp-badge small { opacity: .8; }
.kp-pass { background: #e3f4e1; color: #1d5a17; border-color: #9fd39a; }
.kp-fail { background: #fde4e1; color: #8a1c10; border-color: #f2a59c; }
.kp-warn { background: #fff3d6; color: #7a5200; border-color: #f0cf7e; }
.kp-skip { background: transparent; color: var(--body-text-color-subdued); border-color: var(--border-color-primary); }
.kp-flags { display: flex; flex-wrap: wrap; gap: 6px; font-size: 13px; }
.kp-flag { border-radius: 6px; padding: 2px 8px; font-family: var(--font-mono); }
.kp-hack { background: #8a1c10; color: #fff; }
.kp-warning { background: #fff3d6; color: #7a5200; }
.kp-muted { color: var(--body-text-color-subdued); font-size: 13px; }
.kp-chart { border: 1px solid var(--border-color-primary); border-radius: 10px; padding: 10px 12px; }
.kp-chart-title { font-weight: 600; font-size: 14px; margin-bottom: 6px; }
.kp-costs, .kp-compile { margin-top: 10px; overflow-x: auto; }
.kp-costs table, .kp-compile table { border-collapse: collapse; font-size: 12px; width: 100%; }
.kp-costs th, .kp-costs td, .kp-compile th, .kp-compile td { border-bottom: 1px solid var(--border-color-primary); padding: 3px 6px; text-align: left; }
.kp-svg-label { font: 12px var(--font-mono, monospace); fill: var(--body-text-color, #222); }
.kp-svg-muted { font: 12px var(--font-mono, monospace); fill: #888; }
.kp-legend { display: inline-flex; align-items: center; gap: 4px; margin-right: 12px; font-size: 12px;
  font-family: var(--font-mono); }
.kp-legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; }
.kp-status { border-radius: 8px; padding: 8px 12px; font-size: 14px; }
.kp-status-info { background: var(--background-fill-secondary); }
.kp-status-ok { background: #e3f4e1; color: #1d5a17; }
.kp-status-busy { background: #e6effb; color: #183f73; }
.kp-status-error { background: #fde4e1; color: #8a1c10; }
.kp-winner { font-size: 18px; font-weight: 600; padding: 8px 0; }
"""

HEADER = f"""
<style>{CSS}</style>
<div class="kp-hero">
  <h1>Kernel Playground</h1>
  <p><b>kernel_env</b> is an OpenEnv reinforcement-learning environment for GPU kernel optimization. Each task is
  a PyTorch reference <code>Model</code>; a player (you, or a chat model) submits Python source defining
  <code>ModelNew</code>, written with Triton kernels or plain PyTorch. A sandboxed harness checks it against the
  reference on secret-seeded trials, times it (measured on a GPU, modeled for an H100 on CPU hosts) and hunts
  for reward hacks.</p>
  <p class="kp-score">score = compiled 0.10 + trials passed 0.30 + correct 0.10 + speed up to 0.50
  (1x earns 0.25 of it, 4x the full 0.50); any detected hack scores 0.</p>
  <p>New here? Press <b>Run demo solution</b>: it starts an episode and submits a shipped correct solution.</p>
</div>
"""
