"""WCAG contrast of every visible text in a part of the page, measured in the browser.

For each element with its own visible text (and each SVG <text>), the text colour (its alpha and
the opacity of every ancestor applied) is composited over the background actually behind it: the
element's and its ancestors' background colours, composited from the first opaque one (the page's
background when none is). WCAG 2.x: at least 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold).
Gradients and images are not backgrounds this page uses; the check fails loudly if it meets one.
"""
from __future__ import annotations

LOW_CONTRAST = r"""(roots) => {
  const parse = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const lum = c => { const v = c.slice(0, 3).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const pageBg = () => { for (const el of [document.querySelector('gradio-app'), document.body, document.documentElement]) {
      const c = el && parse(getComputedStyle(el).backgroundColor); if (c && c[3] > 0) return over(c, [255, 255, 255, 1]); }
    return [255, 255, 255, 1]; };
  const background = el => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.backgroundImage && cs.backgroundImage !== 'none' && !(e instanceof SVGElement))
        return {error: 'background image on ' + (e.id || e.className)};
      const c = parse(cs.backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : pageBg();
    while (layers.length) bg = over(layers.pop(), bg);
    return {bg};
  };
  const opacity = el => { let o = 1; for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity); return o; };
  const visible = el => { const r = el.getBoundingClientRect(); const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && el.getClientRects().length > 0; };
  // Gradio's own: its progress timer, and the editor's syntax colours (the line marker's gutter number is ours).
  const SKIP = '[aria-hidden="true"], [data-testid="status-tracker"], .cm-content';
  const seen = new Set(); const out = []; let checked = 0;
  for (const sel of roots) for (const root of document.querySelectorAll(sel)) {
    const candidates = [root, ...root.querySelectorAll('*')];
    for (const el of candidates) {
      if (seen.has(el)) continue; seen.add(el);
      const svgText = el instanceof SVGElement && (el.tagName === 'text' || el.tagName === 'tspan');
      if (el instanceof SVGElement && !svgText) continue;
      const own = [...el.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim()).map(n => n.textContent.trim()).join(' ');
      if (!own || !visible(el) || el.closest(SKIP)) continue;
      const cs = getComputedStyle(el);
      let fg = parse(svgText ? cs.fill : cs.color);
      if (!fg) { out.push({text: own.slice(0, 60), where: sel, error: 'colour ' + (svgText ? cs.fill : cs.color)}); continue; }
      const {bg, error} = background(el);
      if (error) { out.push({text: own.slice(0, 60), where: sel, error}); continue; }
      fg = over([fg[0], fg[1], fg[2], fg[3] * opacity(el)], bg);
      const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
      const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      const r = ratio(fg, bg); checked++;
      if (r < need) out.push({text: own.slice(0, 60), where: sel, ratio: Math.round(r * 100) / 100, need,
                              fg: fg.slice(0, 3).map(Math.round).join(','), bg: bg.slice(0, 3).map(Math.round).join(','),
                              cls: String(el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className)});
    }
  }
  return {checked, failures: out};
}"""

# The playground's own views (Gradio's inputs and buttons are Gradio's theme): the header, status lines,
# verdicts and badges, charts (SVG text included), the cost table and roofline panel, flags, step headers,
# summaries, timelines and tables, the runs list, the attack gallery and the sandbox panel.
OWN_VIEWS = ["[class*='kp-']", "#play-step-header", "#runs-step-header", "#episode-summary", "#runs-summary",
             "#play-mismatch-summary", "#timeline", "#runs-timeline", "#runs-table", "#play-mismatch"]
