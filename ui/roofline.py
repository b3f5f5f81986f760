"""Why this speedup: each modeled launch against the H100 roofs, and a plain verdict.

Works from the ModeledCost records already in the evaluation (bytes, FLOPs, time and bound of
each launch) and the GPU spec the model used (gpus.yaml): nothing is re-measured.
"""
from __future__ import annotations

import html
import math
from typing import Optional

from environment.evaluation.result import LaunchCost, ModeledCost, PerformanceResult
from ui.fidelity import fidelity_html
from ui.widths import CHART_W, NARROW_W
from ui.verdict import num

H, L, B, T, R = 260, 64, 44, 12, 16  # height and margins of the chart (px); drawn at both chart widths


def _spec() -> dict:
    from environment.evaluation.modeled.model import load_spec
    return load_spec()


def _flops(l: LaunchCost) -> float:
    return float(sum(l.flops.values()))


def _mib(n: float) -> str:
    return f"{num(n / 2**20)} MiB" if n >= 2**20 else f"{num(n / 1024)} KiB" if n >= 1024 else f"{n:.0f} B"


def verdict_text(reference: Optional[ModeledCost], candidate: ModeledCost, spec: dict) -> str:
    """One sentence: what bounds the submission, and what would make it faster."""
    launches = candidate.launches
    if not launches:
        return "no launch was modeled"
    by_bound: dict[str, float] = {}
    for l in launches:
        by_bound[l.bound] = by_bound.get(l.bound, 0.0) + l.time_us
    bound = max(by_bound, key=lambda k: by_bound[k])
    n, overhead = len(launches), spec["launch_overhead_us"]
    ref_n = len(reference.launches) if reference else None
    ref_bytes = sum(l.bytes_unique for l in reference.launches) if reference else None
    bytes_ = sum(l.bytes_unique for l in launches)
    if bound == "launch":
        if n > 1:
            return (f"launch-bound: fuse the {n} launches into one (each costs at least {num(overhead)} µs of "
                    "launch gap on an H100)")
        return (f"launch-bound: one launch at the {num(overhead)} µs floor; the work is too small for the H100 "
                "to be busy, so this is as fast as the model goes")
    if bound == "memory":
        text = (f"memory-bound: {_mib(bytes_)} moved at up to {num(spec['hbm_bytes_per_s'] / 1e12)} TB/s; "
                "read and write each tensor once")
        if n > 1:
            text += f" (fuse the {n} launches so intermediates stay on chip)"
        elif ref_bytes and bytes_ < ref_bytes:
            text += f" (already {num(ref_bytes / bytes_)}x fewer bytes than the reference)"
        return text
    if bound == "compute":
        return "compute-bound: the FLOPs dominate; use tensor cores (tl.dot in bf16/fp16, or tf32 where allowed)"
    worst = max(launches, key=lambda l: l.time_us if l.bound == "occupancy" else 0)
    return (f"occupancy-bound: {worst.name} runs {worst.programs} program(s) on {spec['sm_count']} SMs; use more, "
            "smaller programs so every SM has work") + (f" (the reference uses {ref_n} launch(es))" if ref_n else "")


def chart_svg(reference: Optional[ModeledCost], candidate: ModeledCost, spec: dict, W: int = CHART_W) -> str:
    """Log-log roofline: x arithmetic intensity (FLOP/byte), y FLOP/s achieved; one dot per launch."""
    hbm, peak = spec["hbm_bytes_per_s"], spec["peak"]["fp32"]
    points, unplotted = [], 0
    for who, cost, color in (("reference", reference, "#8c8c8c"), ("yours", candidate, "#2f7ed8")):
        for l in (cost.launches if cost else []):
            if _flops(l) <= 0:  # no FLOPs counted (a copy, or work the counter charges as bytes only)
                unplotted += 1
                continue
            ai = _flops(l) / max(l.bytes_unique, 1)
            rate = _flops(l) / (l.time_us * 1e-6) if l.time_us > 0 else 0.0
            points.append((who, l, max(ai, 1e-3), max(rate, 1e6), color))
    x0, x1, y0, y1 = 1e-3, 1e3, 1e6, peak * 4

    def px(x: float) -> float:
        return L + (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * (W - L - R)

    def py(y: float) -> float:
        return T + (1 - (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0))) * (H - T - B)

    knee = peak / hbm
    parts = [f'<polyline class="kp-roof" points="{px(x0):.1f},{py(max(hbm * x0, y0)):.1f} {px(knee):.1f},'
             f'{py(peak):.1f} {px(x1):.1f},{py(peak):.1f}" fill="none" stroke-width="2"/>',
             # gpus.yaml's fp32 peak counts instructions (an FMA is one): the datasheet's FLOP/s are twice that
             f'<text x="{W - R:.1f}" y="{py(peak) - 4:.1f}" text-anchor="end" class="kp-svg-muted" '
             f'data-peak="fp32">fp32 peak {num(peak / 1e12)} T op/s</text>'
             f'<text x="{W - R:.1f}" y="{py(peak) + 14:.1f}" text-anchor="end" class="kp-svg-muted">'
             f'(FMA = 1 op; datasheet {num(2 * peak / 1e12)} TFLOP/s)</text>',
             f'<text x="{px(x0 * 3):.1f}" y="{py(hbm * x0 * 3) - 8:.1f}" class="kp-svg-muted">HBM '
             f'{num(hbm / 1e12)} TB/s</text>']
    for e in range(-3, 4):
        parts.append(f'<text x="{px(10.0 ** e):.1f}" y="{H - B + 16}" text-anchor="middle" '
                     f'class="kp-svg-muted">{10.0 ** e:g}</text>')
    for e in range(6, 15, 2):
        parts.append(f'<text x="{L - 6}" y="{py(10.0 ** e) + 4:.1f}" text-anchor="end" class="kp-svg-muted">'
                     f'1e{e}</text>')
    parts.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 6}" text-anchor="middle" class="kp-svg-muted">'
                 'arithmetic intensity (FLOP per byte)</text>'
                 f'<text x="14" y="{(T + H - B) / 2:.0f}" text-anchor="middle" class="kp-svg-muted" '
                 f'transform="rotate(-90 14 {(T + H - B) / 2:.0f})">FLOP/s (modeled)</text>')
    for who, l, ai, rate, color in points:
        parts.append(f'<circle cx="{px(ai):.1f}" cy="{py(rate):.1f}" r="6" fill="{color}" data-launch="'
                     f'{html.escape(l.name, quote=True)}" data-bound="{l.bound}"><title>{who}: '
                     f'{html.escape(l.name)}, {num(l.time_us)} µs, {l.bound}-bound</title></circle>')
    if unplotted:
        parts.append(f'<text x="{L + 8}" y="{H - B - 8}" class="kp-svg-muted">{unplotted} launch(es) not plotted '
                     '(no FLOPs)</text>')
    return (f'<svg class="kp-svg {"kp-svg-wide" if W == CHART_W else "kp-svg-narrow"}" viewBox="0 0 {W} {H}" '
            f'width="{W}" height="{H}" role="img" '
            f'aria-label="roofline">{"".join(parts)}</svg>')


def launches_rows(who: str, cost: Optional[ModeledCost], spec: dict) -> str:
    rows = []
    for l in (cost.launches if cost else []):
        mem_us = max(l.bytes_unique / spec["hbm_bytes_per_s"], l.bytes_sectors / spec["l2_bytes_per_s"]) * 1e6
        rows.append(f'<tr data-bound="{l.bound}"><td>{who}</td><td>{html.escape(l.name)}</td>'
                    f'<td>{_mib(l.bytes_unique)}</td><td>{num(_flops(l) / 1e6)} M</td><td>{num(mem_us)}</td>'
                    f'<td>{num(spec["launch_overhead_us"])}</td><td>{num(l.time_us)}</td><td><b>{l.bound}</b></td></tr>')
    return "".join(rows)


def why_html(perf: Optional[PerformanceResult]) -> str:
    """The "Why this speedup" panel, or "" when the speedup was not modeled."""
    if perf is None or perf.modeled_candidate is None:
        return ""
    spec = _spec()
    ref, cand = perf.modeled_reference, perf.modeled_candidate
    verdict = verdict_text(ref, cand, spec)
    table = ("<table><thead><tr><th>side</th><th>launch</th><th>bytes</th><th>FLOPs</th><th>memory µs</th>"
             "<th>launch gap µs</th><th>modeled µs</th><th>bound</th></tr></thead><tbody>"
             f"{launches_rows('reference', ref, spec)}{launches_rows('yours', cand, spec)}</tbody></table>")
    return (f'<div class="kp-why" data-verdict="{html.escape(verdict.split(":")[0], quote=True)}">'
            f'<div class="kp-chart-title">Why this speedup: {html.escape(verdict)}</div>'
            f'{chart_svg(ref, cand, spec)}{chart_svg(ref, cand, spec, NARROW_W)}<div class="kp-muted">Each dot is one launch on the modeled H100 (grey: '
            'reference, blue: yours); the line is the roof: memory bandwidth, then the fp32 peak.</div>'
            f'<div class="kp-costs">{table}</div>{fidelity_html()}</div>')
