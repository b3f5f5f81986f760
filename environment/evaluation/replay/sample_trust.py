"""When the sampled GPU-shape replay's estimate is not trusted (replay/sampled.py): interior programs whose counts
lie outside the range the other side of the sample spans (outliers), and interior programs that store into other
allocations than the rest (stray_writers); neither counts the idle part of an over-launched grid (idle_tail)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from environment.evaluation.replay.line_grid import idle_split


_METRICS = ("sectors", "read", "write")
# How far outside the estimate's range a check program may lie before the estimate is distrusted:
# alignment alone moves an honest program's sector counts by a sector or two (a block that wraps
# around a row of a broadcast operand); more than this is work the estimate does not see.
OUTLIER_SLACK = (1.05, 4.0)   # (relative, absolute)
# Programs no range judges from below: the corners (run first, whatever the seed) and the "end", the last program
# before a line grid's idle tail (sampled.scale_record), which is judged from above only
ENDS = ("corner", "end")


def outliers(per_program: list[dict], roles: list[str], idle: frozenset = frozenset()) -> list[int]:
    """Indices of interior programs whose counts (sectors, unique reads and writes, FLOPs per key) lie
    outside the range the other side and the corners span: a check outside the estimate's programs'
    range, or an estimate program outside the checks' range (both drawn from the secret). The corners
    stay in the range: work that grows with the program index (a causal attention's rows) is honest,
    and its lightest and heaviest programs are corners. A program that skips its block hides in that
    range, but it stores nothing or something else where its neighbours store the output
    (stray_writers) or stores wrong values (compared). Their cost is not what the estimate assumes.
    The programs of an idle tail (`idle`: idle_tail) are no sample of the work and lie in no range."""
    keys = sorted({k for p in per_program for k in p["flops"]})

    def vector(p: dict) -> list[float]:
        return [float(p[m]) for m in _METRICS] + [float(p["flops"].get(k, 0.0)) for k in keys]

    rel, absolute = OUTLIER_SLACK
    found: set[int] = set()
    # a probe (line_grid.line_probes, next_probe) lies within the range of all the others: it is no estimate program,
    # but a program skipping its block at a public probe position would weigh as the programs beside it
    roles = [None if i in idle else r for i, r in enumerate(roles)]
    for side, other in (("check", ("stratum",)), ("stratum", ("check",)), ("probe", ("stratum", "check"))):
        if side not in roles:
            continue
        basis = [vector(p) for p, r in zip(per_program, roles) if r in other or r in ENDS]
        if not basis or "check" not in roles:
            continue
        # a corner that touches no memory (an over-provisioned grid's masked tail) is no sample of the work:
        # in the lower bound it would let every skipping program through (red team a106)
        floor = [vector(p) for p, r in zip(per_program, roles)
                 if r in other or (r in ENDS and (p["read"] or p["write"]))] or basis
        low = [min(col) for col in zip(*floor)]
        high = [max(col) for col in zip(*basis)]
        found.update(i for i, (p, r) in enumerate(zip(per_program, roles))
                     if r == side and any(v < lo / rel - absolute or v > hi * rel + absolute
                                          for v, lo, hi in zip(vector(p), low, high)))
    # the last program before an idle tail ends the line as a corner does (a partial last tile is lighter), but runs
    # after the sample: it may not be heavier than the rest (work a counter told it to redo for the drawn programs)
    basis = [vector(p) for p, r in zip(per_program, roles) if r in ("stratum", "check", "corner")]
    if basis and "end" in roles:
        high = [max(col) for col in zip(*basis)]
        found.update(i for i, (p, r) in enumerate(zip(per_program, roles))
                     if r == "end" and any(v > hi * rel + absolute for v, hi in zip(vector(p), high)))
    return sorted(found)


def stray_writers(per_program: list[dict], roles: list[str], storages: list[tuple[int, int]],
                  idle: frozenset = frozenset()) -> list[int]:
    """Indices of interior programs that store into other allocations than the rest of the sample's
    interior programs (a program writing a scratch buffer where its neighbours write the output, or
    nothing where they write it): what such a program computes is never compared, and its cost is no
    sample of the others'. The programs of an idle tail (`idle`: idle_tail) store nothing and cost nothing."""
    if "check" not in roles:
        return []
    starts = np.array([a for a, _ in storages], dtype=np.int64)

    def targets(p: dict) -> frozenset:
        written = p.get("written")
        if written is None or not written.size:
            return frozenset()
        at = np.searchsorted(starts, written, side="right") - 1
        return frozenset(int(i) for i in np.unique(at) if i >= 0 and written[at == i].max() < storages[i][1])

    interior = [(i, targets(p)) for i, (p, r) in enumerate(zip(per_program, roles))
                if r in ("stratum", "check", "probe", "end") and i not in idle]
    common = max((t for _, t in interior), key=lambda t: sum(u == t for _, u in interior), default=frozenset())
    return [i for i, t in interior if t != common]


def idle_tail(per_program: list[dict], programs: list, grid: tuple) -> tuple[frozenset, Optional[tuple[int, int]]]:
    """(indices, (axis, first idle coordinate)) of the run programs of an over-launched grid's idle part: programs
    that stored nothing (`if pid >= tiles: return`, or a persistent loop with no rows left after loading its
    weights), every one past every program that stored along a line grid's axis, or along one axis of a grid over
    several (a slab), the first of them adjacent to the last busy one (line_grid.tail_probe bisects that step). They
    weigh as what they are, nothing (coverage.position_weights), and are no sample of the others' work; a
    program idle anywhere else, or a step not closed, is judged as before. (frozenset(), None) for any other grid."""
    # what idle programs read (a weight vector loaded before the loop) is counted at their weight: storing nothing,
    # they are no sample of the stores' programs
    busy = [bool(p["write"]) for p in per_program]
    split = None if any(role == "complete" for _, role in programs) else idle_split(grid, [p for p, _ in programs], busy)
    if split is None:
        return frozenset(), None
    return frozenset(i for i, b in enumerate(busy) if not b), split
