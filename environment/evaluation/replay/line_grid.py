"""Which programs of a line grid (a grid along one axis: a persistent kernel's, whose programs loop over rows
pid, pid + G, ...) the sampled replay runs beyond its sample (sampled.run_sampled): the ends of the interior,
bisecting probes between interior programs that stored different counts, and, for a small, cheap grid, the rest of
it (counted exactly, whatever the draw)."""
from __future__ import annotations

import itertools
import math
from typing import Optional

import numpy as np

# A grid along one axis (a persistent kernel's, whose programs loop over rows pid, pid + G, ...) also runs
# programs 1 and G-2 (the ends of its interior) and bisects every gap between run interior programs that
# store different numbers of elements, with at most PROBES more programs per launch (coverage.program_weights)
PROBES = 10
# ... then, when every run program past the last one that stored anything stored nothing (an over-launched grid's
# idle tail; on a grid over several axes, past it along one axis: a slab), bisects that step with up to TAIL_PROBES
# more, down to adjacent programs (a line of 2^20 programs), then runs a slab's busy part's last corners
TAIL_PROBES = 20
# ... and runs whole when it has at most EXACT_LINE programs (a persistent kernel runs one to a few per SM: 132 on
# an H100) and the grid would execute at most EXACT_ACCESSES memory instructions (the most one run program executed,
# times the grid's programs: not the programs left, which depend on the draw). A persistent loop over 2-D tiles (tile t at row t // tiles_n, column t % tiles_n) stores
# a count periodic in pid (every program whose tiles fall in the partial column stores less), which no interpolation
# between a few programs gets right on every draw; a grid run whole is counted exactly whatever the draw, and a
# program skipping tiles anywhere in it is counted as what it stored. silu_mul__persistent_range's 132 programs at
# 4097 x 3001 execute at most 72 each (9,504); the ~106 the sample leaves take 25 to 45 s on a loaded 2-core host,
# within the GPU-shape replay's deadline (4 x 30 s). Past either bound the sample and its interpolation stand (docs/honest_styles.md)
EXACT_LINE = 512
EXACT_ACCESSES = 12288


def line_axis(grid: tuple[int, int, int]) -> int | None:
    """The axis of a grid that spans one axis only (None for a grid over several axes)."""
    axes = [a for a, g in enumerate(grid) if g > 1]
    return axes[0] if len(axes) == 1 else None


def line_probes(grid: tuple[int, int, int], chosen: list) -> list[tuple[tuple[int, int, int], str]]:
    """((x, y, z), "probe") of the ends of a line grid's interior (programs 1 and G-2) not chosen: then every
    unrun interior program lies between two run ones (coverage.program_weights)."""
    axis = line_axis(grid)
    if axis is None or len(chosen) >= math.prod(grid):
        return []
    run = {p for p, _ in chosen}
    ends = sorted({1, grid[axis] - 2})
    points = [tuple(c if a == axis else 0 for a in range(3)) for c in ends]
    return [(p, "probe") for p in points if p not in run]


def next_probe(grid: tuple[int, int, int], run: list, stored: np.ndarray):
    """The program halving the widest gap between run interior programs of a line grid that stored different
    numbers of elements (None when every such gap is closed)."""
    axis = line_axis(grid)
    if axis is None:
        return None
    inner = sorted((p[axis], stored[i]) for i, (p, role) in enumerate(run)
                   if role != "complete" and 0 < p[axis] < grid[axis] - 1)
    gaps = [(b - a, a, b) for (a, va), (b, vb) in itertools.pairwise(inner) if b - a > 1 and va != vb]
    if not gaps:
        return None
    _, a, b = max(gaps)
    return (tuple((a + b) // 2 if k == axis else 0 for k in range(3)), "probe")


def tail_step(at: list[int], busy: list[bool]) -> Optional[tuple[int, int]]:
    """(the last busy program, the first idle one) of a line's run programs at positions `at`, when some stored
    (`busy`) and some did not and every idle one lies past every busy one: an over-launched grid's idle tail
    (programs returning at once past the last tile, `if pid >= tiles: return`); None for any other pattern. The one
    test every judge of the tail shares: tail_probe bisects the step, idle_start reads it once closed."""
    work = [c for c, b in zip(at, busy) if b]
    rest = [c for c, b in zip(at, busy) if not b]
    if not work or not rest or min(rest) <= max(work):
        return None
    return max(work), min(rest)


def idle_start(at: list[int], busy: list[bool]) -> Optional[int]:
    """The first program of a line's idle tail (tail_step) once the sample closed the step into it (the last busy
    program and the first idle one are adjacent); else None: the tail is then judged as any program storing nothing."""
    step = tail_step(at, busy)
    return step[1] if step is not None and step[1] == step[0] + 1 else None


def idle_split(grid: tuple[int, int, int], at: list, busy: list[bool]) -> Optional[tuple[int, int]]:
    """(axis, its first idle coordinate) of an over-launched grid's idle part once the sample closed the step into
    it (idle_start): along a line grid's axis, or along the one axis of a grid over several past which every run
    program (positions `at`) that stored nothing lies (`busy`: which stored), a slab of programs returning at once
    (`if pid_m >= row_blocks: return` on a row-block axis rounded up) of at most half the axis; None for any other
    pattern or an open step. A larger slab would leave the busy part too few of the secret's draws to weigh its
    classes by (red team: a slab of 2/3 of the grid priced a busy class by a corner writing scratch, 8% low)."""
    line = line_axis(grid) is not None
    found = [(a, end) for a in range(3) if grid[a] > 1
             for end in [idle_start([p[a] for p in at], busy)] if end is not None and (line or 2 * end >= grid[a])]
    return found[0] if len(found) == 1 else None


def _open_step(grid: tuple[int, int, int], at: list, busy: list[bool]) -> Optional[tuple[int, int, int]]:
    """(axis, last busy, first idle) of the one axis with a step into an idle part (tail_step), else None."""
    steps = [(a, *step) for a in range(3) if grid[a] > 1
             for step in [tail_step([p[a] for p in at], busy)] if step is not None]
    return steps[0] if len(steps) == 1 else None


def tail_probe(grid: tuple[int, int, int], run: list, stored: np.ndarray):
    """The program halving the step into a grid's idle part (_open_step: a line's tail, or a slab along one axis of
    a grid over several, probed at coordinate 0 on the other axes) while it is not closed; then, for a slab, each
    corner of the busy part's last slice not run yet (the busy part is a grid of its own, whose corners every
    weighing needs: coverage.position_weights); None once those ran, or there is no such step, or a slab is past
    what idle_split admits. Then the step into the idle part is exact (idle_split)."""
    line = line_axis(grid) is not None
    if any(role == "complete" for _, role in run):
        return None
    at, busy = [p for p, _ in run], [bool(s) for s in stored]
    step = _open_step(grid, at, busy)
    if step is None:
        return None
    axis, last, first = step
    if not line and 2 * first < grid[axis]:
        return None
    if first - last > 1:
        return (tuple((last + first) // 2 if k == axis else 0 for k in range(3)), "probe")
    if line:
        return None
    done = set(at)
    ends = [(0, g - 1) if k != axis else (last,) for k, g in enumerate(grid)]
    corners = [c for c in itertools.product(*ends) if c not in done]
    return (corners[0], "probe") if corners else None


def rest_of_line(grid: tuple[int, int, int], run: list, accesses: int) -> list:
    """((x, y, z), "rest") of every program of a line grid not run yet, when the grid has at most EXACT_LINE programs
    and would execute at most EXACT_ACCESSES memory instructions at `accesses` (the most one run program executed)
    each; else none. Then the launch is counted whole, exactly: the rest weigh 1 each like every program of
    a grid run whole (coverage.position_weights) and are no sample (sample_trust ignores them)."""
    axis, total = line_axis(grid), math.prod(grid)
    if axis is None or total > EXACT_LINE or len(run) >= total:
        return []
    done = {p for p, _ in run}
    rest = [(tuple(c if a == axis else 0 for a in range(3)), "rest") for c in range(grid[axis])]
    rest = [q for q in rest if q[0] not in done]
    return rest if max(accesses, 1) * total <= EXACT_ACCESSES else []


def sample_line(grid: tuple[int, int, int], chosen: list, run, stored, whole: bool = True, rest: bool = True) -> list:
    """The programs of a line grid run after `chosen` (already run): PROBES bisecting probes (next_probe), the step
    into an idle tail closed (tail_probe), then the
    rest of the grid when it is small and cheap enough (rest_of_line), `rest` is on and `whole` (no earlier launch
    left programs unrun: the rest would read what they were to store, past the dependency closure's bound).
    `run(programs)` runs programs (in a pipeline, after the closure of each: sampled.py); `stored(n)` gives (elements each of the n programs run so far stored, in
    run order; the most memory instructions one executed)."""
    added: list = []
    for _ in range(PROBES if len(chosen) < math.prod(grid) else 0):
        probe = next_probe(grid, chosen + added, stored(len(chosen) + len(added))[0])
        if probe is None:
            break
        run([probe])
        added.append(probe)
    for _ in range(TAIL_PROBES if len(chosen) < math.prod(grid) else 0):
        probe = tail_probe(grid, chosen + added, stored(len(chosen) + len(added))[0])
        if probe is None:
            break
        run([probe])
        added.append(probe)
    tail = rest_of_line(grid, chosen + added, stored(len(chosen) + len(added))[1]) if whole and rest else []
    run(tail)
    return added + tail
