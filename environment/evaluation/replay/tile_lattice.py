"""A line grid that enumerates a 2-D tiling (program p stores the tile at (p // tiles_n, p % tiles_n), or a
grouped order as in Triton's matmul tutorial) weighed as the 2-D grid it is.

Along the line, such a grid's store counts are periodic: every program whose tile falls in the output's last,
partial column stores less, wherever it lies among its neighbours, so the line's interpolation between run
programs (coverage.position_weights) is off by whatever share of the grid the draw's partial tiles happened to
stand for (the tutorial-tiles matmul at 8191 x 3001: the coverage estimate fell short on about 1 draw in 30,
and the solution lost its credit on those secrets). When every program the sample ran stored exactly one tile
of one lattice, clipped to the output, at distinct lattice positions, and the lattice has as many tiles as the
grid has programs, each program is weighed by its lattice position's class (first, interior or last tile on
each axis), as a 2-D grid's programs are (coverage.class_weights): an honest tiling's estimate is then exact
whichever programs the seed drew. Programs run whatever the seed (the line's corners and probes) stand for
their own tiles only (the lattice's first and last tiles: programs 0 and G-1 must store them); a class none was
drawn from is stood for by a drawn class clipped on the same
axes, else on more of them (scaled up by the two classes' tile areas: its stores are counted exactly), else by
any (never scaled down: a narrower tile whose loads are clamped, as the tutorial's are, does a whole tile's
work, and a price may only err upwards). A draw where any run program stored anything else (no tile, two
tiles, part of its tile, another program's tile) keeps the line's weights, as before. An over-launched grid's
idle tail (programs past the last tile storing nothing, `if pid >= tiles: return`) is allowed when the sample
closed the step into it (line_grid.tail_probe): the lattice then has as many tiles as programs before the tail,
and the tail's run programs share its programs, storing nothing.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from environment.evaluation.replay.line_grid import idle_start

SAMPLED_ROLES = ("corner", "stratum", "check", "probe")


@dataclass(frozen=True)
class Lattice:
    """Tiles of rows x cols over an output of extent (rows, cols); `positions[i]`: run program i's tile (row, col),
    None for a program of the grid's idle tail (`idle` programs past the last tile, storing nothing)."""
    tile: tuple[int, int]
    extent: tuple[int, int]
    positions: tuple
    idle: int = 0

    @property
    def tiles(self) -> tuple[int, int]:
        return tuple(-(-e // t) for e, t in zip(self.extent, self.tile))

    def _area(self, key: tuple[int, int]) -> int:
        return math.prod(e - (g - 1) * t if k == 2 else t
                         for k, e, t, g in zip(key, self.extent, self.tile, self.tiles))

    def weights(self, programs: list) -> list[float]:
        """How many programs each run program stands for, by its tile's class; tile areas scale a class that
        no program drawn from the secret lies in to the one that stands for it (see the module docstring)."""
        tiles = self.tiles
        keys = [pos and tuple(_position(c, g) for c, g in zip(pos, tiles)) for pos in self.positions]
        members: dict[tuple, list[int]] = {}
        for i, key in enumerate(keys):
            members.setdefault(key, []).append(i)
        resting = members.pop(None, [])

        # programs run whatever the seed (the line's corners and probes) are no sample: each stands for its own tile
        # only, and a class is shared by the members drawn from the secret (red team a251: four public programs
        # storing zeros, their rows recomputed by a second launch, stood for 2/7 of the interior and whole edges)
        fixed = [i for i, (_, role) in enumerate(programs) if role in ("corner", "probe") and keys[i] is not None]

        def chosen(key: tuple) -> list[int]:
            found = members.get(key, [])
            return [i for i in found if programs[i][1] == "stratum"] or [i for i in found if programs[i][1] == "check"]

        weights = [0.0] * len(programs)
        for i in fixed:
            weights[i] = 1.0
        for i in resting:   # the idle tail's run programs (infer: at least the one after the last tile) share it
            weights[i] = self.idle / len(resting)
        axes = [(0,) if g == 1 else (0, 2) if g == 2 else (0, 1, 2) for g in tiles]
        for key in itertools.product(*axes):
            size = math.prod(g - 2 if s == 1 else 1 for s, g in zip(key, tiles)) - sum(keys[i] == key for i in fixed)
            if size <= 0:
                continue
            stand, scale = chosen(key), 1.0
            if not stand:
                drawn = [k for k in itertools.product(*axes) if chosen(k)]
                same = [k for k in drawn if _clipped(k) == _clipped(key)]
                wider = [k for k in drawn if _clipped(k) > _clipped(key)]
                sub = (same or wider or drawn or [None])[0]
                if sub is None:
                    continue
                stand, scale = chosen(sub), max(1.0, self._area(key) / self._area(sub))
            for i in stand:
                weights[i] += size * scale / len(stand)
        return weights


def _clipped(key: tuple) -> frozenset:
    return frozenset(a for a, k in enumerate(key) if k == 2)


def _position(c: int, g: int) -> int:
    return 0 if c == 0 else 2 if c == g - 1 else 1


def infer(programs: list, grid: tuple, store_log: list, store_program: list, tensors: list) -> Optional[Lattice]:
    """The lattice a line grid's run programs stored their tiles on (module docstring), or None."""
    total = math.prod(grid)
    run = [i for i, (_, role) in enumerate(programs) if role in SAMPLED_ROLES]
    if len(run) != len(programs) or len(programs) >= total or not store_log:
        return None
    owners = np.asarray(store_program, dtype=np.int64)
    for t in tensors:
        lattice = _on(t, programs, store_log, owners, total)
        if lattice is not None:
            return lattice
    return None


def _on(t, programs: list, store_log: list, owners: np.ndarray, total: int) -> Optional[Lattice]:
    if not isinstance(t, torch.Tensor) or t.dim() < 2 or not t.is_contiguous() or not t.numel():
        return None
    item, base, cols = t.element_size(), t.data_ptr(), t.shape[-1]
    rows = t.numel() // cols
    boxes = []
    per: dict[int, list[np.ndarray]] = {}
    for (addrs, size), k in zip(store_log, owners):
        rel = np.asarray(addrs, dtype=np.int64) - base
        if size != item or rel.size and (rel.min() < 0 or rel.max() >= t.numel() * item or (rel % item).any()):
            return None   # a store outside t (or not of whole elements of it): not a tiling of t
        if rel.size:   # a store masked whole (an over-launched grid's tail masked, not returned) stores nothing
            per.setdefault(int(k), []).append(rel // item)
    # programs storing nothing are an over-launched grid's idle tail only when every one lies past every program
    # that stored and the first of them next to the last of those (line_grid.tail_probe closes that step); a
    # program storing nothing anywhere else skips its tile
    end = _tail(programs, per, total)
    if end is None:
        return None
    for k in range(len(programs)):
        if k not in per:
            boxes.append(None)
            continue
        flat = np.unique(np.concatenate(per[k]))
        r, c = flat // cols, flat % cols
        box = (int(r.min()), int(r.max()) + 1, int(c.min()), int(c.max()) + 1)
        if flat.size != (box[1] - box[0]) * (box[3] - box[2]):
            return None   # not one whole rectangle
        boxes.append(box)
    stored = [b for b in boxes if b is not None]
    if not stored:
        return None
    tile = (max(b[1] - b[0] for b in stored), max(b[3] - b[2] for b in stored))
    extent = (rows, cols)
    positions = []
    for box in boxes:
        if box is None:
            positions.append(None)
            continue
        r0, r1, c0, c1 = box
        if r0 % tile[0] or c0 % tile[1] or r1 != min(r0 + tile[0], rows) or c1 != min(c0 + tile[1], cols):
            return None   # not the lattice tile at its position, clipped to the output
        positions.append((r0 // tile[0], c0 // tile[1]))
    lattice = Lattice(tile=tile, extent=extent, positions=tuple(positions), idle=total - end)
    gm, gn = lattice.tiles
    placed = [pos for pos in positions if pos is not None]
    if gm < 2 or gn < 2 or gm * gn != end or len(set(placed)) != len(placed):
        return None   # a tiling along one axis is a line; a grid of another size, or a tile stored twice, no lattice
    ends = {p[0]: pos for (p, _), pos in zip(programs, positions) if p[0] in (0, end - 1)}
    if ends != {0: (0, 0), end - 1: (gm - 1, gn - 1)}:
        return None   # the first and last programs store the first and last tiles (row-major, column-major, grouped)
    return lattice


def _tail(programs: list, per: dict, total: int) -> Optional[int]:
    """The first program of the line's idle tail (line_grid.idle_start; `total` when every run program stored), or
    None when a program storing nothing lies before a program that stored, or the step into the tail is not closed."""
    busy = [k in per for k in range(len(programs))]
    return total if all(busy) else idle_start([p[0] for p, _ in programs], busy)
