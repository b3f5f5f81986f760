"""Pure renderers for the modeled cost of each launch and the sm_90 compile of each kernel."""
from __future__ import annotations

import html
from typing import Optional

from environment.evaluation.result import CompileInfo, ModeledCost, PerformanceResult
from ui.fidelity import fidelity_html


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n}"


def _flops(flops: dict[str, float]) -> str:
    parts = [f"{v / 1e6:.3g} M {k}" for k, v in sorted(flops.items()) if v]
    return ", ".join(parts) or "–"


def launches_table(title: str, cost: Optional[ModeledCost]) -> str:
    if cost is None or not cost.launches:
        return ""
    rows = "".join(
        f"<tr><td>{_e(l.name)}</td><td>{l.programs}</td><td>{_bytes(l.bytes_unique)}</td>"
        f"<td>{_bytes(l.bytes_sectors)}</td><td>{_e(_flops(l.flops))}</td><td>{l.time_us:.3g}</td>"
        f"<td>{_e(l.bound)}</td><td>{l.peak_fraction:.0%}</td></tr>" for l in cost.launches)
    return (f'<div class="kp-costs" data-launches="{len(cost.launches)}"><div class="kp-chart-title">{_e(title)}: '
            f"{cost.time_us:.3g} µs on {_e(cost.target)} in {len(cost.launches)} launch(es)"
            f"{' at ' + _e(cost.shape) if cost.shape else ''}, {cost.peak_fraction:.0%} of peak</div>"
            "<table><thead><tr><th>launch</th><th>programs</th><th>unique bytes</th><th>sector bytes</th>"
            f"<th>FLOPs</th><th>µs</th><th>bound</th><th>of peak</th></tr></thead><tbody>{rows}</tbody></table></div>")


def compile_table(infos: list[CompileInfo]) -> str:
    if not infos:
        return ""
    rows = "".join(
        f"<tr><td>{_e(i.kernel)}</td><td>{'ok' if i.ok else 'failed'}</td><td>{i.registers if i.registers is not None else '–'}</td>"
        f"<td>{i.spills if i.spills is not None else '–'}</td>"
        f"<td>{_bytes(i.shared_bytes) if i.shared_bytes is not None else '–'}</td>"
        f"<td>{_e(i.error or '')}</td></tr>" for i in infos)
    return ('<div class="kp-compile"><div class="kp-chart-title">Ahead-of-time compile for sm_90 (H100)</div>'
            "<table><thead><tr><th>kernel</th><th>compile</th><th>registers</th><th>spills (bytes)</th>"
            f"<th>shared memory</th><th>error</th></tr></thead><tbody>{rows}</tbody></table></div>")


def cost_breakdown_html(perf: Optional[PerformanceResult]) -> str:
    """Per-launch modeled costs (candidate and reference) and per-kernel compile results."""
    if perf is None:
        return ""
    modeled = perf.modeled_candidate is not None and perf.modeled_candidate.launches
    return (launches_table("Your submission, modeled", perf.modeled_candidate)
            + launches_table("Reference, modeled", perf.modeled_reference)
            + (fidelity_html() if modeled else "") + compile_table(perf.compile))
