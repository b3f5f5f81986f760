"""How well the modeled H100 time tracks a real H100: a short note every modeled speedup links.

The figures are the last row of docs/fidelity.md (the pricing the reward uses by default: GPU shapes,
gpus.yaml v4, the lower of the two speedups): tests/ui/test_render.py checks that they still appear
there. The note is in the page itself, so it works on a Space that has no link to the repository.
"""
from __future__ import annotations

from ui.markup import esc

PROGRAMS, SPEARMAN = 39, "0.794"
BY_LEVEL = (("easy", "0.882"), ("medium", "0.665"), ("hard", "0.939"))
PAIRS = "31 of 40"
OFF = ("launch-bound row kernels at small shapes (modeled near 1x, measured up to 6x)",
       "flash-attention kernels that spill registers (modeled 5-13x too fast)",
       "fp32 GEMM against cuBLAS (modeled 1.04x, measured 0.81x)")


def fidelity_html() -> str:
    """A collapsed "modeled, not measured" note with the model's measured rank correlation."""
    levels = ", ".join(f"{name} {value}" for name, value in BY_LEVEL)
    off = "; ".join(OFF)
    return (f'<details class="kp-fidelity" data-spearman="{SPEARMAN}"><summary>Modeled, not measured: how well '
            f'the model tracks a real H100 (Spearman {SPEARMAN})</summary><p>This speedup is an estimate from '
            'a roofline model of an H100, computed on a CPU host; no GPU ran it. Against a real H100 80GB '
            f'(triton.testing.do_bench, 10 repeats), the model ranks the {PROGRAMS} shipped programs with '
            f'Spearman {SPEARMAN} ({esc(levels)}), and orders {PAIRS} same-task pairs alike. It is '
            f'furthest off on {esc(off)}. Treat a modeled speedup as a ranking, not a time. The full table '
            'is docs/fidelity.md in the repository.</p></details>')
