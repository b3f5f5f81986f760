"""The failing line, marked in the code views: the Play editor and each inspector's "Code of this step".

The harness record carries the line (``EvalResult.failing_line``: a hack's construct, the first
static error, or where loading raised); the verdict banner writes it as ``data-line`` with the
line's text in the submitted code (``data-line-text``, ui/step_view.py). gr.Code (CodeMirror 6)
has no API for markers, so this script marks the DOM CodeMirror draws: the gutter number and the
line whose top is level with it get the class ``kp-line-error`` (style.py). CodeMirror redraws
lines and gutters as it likes, so a MutationObserver re-applies the mark after every change (one
pass per animation frame; a pass that finds the mark in place changes nothing). A view whose line
no longer holds the submitted text (the person edited or loaded other code) is left unmarked; a
new failing line scrolls the editor's own scroller to it (never the page: the verdict is followed
by play_tab.FOLLOW_VERDICTS).
"""

MARK_CLASS = "kp-line-error"

MARK_LINES = """() => {
  if (window.kpLines) return; window.kpLines = true;
  const CLS = '%(cls)s';
  let queued = false; const shown = {};
  const visible = el => el && el.getClientRects().length > 0;
  function views(prefix) {
    return (prefix === 'play' ? ['#editor', '#play-code'] : ['#' + prefix + '-code'])
      .map(sel => document.querySelector(sel)).filter(Boolean);
  }
  function clear(root, keep) {
    root.querySelectorAll('.' + CLS).forEach(el => { if (!keep.includes(el)) el.classList.remove(CLS); });
  }
  function find(root, line) {
    const gutter = [...root.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
      .find(g => g.textContent === String(line) && g.style.visibility !== 'hidden');
    if (!visible(gutter)) return null;
    const top = gutter.getBoundingClientRect().top;
    const row = [...root.querySelectorAll('.cm-content > .cm-line')]
      .find(l => Math.abs(l.getBoundingClientRect().top - top) < 2);
    return row ? [gutter, row] : null;
  }
  function scrollTo(root, line, found) {
    const sc = root.querySelector('.cm-scroller');
    if (!sc || sc.scrollHeight <= sc.clientHeight + 1) return;
    const first = root.querySelector('.cm-content > .cm-line');
    const lh = (first && first.getBoundingClientRect().height) || 18;
    const y = found ? found[0].getBoundingClientRect().top - sc.getBoundingClientRect().top + sc.scrollTop
                    : (line - 1) * lh;
    if (y < sc.scrollTop || y > sc.scrollTop + sc.clientHeight - lh)
      sc.scrollTop = Math.max(0, y - sc.clientHeight / 3);
  }
  function pass() {
    queued = false;
    for (const badges of document.querySelectorAll('[id$="-badges"]')) {
      const prefix = badges.id.slice(0, -'-badges'.length);
      const v = badges.querySelector('.kp-verdict[data-line]');
      const line = v ? parseInt(v.dataset.line, 10) : 0;
      const text = v ? v.dataset.lineText : '';
      const key = v ? (badges.querySelector('[data-step]')?.dataset.step || '') + ':' + line : '';
      for (const root of views(prefix)) {
        if (!line || !visible(root)) { if (!line) clear(root, []); continue; }
        const found = find(root, line);
        const fresh = shown[root.id] !== key;
        const same = found && found[1].textContent.trim() === text;
        if (fresh) { shown[root.id] = key; if (!found || same) scrollTo(root, line, found); }
        if (!same) { clear(root, []); continue; }
        clear(root, found);
        found.forEach(el => { if (!el.classList.contains(CLS)) el.classList.add(CLS); });
      }
    }
  }
  const schedule = () => { if (!queued) { queued = true; requestAnimationFrame(pass); } };
  new MutationObserver(schedule).observe(document.body, {subtree: true, childList: true, characterData: true,
    attributes: true, attributeFilter: ['class', 'style', 'data-line', 'open']});
  schedule();
}""" % {"cls": MARK_CLASS}
