"""The page's header text and CSS (openenv's mount sets the app CSS, so ours travels in a <style>)."""
from __future__ import annotations

from ui.signals_view import CSS as SIGNALS_CSS

CSS = """
.gradio-container.gradio-container { max-width: 1480px !important; margin: 0 auto !important; }
.kp-hero h1 { margin: 4px 0 6px; font-size: 30px; letter-spacing: -.02em; }
.gradio-container .prose .kp-hero p { margin: 4px 0; max-width: 1100px; color: var(--body-text-color-subdued); }
.kp-hero .kp-score { font-family: var(--font-mono); font-size: 13px; }
/* Gradio's ".prose *" gives every element in a gr.HTML the body text colour (specificity 0,2,0), which beat
   the colours below until they were scoped as .gradio-container .prose (light text on a pale badge in one
   theme, dark text on the hack red in the other). Inside a coloured box, text takes the box's colour. */
.gradio-container .prose :is(.kp-badge, .kp-verdict, .kp-status, .kp-flag) * { color: inherit; }
.kp-badges { display: flex; flex-wrap: wrap; gap: 8px; margin: 4px 0; }
.kp-badge { border-radius: 999px; padding: 4px 12px; font-size: 13px; border: 1px solid transparent;
  max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.kp-badge small { opacity: .8; }
.gradio-container .prose .kp-pass { background: #e3f4e1; color: #1d5a17; border-color: #9fd39a; }
.gradio-container .prose .kp-fail { background: #fde4e1; color: #8a1c10; border-color: #f2a59c; }
.gradio-container .prose .kp-warn { background: #fff3d6; color: #6b4800; border-color: #f0cf7e; }
.gradio-container .prose .kp-skip { background: transparent; color: var(--body-text-color-subdued);
  border-color: var(--border-color-primary); }
.dark .gradio-container .prose .kp-pass { background: #173d14; color: #c9f0c3; border-color: #3f7a38; }
.dark .gradio-container .prose .kp-fail { background: #4a1510; color: #ffd3cc; border-color: #a3392c; }
.dark .gradio-container .prose .kp-warn { background: #47340a; color: #ffe4a8; border-color: #9c7a22; }
/* One verdict per step: hack red, wrong amber, failed to load grey, correct green, environment error blue-grey. */
.kp-verdict { flex-basis: 100%; border-radius: 10px; padding: 10px 14px; border-left: 6px solid; }
.kp-verdict-title { font-size: 17px; font-weight: 700; }
.kp-verdict-detail { font-size: 13px; margin-top: 2px; overflow-wrap: anywhere; }
.gradio-container .prose .kp-v-hack { background: #b3261e; color: #fff; border-color: #5c0d08; }
.gradio-container .prose .kp-v-warn { background: #fff0c7; color: #5a3d00; border-color: #d99a00; }
.gradio-container .prose .kp-v-muted { background: #ececec; color: #333; border-color: #8c8c8c; }
.gradio-container .prose .kp-v-ok { background: #e3f4e1; color: #14470f; border-color: #3d9a33; }
.gradio-container .prose .kp-v-info { background: #e6ecf3; color: #1f3550; border-color: #6b88ad; }
.dark .gradio-container .prose .kp-v-hack { background: #8f1d16; color: #fff; border-color: #ff8a80; }
.dark .gradio-container .prose .kp-v-warn { background: #4a3608; color: #ffe6a6; border-color: #f0b429; }
.dark .gradio-container .prose .kp-v-muted { background: #2e2e2e; color: #e6e6e6; border-color: #9a9a9a; }
.dark .gradio-container .prose .kp-v-ok { background: #16391a; color: #cdf3c7; border-color: #5cc44f; }
.dark .gradio-container .prose .kp-v-info { background: #1f2b3a; color: #d6e4f5; border-color: #7fa3d1; }
.kp-flags { display: flex; flex-wrap: wrap; gap: 6px; font-size: 13px; }
.kp-flag { border-radius: 6px; padding: 2px 8px; font-family: var(--font-mono); }
.gradio-container .prose .kp-hack { background: #b3261e; color: #fff; }
.gradio-container .prose .kp-warning { background: #fff3d6; color: #6b4800; }
.dark .gradio-container .prose .kp-warning { background: #47340a; color: #ffe4a8; }
.gradio-container .prose .kp-muted { color: var(--body-text-color-subdued); font-size: 13px; }
.kp-chart { border: 1px solid var(--border-color-primary); border-radius: 10px; padding: 10px 12px; }
.kp-chart-title { font-weight: 600; font-size: 14px; margin-bottom: 6px; }
.kp-costs, .kp-compile { margin-top: 10px; overflow-x: auto; }
.kp-costs table, .kp-compile table { border-collapse: collapse; font-size: 12px; width: 100%; }
.kp-costs th, .kp-costs td, .kp-compile th, .kp-compile td { border-bottom: 1px solid var(--border-color-primary); padding: 3px 6px; text-align: left; }
.kp-svg { display: block; max-width: 100%; height: auto; }
/* Each chart is drawn twice (ui/widths.py): the phone drawing where the chart is under 600 px wide. */
.kp-chart { container-type: inline-size; }
.gradio-container .kp-chart svg.kp-svg-narrow { display: none; }
@container (max-width: 599px) {
  .gradio-container .kp-chart svg.kp-svg-wide { display: none; }
  .gradio-container .kp-chart svg.kp-svg-narrow { display: block; }
}
.kp-fidelity { font-size: 13px; margin-top: 6px; }
/* CodeMirror sizes its line-number rows from measured line heights, and measures an editor only while it is
   in the viewport: a code view filled off-screen (Compare's best code, below the fold) keeps a 14 px estimate
   beside 16.8 px lines, so the numbers drift. The rows take their own line height instead (the same as the
   text's; lines do not wrap), so they stay level however the view is reached. The width spacer is left alone. */
.cm-lineNumbers .cm-gutterElement:not([style*="visibility"]) { height: auto !important; }
.kp-fidelity summary { cursor: pointer; text-decoration: underline; }
.kp-svg-label { font: 12px var(--font-mono, monospace); fill: var(--body-text-color, #222); }
.kp-svg-muted { font: 12px var(--font-mono, monospace); fill: var(--body-text-color-subdued, #666); }
.kp-svg-grid { stroke: var(--border-color-primary, #ddd); }
.kp-svg-band { fill: var(--body-text-color, #000); opacity: .18; }
.kp-whisker line { stroke: var(--body-text-color, #222); stroke-width: 1.5; }
.kp-legend { display: inline-flex; align-items: center; gap: 4px; margin-right: 12px; font-size: 12px;
  font-family: var(--font-mono); }
.kp-legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; }
.kp-status { border-radius: 8px; padding: 8px 12px; font-size: 14px; }
.kp-status-info { background: var(--background-fill-secondary); }
.gradio-container .prose .kp-status-ok { background: #e3f4e1; color: #1d5a17; }
.gradio-container .prose .kp-status-busy { background: #e6effb; color: #183f73; }
.gradio-container .prose .kp-status-error { background: #fde4e1; color: #8a1c10; }
.gradio-container .prose .kp-status-hack { background: #b3261e; color: #fff; font-weight: 600; }
.gradio-container .prose .kp-status-warn { background: #fff0c7; color: #5a3d00; }
.gradio-container .prose .kp-status-muted { background: #ececec; color: #333; }
.dark .gradio-container .prose .kp-status-ok { background: #16391a; color: #cdf3c7; }
.dark .gradio-container .prose .kp-status-busy { background: #1b2c45; color: #d3e3fa; }
.dark .gradio-container .prose .kp-status-error { background: #4a1510; color: #ffd3cc; }
.dark .gradio-container .prose .kp-status-hack { background: #8f1d16; color: #fff; }
.dark .gradio-container .prose .kp-status-warn { background: #4a3608; color: #ffe6a6; }
.dark .gradio-container .prose .kp-status-muted { background: #2e2e2e; color: #e6e6e6; }
/* Phones: rows wrap, nothing scrolls sideways. */
@media (max-width: 640px) {
  .gradio-container .row, .gradio-container .form { flex-wrap: wrap !important; }
  .gradio-container .row > *, .gradio-container .form > * { min-width: 0 !important; flex-basis: 100% !important; }
  .gradio-container.gradio-container { min-width: 0 !important; max-width: 100vw !important; flex-shrink: 1 !important; }
  .gradio-container .main { padding-left: 8px !important; padding-right: 8px !important; }
  .kp-hero h1 { font-size: 24px; }
  .kp-badge { white-space: normal; }
}
/* The failing line in the code views (ui/line_marker.py): a red gutter number and a tinted line. */
.cm-gutterElement.kp-line-error { background: #b3261e !important; color: #fff !important; font-weight: 700;
  border-radius: 3px; }
.cm-line.kp-line-error { background: rgba(179, 38, 30, .10) !important; box-shadow: inset 3px 0 0 #b3261e; }
.dark .cm-line.kp-line-error { background: rgba(255, 138, 128, .14) !important; box-shadow: inset 3px 0 0 #ff8a80; }
.kp-why { margin-top: 10px; }
.kp-roof { stroke: var(--body-text-color, #222); }
.kp-group summary { cursor: pointer; font-weight: 600; padding: 4px 0; }
.kp-sandbox ul { margin: 6px 0; padding-left: 18px; }
.kp-winner { font-size: 18px; font-weight: 600; padding: 8px 0; }
"""

HEADER = f"""
<style>{CSS}{SIGNALS_CSS}</style>
<div class="kp-hero">
  <h1>Kernel Playground</h1>
  <p><b>kernel_env</b> is an OpenEnv reinforcement-learning environment for GPU kernel optimization. Each task is
  a PyTorch reference <code>Model</code>; a player (you, or a chat model) submits Python source defining
  <code>ModelNew</code>, written with Triton kernels or plain PyTorch. A sandboxed harness checks it against the
  reference on secret-seeded trials, times it (measured on a GPU, modeled for an H100 on CPU hosts) and hunts
  for reward hacks.</p>
  <p class="kp-score">score = compiled 0.10 + trials passed 0.30 + correct 0.10 + speed up to 0.50
  (1x earns 0.25 of it, 4x the full 0.50); any detected hack scores 0.</p>
  <p>New here? Press <b>▶ Run demo solution</b> (a shipped correct Triton kernel), or take the <b>3-minute
  tour</b>: a correct kernel, a wrong one, a reward hack caught red-handed, then a model playing.</p>
</div>
"""
