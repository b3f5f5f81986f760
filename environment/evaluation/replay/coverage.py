"""What the sampled programs at the GPU shape stored: which output elements are compared with the
reference (written_elements), and how much of each returned output the whole grid is estimated to
store (output_coverage).

The coverage weighs each sampled program by the programs of the grid it stands for *by position*:
per axis a program is the first, an interior or the last one, and an honest tiling's partial tiles
(masked at the output's edge) are the first or last on some axis, so every program of one class of
positions stores alike. Each class is shared by its sampled programs (corners and the estimate's,
else the check programs), and a class none was drawn from (a narrow edge) counts as its corners do.
An honest kernel's estimate is then exact, whatever its grid's shape, and the allowed shortfall is
rounding only: a kernel that leaves rows unwritten in every program (red team a116, and a117, which
launched the same row walk on a (G/2, 2) grid to get the slack 2-D grids once had) falls short.

Aten writes that a later launch may overwrite (the elements of the tensors it was handed on an
allocation its sampled programs stored into) are neither compared nor counted: an output zeroed with
`torch.zeros_like` before a kernel stores into it holds zeros wherever the unsampled programs were to
store, which is no wrong answer, and no coverage either (the kernel's own stores must cover it).
Leaving an aten write out can only take credit away, never add it.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch

from environment.evaluation.modeled.memory import SECTOR, sorted_unique
from environment.evaluation.replay import final_values
from environment.evaluation.replay.line_grid import idle_split
from environment.evaluation.replay.tile_lattice import Lattice

# Positions compared with the reference per output: every element the sampled programs wrote is
# a few thousand; an output an aten op wrote whole is checked at this many positions drawn from the seed.
MAX_CHECKED = 1 << 16
# How far below the output's size the estimated coverage may fall: rounding. A sampled program that skips its
# block costs its class's share; one that skips a row of every 256 in every program is caught.
COVERAGE_SLACK = 1.0 / 256
# How far below the outputs' bytes the launches' estimated bytes written may fall (evaluator/gpu_shape.judge): the
# interpolation's rounding only. A 528-program grid-stride loop fell 35 to 71 elements short of 12.3 M (6e-6) on
# some draws; COVERAGE_SLACK here let a kernel skip 31 of 8192 rows at the GPU shape and out-price honest work
# (red team a236, a237). At 1/16384 no whole row or block of a task's GPU shape goes unseen.
WRITTEN_SLACK = 1.0 / 16384


@dataclass
class SampledStores:
    """One sampled launch, as the coverage sees it: the programs run (((x, y, z), role) as
    sampled.choose_programs gives them), the grid, every store ((byte addresses, item size) and the
    index of the program that made it) and the sorted unique sectors the sample stored."""
    programs: list
    grid: tuple
    log: list
    owners: list
    written: np.ndarray
    spread: tuple = ()    # the axes its atomic programs were completed along (program_weights)
    lattice: Optional[Lattice] = None   # the 2-D tiling a line grid enumerates (tile_lattice), weighed by it

    def overwrites(self, t: torch.Tensor) -> bool:
        """Whether programs this sample did not run may store into t's allocation (some run program did)."""
        storage = t.untyped_storage()
        if len(self.programs) >= math.prod(self.grid) or not storage.nbytes() or not self.written.size:
            return False
        first = storage.data_ptr() // SECTOR
        end = (storage.data_ptr() + storage.nbytes() - 1) // SECTOR + 1
        at = int(np.searchsorted(self.written, first))
        return at < self.written.size and int(self.written[at]) < end


@dataclass
class AtenWrite:
    """A tensor an aten step wrote, and the tensors on its allocation that later launches with unrun
    programs were handed and stored into that allocation (`cleared`: what those programs were to store)."""
    tensor: torch.Tensor
    cleared: list = field(default_factory=list)


def _offsets(t: torch.Tensor, extent_items: int) -> np.ndarray:
    """Element offsets (in items of t's dtype) of t's elements within its storage, in t.flatten() order."""
    if t.is_contiguous():
        return np.arange(t.storage_offset(), t.storage_offset() + t.numel(), dtype=np.int64)
    index = torch.arange(extent_items, dtype=torch.int64)
    return index.as_strided(t.shape, t.stride(), t.storage_offset()).flatten().numpy()


def _touched_items(addrs: np.ndarray, size: int, base: int, extent: int, item: int) -> np.ndarray:
    """Item indices (items of `item` bytes) of a storage at `base` of `extent` bytes that any byte of the
    stores (byte addresses `addrs`, `size` bytes each) touches, whatever the store's element size: a
    program storing into a float32 output through an int64 pointer writes it too (red team a108). An item
    two stores touch is listed twice (the callers mark flags or count distinct items themselves)."""
    rel = addrs - base
    rel = rel[(rel > -size) & (rel < extent)]
    first, last = rel // item, (rel + size - 1) // item    # a store's bytes span items first..last
    spans = [first] + [first + d for d in range(1, int((last - first).max()) + 1)] if rel.size else [rel]
    touched = np.concatenate([spans[0]] + [s[s <= last] for s in spans[1:]])
    return touched[(touched >= 0) & (touched < extent // item)]


def _view_index(t: torch.Tensor):
    """A function from item indices of t's storage to their indices in t.flatten() (-1 outside the view)."""
    if t.is_contiguous():
        first, n = t.storage_offset(), t.numel()
        return lambda items: np.where((items >= first) & (items < first + n), items - first, -1)
    where = np.full(t.untyped_storage().nbytes() // t.element_size(), -1, dtype=np.int64)
    where[_offsets(t, where.size)] = np.arange(t.numel(), dtype=np.int64)
    return lambda items: where[items]


def _mark_views(mark: np.ndarray, t: torch.Tensor, views: list[torch.Tensor]) -> None:
    """Mark the items of t's storage that the tensors an aten op wrote (`views`) lie on."""
    item, base = t.element_size(), t.untyped_storage().data_ptr()
    for v in views:
        if not (v.numel() and v.untyped_storage().data_ptr() == base):
            continue
        if v.element_size() != item:
            first = v.storage_offset() * v.element_size()
            last = first + (max([0, *(s * (n - 1) for s, n in zip(v.stride(), v.shape))]) + 1) * v.element_size()
            mark[first // item:-(-last // item)] = True   # its whole byte span: compared, never short
        elif v.is_contiguous():
            mark[v.storage_offset():v.storage_offset() + v.numel()] = True
        else:
            mark[_offsets(v, mark.size)] = True


def _mark_aten(mark: np.ndarray, t: torch.Tensor, writes: list[AtenWrite]) -> None:
    """Mark the items of t's storage that aten writes lie on, but for those a later launch may overwrite."""
    for w in writes:
        if not w.cleared:
            _mark_views(mark, t, [w.tensor])
            continue
        mine, cleared = np.zeros_like(mark), np.zeros_like(mark)
        _mark_views(mine, t, [w.tensor])
        _mark_views(cleared, t, w.cleared)
        mark |= mine & ~cleared


def written_elements(t: torch.Tensor, stores: list[tuple[np.ndarray, int]], views: list[AtenWrite],
                     seed: int, orders: list[int] = (), producers: list = ()) -> np.ndarray:
    """Indices (into t.flatten()) of elements of output `t` that executed work wrote (any byte a sampled
    program stored, of any element size, save where an unrun program of a later launch stores over it:
    final_values; `orders`: per store, the order of the sampled launch it belongs to; the elements aten ops
    wrote that no later launch may overwrite: `views`), at most MAX_CHECKED of them (drawn from `seed` when
    there are more)."""
    item = t.element_size()
    storage = t.untyped_storage()
    base, extent = storage.data_ptr(), storage.nbytes()
    orders = list(orders) or [0] * len(stores)
    # the narrowest signed type that holds every order (a trace's steps are far fewer than 2**15): the array spans
    # the whole GPU-shape storage, and filling 8 bytes per item took a fresh sampler process up to 0.4 s per output
    last = np.full(extent // item, -1, dtype=np.result_type(np.int16, np.min_scalar_type(-max(orders, default=0) - 1)))
    for (addrs, size), order in zip(stores, orders, strict=True):
        touched = _touched_items(addrs, size, base, extent, item)
        last[touched] = np.maximum(last[touched], order)
    mark = last >= 0
    if producers:
        mark &= ~final_values.stale(base, item, last, list(producers))
    _mark_aten(mark, t, views)
    if t.is_contiguous():
        view = mark[t.storage_offset():t.storage_offset() + t.numel()]
    else:
        view = mark[_offsets(t, extent // item)]
    count = int(np.count_nonzero(view))
    if count <= MAX_CHECKED:
        return np.flatnonzero(view).astype(np.int64)
    rng = np.random.default_rng([seed & (2**63 - 1), count])
    if count * DENSE < view.size:   # sparse: listing the flags is cheaper than hitting them by chance
        return np.sort(rng.choice(np.flatnonzero(view), MAX_CHECKED, replace=False)).astype(np.int64)
    return _draw_marked(view, count, rng)


# The share of set flags from which drawing at random beats listing them. Below it the draw becomes a coupon
# collector: MAX_CHECKED distinct hits among barely more set flags took 1.2 s and 500 MB for a 64x64-tile matmul's
# 82 K sampled stores in a 4096^2 output, and 16 s and 2 GB with 65537 flags in 64 M (listing them: 7 to 12 ms)
DENSE = 4


def _draw_marked(view: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """MAX_CHECKED of the `count` set positions of `view`, uniformly without replacement, sorted: uniform
    draws over the view kept where set (an aten-written GPU-shape output sets all of its 32 M flags, and
    listing them took the replay a second), then a uniform subset of the distinct ones."""
    picked = np.empty(0, dtype=np.int64)
    per_hit = -(-view.size // count)
    while picked.size < MAX_CHECKED:
        draw = rng.integers(0, view.size, size=2 * MAX_CHECKED * per_hit, dtype=np.int64)
        picked = np.union1d(picked, draw[view[draw]])
    return np.sort(picked[rng.permutation(picked.size)[:MAX_CHECKED]])


def _position(c: int, g: int) -> int:
    """Where index c lies on an axis of g programs: 0 the first, 1 interior, 2 the last."""
    return 0 if c == 0 else 2 if c == g - 1 else 1


def class_weights(programs: list, grid: tuple, stored: list[int]) -> list[float]:
    """How many programs of the grid each sampled program stands for in the coverage (they sum to the
    grid's programs). Programs are classed by their position on each axis (first, interior, last); a class
    is shared evenly by its sampled programs (corners and the estimate's, else the check programs; programs
    run only to complete atomic sums stand for none); a class none was drawn from counts as the corner of
    its kind (its interior axes set to their first or last index) that stored the most (`stored`: distinct
    new output elements per program), but never as more than the interior programs drawn store each."""
    keys = [tuple(_position(c, g) for c, g in zip(pos, grid)) for pos, _ in programs]
    members: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        members.setdefault(key, []).append(i)
    weights = [0.0] * len(programs)
    interior = max((n for n, (_, role) in zip(stored, programs) if role in ("stratum", "check")), default=math.inf)
    axes = [(0,) if g == 1 else (0, 2) if g == 2 else (0, 1, 2) for g in grid]
    for key in itertools.product(*axes):
        size = math.prod(g - 2 if s == 1 else 1 for s, g in zip(key, grid))
        found = members.get(key, [])
        chosen = ([i for i in found if programs[i][1] in ("corner", "stratum")]
                  or [i for i in found if programs[i][1] == "check"])
        if chosen:
            for i in chosen:
                weights[i] += size / len(chosen)
            continue
        kinds = itertools.product(*[(0, 2) if s == 1 else (s,) for s in key])
        corners = [i for kind in kinds for i in members.get(kind, []) if programs[i][1] != "complete"]
        if corners:
            best = max(corners, key=lambda i: (stored[i], -i))
            # an edge program stores no more than an interior one: a corner storing more (blocks of the programs
            # it stands for, once) does not multiply them
            weights[best] += size * (min(1.0, interior / stored[best]) if stored[best] > interior else 1.0)
    return weights


def program_weights(programs: list, grid: tuple, stored: list[int], spread: tuple = (),
                    lattice: Optional[Lattice] = None) -> list[float]:
    """How many programs of the grid each run program stands for (position_weights, or by its tile's class on the
    `lattice` a line grid enumerates: tile_lattice), a sampled program's weight
    then shared evenly by the whole column it was completed along (`spread`: the axes sampled.completion ran every
    program of; "complete" programs otherwise stand for nothing). A split-K kernel's column is one output tile's
    whole sum: which split of it does the work is then no matter (red team a180: one interior split per tile did
    all of it, and the sampled light splits priced a matmul at no FLOPs)."""
    if lattice is not None:
        return lattice.weights(programs)
    weights = position_weights(programs, grid, stored)
    if not spread:
        return weights
    size = math.prod(grid[a] for a in spread)
    columns: dict[tuple, list[int]] = {}
    for i, (pos, _) in enumerate(programs):
        columns.setdefault(tuple(c for a, c in enumerate(pos) if a not in spread), []).append(i)
    shared = list(weights)
    for i, (pos, role) in enumerate(programs):
        members = columns[tuple(c for a, c in enumerate(pos) if a not in spread)]
        if role == "complete" or not weights[i] or len(members) != size:
            continue
        shared[i] -= weights[i]
        for j in members:
            shared[j] += weights[i] / size
    return shared


def position_weights(programs: list, grid: tuple, stored: list[int]) -> list[float]:
    """How many programs of the grid each sampled program stands for (they sum to the grid's programs), in
    the coverage and in the scaled counts alike. A grid along one axis is a line: the programs every draw runs
    (its first and last, and the ends of its interior, programs 1 and G-2: line_grid.line_probes) weigh 1 each,
    every program between two interior programs drawn from the secret counts half as each (interpolation), and
    those between an end of the interior and the nearest drawn one count as that one. An over-launched line's
    idle tail (programs past its last tile storing nothing: idle_part) ends it a program early, and a grid over
    several axes rounded up along one (a slab of programs storing nothing) is its busy part, weighed as a grid. A persistent kernel's programs loop over the rows pid, pid + G, ...: the first ones do
    one iteration more, a step the sample brackets and sampled.run_sampled bisects down to adjacent programs,
    so its estimate is exact whichever programs the seed drew. Grids over several axes weigh by position
    class (class_weights): their tiles are alike but for the masked edges. A grid run whole (a small one, or a line
    grid whose counts are no step: line_grid.rest_of_line) weighs every program 1: its counts are exact."""
    axes = [a for a, g in enumerate(grid) if g > 1]
    total = math.prod(grid)
    if len({pos for pos, _ in programs}) >= total:
        return [1.0] * len(programs)
    split = None if len(programs) >= total else idle_part(programs, grid, stored)
    if split is not None:   # the grid ends at coordinate end - 1 of the axis; the idle part's run programs share the rest
        axis, end = split
        busy = [i for i, (pos, _) in enumerate(programs) if pos[axis] < end]
        part = tuple(end if a == axis else g for a, g in enumerate(grid))
        # a slab's busy part is a grid of its own: the corners of its last slice (line_grid.tail_probe runs them)
        # stand for their classes as the grid's corners do
        kept = [(pos, "corner" if len(axes) > 1 and pos[axis] == end - 1 and role == "probe" else role)
                for pos, role in (programs[i] for i in busy)]
        weights = [(total - math.prod(part)) / (len(programs) - len(busy))] * len(programs)
        for i, w in zip(busy, position_weights(kept, part, [stored[i] for i in busy])):
            weights[i] = w
        return weights
    if len(axes) != 1 or len(programs) >= total:
        return class_weights(programs, grid, stored)
    axis, n = axes[0], grid[axes[0]]
    at: dict[int, int] = {}
    for i, (pos, role) in enumerate(programs):
        if role != "complete":
            at.setdefault(pos[axis], i)
    # the line's programs 1 and G-2 run whatever the seed (line_grid.line_probes runs them when the draw did not), as
    # the corners do: each stands for itself only, and the programs between it and the first (last) interior program
    # drawn from the secret count as that one (red team a251: probes storing zeros, their rows redone by a second
    # launch, stood for half the gap; drawn, G-2 stood for half the gap too, so an unmasked last block shifted back
    # over it, counted by its own stores only, fell short on one draw in two hundred)
    public = {c for c in (1, n - 2) if c in at}
    inner = sorted(c for c in at if 0 < c < n - 1 and c not in public)
    if not inner:
        return class_weights(programs, grid, stored)
    weights = [0.0] * len(programs)
    for c in (0, n - 1, *public):
        if c in at:
            weights[at[c]] += 1.0
    weights[at[inner[0]]] += inner[0] - 1 - (1 in public)          # programs 1 .. the first drawn interior one
    weights[at[inner[-1]]] += n - 2 - inner[-1] - (n - 2 in public)
    for c in inner:
        weights[at[c]] += 1.0
    for a, b in itertools.pairwise(inner):
        weights[at[a]] += (b - a - 1) / 2
        weights[at[b]] += (b - a - 1) / 2
    return weights


def idle_part(programs: list, grid: tuple, stored: list) -> Optional[tuple[int, int]]:
    """(axis, first idle coordinate) of an over-launched grid's idle part (line_grid.idle_split: a line's tail, or a
    slab along one axis of a grid over several) past a busy part at least three programs deep; else None."""
    if any(role == "complete" for _, role in programs):
        return None
    split = idle_split(grid, [pos for pos, _ in programs], [bool(s) for s in stored])
    return split if split is not None and split[1] >= 3 else None


def output_coverage(t: torch.Tensor, launches: list[SampledStores], views: list[AtenWrite]) -> float:
    """Estimated fraction of the elements of output `t` (the view forward returns) that the launches store:
    per sampled launch, the distinct elements of the programs that stand for themselves only (weight 1), then each
    other program's distinct elements of the view (any byte of them stored) not among those, times the programs it
    stands for (program_weights), times the share of those programs' stored elements that are distinct
    (every program storing the same block is one block); an aten op that wrote the view (and no later launch
    may overwrite: `views`) counts its elements exactly. Elements an earlier launch (or aten op) already
    stored count once: launches over the same grid run the same sampled programs, so copy launches restoring
    the sampled rows would otherwise add up to a whole output (red team a113, a115). A program that skips its
    block, or stores into scratch or past the view, covers nothing (red team a104-a106): the estimate falls
    short of the output and the GPU-shape price is void."""
    if not t.numel():
        return 1.0
    item, storage = t.element_size(), t.untyped_storage()
    base, extent = storage.data_ptr(), storage.nbytes()
    index = _view_index(t)
    aten = np.zeros(extent // item, dtype=bool)
    _mark_aten(aten, t, views)
    # elements already counted, as one flag per element of the view (an aten op may have written all of a
    # GPU-shape output: its indices, sorted or unioned, would cost several times the output's size)
    if t.is_contiguous():   # the view is one run of the storage: its flags are a slice (no index arrays)
        seen = aten[t.storage_offset():t.storage_offset() + t.numel()].copy()
    else:
        seen = np.zeros(t.numel(), dtype=bool)
        hit = index(np.flatnonzero(aten))
        for start in range(0, hit.size, 1 << 22):
            chunk = hit[start:start + (1 << 22)]
            seen[chunk[chunk >= 0]] = True
        del hit
    covered = float(np.count_nonzero(seen))
    for launch in launches:
        per: dict[int, list[np.ndarray]] = {}
        for (addrs, size), k in zip(launch.log, launch.owners):
            items = index(_touched_items(addrs, size, base, extent, item))
            per.setdefault(k, []).append(items[items >= 0])
        sets = {k: sorted_unique(np.concatenate(v)) for k, v in per.items() if 0 <= k < len(launch.programs)}
        sets = {k: s[~seen[s]] for k, s in sets.items()}   # a later store of a counted element covers nothing new
        weights = program_weights(launch.programs, launch.grid,
                                  [sets[k].size if k in sets else 0 for k in range(len(launch.programs))], launch.spread,
                                  launch.lattice)
        sets = {k: s for k, s in sets.items() if weights[k] and s.size}
        # a program weighing 1 stands for itself only (a corner, a line's public probe, a grid run whole): its
        # distinct elements count as they are, however they overlap (an unmasked last block shifted back over its
        # neighbour's stores part of it twice); the rest of the sample stands for unrun programs, so the share of
        # its stored elements that are distinct, and new past the former, scales it (every program storing the
        # same block is one block)
        fresh = np.zeros_like(seen)   # the launch's distinct elements as flags (sorting their indices cost seconds)
        for k, s in sets.items():
            if weights[k] == 1.0:
                fresh[s] = True
        covered += np.count_nonzero(fresh)
        rest = {k: s[~fresh[s]] for k, s in sets.items() if weights[k] != 1.0}
        stored = sum(s.size for s in rest.values())
        if stored:
            drawn = np.zeros_like(seen)
            for s in rest.values():
                drawn[s] = True
            covered += np.count_nonzero(drawn) / stored * math.fsum(weights[k] * s.size for k, s in rest.items())
            fresh |= drawn
        seen |= fresh
    return min(1.0, covered / t.numel())
