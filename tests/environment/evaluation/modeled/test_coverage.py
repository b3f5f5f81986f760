"""What the sampled programs at the GPU shape are credited with storing (replay/coverage.py): each sampled
program stands for the programs at its kind of grid position, an honest tiling's estimate is exact, and
aten writes a later launch may overwrite are neither compared nor counted. Synthetic store logs for the
arithmetic, real kernels through the real Replay for the rest."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from environment.evaluation.modeled.counting import CostCounter
from environment.evaluation.replay import coverage, line_grid, sample_trust, sampled, tile_lattice
from environment.evaluation.replay.execute import Replay
from environment.evaluation.replay.rebuild import rebuild
from environment.evaluation.replay.recorder import TraceRecorder
from environment.evaluation.replay.sampled import run_sampled
from tests.environment.evaluation.modeled.modeled_helpers import GELU, ROOT
from tests.environment.evaluation.modeled.test_sampled import load_module_from_source

EMPTY = np.zeros(0, dtype=np.int64)

pytestmark = pytest.mark.usefixtures("sampled_line_grids")   # the sample's estimate (conftest.py)


def _launch(programs: list, grid: tuple, blocks: dict, base: int, size: int = 4) -> coverage.SampledStores:
    """A sampled launch whose program k stores `size`-byte items at byte offsets [a, b) of `base`, for each
    (a, b) in blocks[position of program k] (nothing when absent)."""
    log, owners = [], []
    for k, (pos, _) in enumerate(programs):
        for a, b in blocks.get(pos, []):
            log.append((np.arange(base + a, base + b, size, dtype=np.int64), size))
            owners.append(k)
    return coverage.SampledStores(programs, grid, log, owners, EMPTY)


def _line(picks: list[int], roles: list[str]) -> list:
    return [((k, 0, 0), r) for k, r in zip(picks, roles)]


def test_output_coverage_is_the_weighted_count_of_distinct_output_elements_the_sampled_programs_store():
    buf, junk = torch.zeros(2 * 980), torch.zeros(980)   # the output is buf[:980]: 98 programs of 10 elements
    out, at = buf[:980], buf.data_ptr()
    programs = _line([0, 97, 10, 25, 40, 55, 70, 85, 90], ["corner", "corner", *["stratum"] * 6, "check"])
    honest = {p: [(40 * p[0], 40 * p[0] + 40)] for p, _ in programs}

    def cover(blocks: dict, size: int = 4) -> float:
        return coverage.output_coverage(out, [_launch(programs, (98, 1, 1), blocks, at, size)], [])

    assert cover(honest) == 1.0
    # a sampled stratum program that skips its block (stores scratch): the programs it stands for on the line are
    # missing (itself, programs 1-9 before it, half of the 14 between it and program 25)
    skip = {**honest, (10, 0, 0): [(junk.data_ptr() - at, junk.data_ptr() - at + 40)]}
    assert cover(skip) == pytest.approx(1 - (1 + 9 + 7) / 98) and cover(skip) < 1 - coverage.COVERAGE_SLACK
    # every interior program skips (red team a104/a105): only the corners count
    corners_only = {p: b for p, b in honest.items() if p[0] in (0, 97)}
    assert cover(corners_only) == 20 / 980
    # stores past the returned view, into the output's own allocation, are no coverage (a106)
    past = {**corners_only, **{p: [(3920 + 40 * p[0], 3960 + 40 * p[0])] for p, r in programs if r != "corner"}}
    assert cover(past) == 20 / 980
    # every program storing the same block is that block once
    same = {**corners_only, **{p: [(400, 440)] for p, r in programs if r != "corner"}}
    assert cover(same) < 1 - coverage.COVERAGE_SLACK
    # stores of another element size count by the bytes they touch (and are compared: written_elements, a108)
    assert cover(honest, size=8) == 1.0
    wide = _launch(programs, (98, 1, 1), honest, at, 8)
    index = coverage.written_elements(out, wide.log, [], 0)
    assert index.size == 90 and int(index[-1]) == 97 * 10 + 9
    # an aten op that wrote the output counts its elements exactly
    aten = lambda *views: [coverage.AtenWrite(v) for v in views]  # noqa: E731
    assert coverage.output_coverage(out, [], aten(out)) == 1.0
    assert coverage.output_coverage(out, [], aten(buf[:490])) == 0.5
    # but for what a later launch with unrun programs was handed (it may store there)
    assert coverage.output_coverage(out, [], [coverage.AtenWrite(out, [buf[:245]])]) == 0.75


def _tiles(grid: tuple, shape: tuple, tile: tuple) -> dict:
    """Row-major float32 blocks of an honest tiling: program (x, y) stores rows x*tm.. and columns y*tn.., masked
    at the output's edge."""
    (gm, gn, _), (m, n), (tm, tn) = grid, shape, tile
    return {(x, y, 0): [(4 * (r * n + y * tn), 4 * (r * n + min(n, y * tn + tn)))
                        for r in range(x * tm, min(m, x * tm + tm))] for x in range(gm) for y in range(gn)}


@pytest.mark.parametrize("seed", range(8))
def test_an_honest_tiling_masked_at_both_edges_is_covered_exactly_wherever_the_sample_lands(seed):
    # 50 x 30 in 8 x 8 tiles: the last row of tiles holds 2 rows, the last column 6 columns. The estimate's
    # programs land on partial edge tiles for some seeds; each stands for its own kind of position only
    out = torch.zeros(50, 30)
    grid = (7, 4, 1)
    programs = sampled.choose_programs(grid, seed)
    launch = _launch(programs, grid, _tiles(grid, (50, 30), (8, 8)), out.data_ptr())
    assert coverage.output_coverage(out, [launch], []) == pytest.approx(1.0, abs=1e-12)


def test_rows_skipped_in_every_program_or_in_one_kind_of_position_fall_short_whatever_the_grid_shape():
    # a116's walk (every program leaves 1 of its 10 elements), on a line and on a (49, 2) grid (a117), and a117's
    # grid skipping only at the short axis's last index, where an honest tiling's edge tiles live (a120)
    buf = torch.zeros(980)
    at = buf.data_ptr()
    for grid, pid in (((98, 1, 1), lambda x, y: x), ((49, 2, 1), lambda x, y: 2 * x + y)):
        programs = sampled.choose_programs(grid, 3)
        short = {(x, y, 0): [(40 * pid(x, y), 40 * pid(x, y) + 36)] for (x, y, _), _ in programs}
        assert coverage.output_coverage(buf, [_launch(programs, grid, short, at)], []) < 1 - coverage.COVERAGE_SLACK
    for seed in range(8):
        programs = sampled.choose_programs((49, 2, 1), seed)
        edge = {(x, y, 0): [(80 * x + 40 * y, 80 * x + 40 * y + (36 if y else 40))] for (x, y, _), _ in programs}
        found = coverage.output_coverage(buf, [_launch(programs, (49, 2, 1), edge, at)], [])
        assert found < 1 - coverage.COVERAGE_SLACK, seed


def test_a_kind_of_position_the_sample_missed_counts_as_its_corner_that_stored_the_most():
    # a (10, 5) grid sampled at its corners and two interior programs: the edge kinds with an interior axis
    # ((last, interior): 3 programs, ...) stand with a corner of their kind; the weights count every program once
    grid = (10, 5, 1)
    programs = [((0, 0, 0), "corner"), ((0, 4, 0), "corner"), ((9, 0, 0), "corner"), ((9, 4, 0), "corner"),
                ((4, 2, 0), "stratum"), ((6, 1, 0), "stratum"), ((0, 2, 0), "check")]
    stored = [64, 48, 16, 12, 64, 64, 64]       # the last row and column of tiles are partial
    weights = coverage.class_weights(programs, grid, stored)
    assert math.fsum(weights) == math.prod(grid)
    assert weights[4] == weights[5] == 8 * 3 / 2    # the interior, shared by the estimate's programs
    assert weights[6] == 3                          # (first, interior): only a check program was drawn there
    assert weights[2] == 1 + 3                      # (last, interior) stands with (last, first), not (last, last)
    assert weights[0] == 1 + 8 and weights[1] == 1 + 8   # (interior, first|last) with (first, first|last)
    assert weights[3] == 1
    # a corner storing more than an interior program (other programs' blocks, once) does not stand for more
    inflated = coverage.class_weights(programs, grid, [640, 48, 16, 12, 64, 64, 64])
    assert inflated[0] == 1 + 8 * 64 / 640 and inflated[1] == 1 + 8
    # a whole small grid: every program is its own sample
    small = [((x, y, 0), "stratum") for x in range(4) for y in range(3)]
    assert coverage.class_weights(small, (4, 3, 1), [1] * 12) == [1.0] * 12



def _enumerated(pid: int, shape: tuple, tile: tuple, group: int) -> tuple[int, int]:
    """The tile (row, column) program `pid` of a line grid stores: row-major (group 0), or grouped along rows as in
    Triton's matmul tutorial."""
    gm, gn = -(-shape[0] // tile[0]), -(-shape[1] // tile[1])
    if not group:
        return pid // gn, pid % gn
    first = pid // (group * gn) * group
    return first + (pid % (group * gn)) % min(gm - first, group), (pid % (group * gn)) // min(gm - first, group)


def _line_tiling(programs: list, shape: tuple, tile: tuple, group: int, skip: dict = None) -> dict:
    """_launch's blocks of a line grid storing one tile of `shape` per program (row-major float32), masked at the edges;
    `skip`: program -> rows of its tile it leaves unstored."""
    blocks = {}
    for pos, _ in programs:
        r, c = _enumerated(pos[0], shape, tile, group)
        rows = range(r * tile[0], min(shape[0], r * tile[0] + tile[0]))
        cols = (c * tile[1], min(shape[1], c * tile[1] + tile[1]))
        blocks[pos] = [(4 * (i * shape[1] + cols[0]), 4 * (i * shape[1] + cols[1])) for i in rows
                       if i - r * tile[0] not in (skip or {}).get(pos[0], ())]
    return blocks


def test_the_programs_every_draw_of_a_line_grid_runs_stand_for_themselves_only():
    # programs 0, 1, G-2 and G-1 run whatever the secret: were the probes 1 and G-2 interpolated, each stood for
    # half the gap to the nearest drawn program (red team a251: probes storing zeros were priced as a sample)
    grid, rows = (4097, 1, 1), 3001
    out = torch.empty(grid[0], rows)
    for seed in range(40):
        programs = sampled.choose_programs(grid, seed)
        programs = programs + line_grid.line_probes(grid, programs)
        weights = coverage.position_weights(programs, grid, [rows] * len(programs))
        assert math.fsum(weights) == pytest.approx(grid[0]), seed
        ends = [w for (pos, _), w in zip(programs, weights) if pos[0] in (0, 1, grid[0] - 2, grid[0] - 1)]
        assert ends == [1.0] * 4, seed
        # both probes store half their row: the estimate misses exactly those two halves, wherever the draw fell
        half = {1, grid[0] - 2}
        blocks = {pos: [(4 * rows * pos[0], 4 * (rows * pos[0] + (rows // 2 if pos[0] in half else rows)))]
                  for pos, _ in programs}
        covered = coverage.output_coverage(out, [_launch(programs, grid, blocks, out.data_ptr())], [])
        assert covered == pytest.approx(1 - 2 * (rows - rows // 2) / out.numel(), abs=1e-12), seed


def test_an_unmasked_last_block_shifted_back_over_its_neighbour_is_covered_exactly_on_every_draw():
    # start = min(pid * BLOCK, n - BLOCK): the last program re-stores most of its neighbour's block (G-2, a probe
    # every draw runs). Scaling the whole sample by its share of distinct stores charged that overlap to every
    # drawn program (94-97% at the GPU shape: unreplayable); programs standing for themselves count as they are
    grid, block = (6004, 1, 1), 64
    n = (grid[0] - 1) * block + 23
    out = torch.empty(n)
    for seed in range(20):
        programs = sampled.choose_programs(grid, seed)
        programs = programs + line_grid.line_probes(grid, programs)
        blocks = {pos: [(4 * min(pos[0] * block, n - block), 4 * (min(pos[0] * block, n - block) + block))]
                  for pos, _ in programs}
        covered = coverage.output_coverage(out, [_launch(programs, grid, blocks, out.data_ptr())], [])
        assert covered == pytest.approx(1.0, abs=1e-12), seed
        # drawn programs storing the corner's block instead of their own cover nothing of their own
        copied = {**blocks, **{pos: blocks[(grid[0] - 1, 0, 0)] for pos, r in programs if r == "stratum"}}
        covered = coverage.output_coverage(out, [_launch(programs, grid, copied, out.data_ptr())], [])
        assert covered < 1 - coverage.COVERAGE_SLACK, seed


@pytest.mark.parametrize("group", [0, 8])
def test_a_line_grid_enumerating_a_2d_tiling_is_weighed_by_its_tiles_positions_whatever_the_draw(group):
    # 8191 x 3001 in 128 x 128 tiles on a line of 64 x 24 = 1536 programs (matmul_bias_relu's GPU shape and the
    # tutorial-tiles solution): the partial last column recurs every 24 programs (every 192, in runs of 8, grouped),
    # so the line's interpolation missed by up to 8% on some draws; weighed by tile class, every draw is exact
    shape, tile = (8191, 3001), (128, 128)
    out = torch.empty(shape)
    grid, missed = (64 * 24, 1, 1), 0
    for seed in range(40):
        programs = sampled.choose_programs(grid, seed)
        programs = programs + line_grid.line_probes(grid, programs)
        launch = _launch(programs, grid, _line_tiling(programs, shape, tile, group), out.data_ptr())
        lattice = tile_lattice.infer(programs, grid, launch.log, launch.owners, [torch.empty(3), out])
        assert lattice is not None and lattice.tile == tile and lattice.tiles == (64, 24), seed
        launch.lattice = lattice
        assert coverage.output_coverage(out, [launch], []) == pytest.approx(1.0, abs=1e-12), seed
        launch.lattice = None
        missed += coverage.output_coverage(out, [launch], []) < 1 - coverage.COVERAGE_SLACK
    assert missed   # what the line's weights made of the same draws


def test_a_line_grid_is_weighed_as_a_lattice_only_when_every_run_program_stored_its_whole_tile_once():
    shape, tile, grid = (8191, 3001), (128, 128), (64 * 24, 1, 1)
    out = torch.empty(shape)
    programs = sampled.choose_programs(grid, 5)
    honest = _line_tiling(programs, shape, tile, 8)
    pid = programs[3][0][0]

    def lattice(blocks: dict, tensors=(out,)):
        launch = _launch(programs, grid, blocks, out.data_ptr())
        return tile_lattice.infer(programs, grid, launch.log, launch.owners, list(tensors))

    assert lattice(honest) is not None
    assert lattice(_line_tiling(programs, shape, tile, 8, {pid: (5,)})) is None       # a row of its tile skipped
    assert lattice({**honest, (pid, 0, 0): []}) is None                                # nothing stored
    twice = {**honest, (pid, 0, 0): honest[programs[4][0]]}                            # another program's tile
    assert lattice(twice) is None
    assert lattice(honest, (out.view(-1), torch.empty(10, 10))) is None                # not stored into as a tiling
    assert lattice(_line_tiling(programs, (8191, 3001), (8191, 128), 0)) is None       # 24 programs' worth: a line


def _sampled_line(grid: tuple, seed: int, stored) -> list:
    """The programs the sampler runs on a line grid (choose_programs, line_probes, then line_grid.sample_line's
    probes) where program p stores stored(p) elements."""
    chosen = sampled.choose_programs(grid, seed)
    chosen = chosen + line_grid.line_probes(grid, chosen)
    ran = list(chosen)
    line_grid.sample_line(grid, chosen, ran.extend,
                          lambda k: (np.array([stored(p[0]) for p, _ in ran[:k]], dtype=np.float64), 10**6))
    return ran


@pytest.mark.parametrize("group", [None, 0, 8])
def test_an_over_launched_line_grids_idle_tail_is_bisected_and_weighed_as_nothing_on_every_draw(group):
    # `if pid >= tiles: return` on a grid rounded up to a multiple of 132: the programs past the last tile store
    # nothing. The probe at G-2 and the corner G-1 lie in that tail, so the sample was distrusted on every draw
    # (stray_writers) and the file unpriced. The sampler now bisects the step into the tail to adjacent programs
    # (line_grid.tail_probe), the line (None: 1024-element blocks of a flat output) or lattice (row-major, grouped)
    # ends a program early, and the tail weighs nothing: exact on every draw
    shape, tile = (4097, 3001), (16, 256)
    out = torch.empty(shape)
    tiles = out.numel() // 1024 + 1 if group is None else 257 * 12
    grid = (-(-tiles // 132) * 132, 1, 1)
    for seed in range(12):
        if group is None:
            ran = _sampled_line(grid, seed, lambda p: min(1024, out.numel() - 1024 * p) if p < tiles else 0)
            blocks = {pos: [(4096 * pos[0], 4 * min(out.numel(), 1024 * pos[0] + 1024))] for pos, _ in ran
                      if pos[0] < tiles}
        else:
            ran = _sampled_line(grid, seed, lambda p: 1 if p < tiles else 0)
            blocks = _line_tiling([q for q in ran if q[0][0] < tiles], shape, tile, group)
        first = min(pos[0] for pos, _ in ran if pos[0] >= tiles)
        assert first == tiles and any(pos[0] == tiles - 1 for pos, _ in ran), seed   # the step closed
        launch = _launch(ran, grid, blocks, out.data_ptr())
        launch.lattice = tile_lattice.infer(ran, grid, launch.log, launch.owners, [out])
        assert (launch.lattice is None) == (group is None), seed
        assert coverage.output_coverage(out, [launch], []) == pytest.approx(1.0, abs=1e-12), seed
        if group is None:
            weights = coverage.position_weights(ran, grid, [1 if pos[0] < tiles else 0 for pos, _ in ran])
            assert math.fsum(w for (pos, _), w in zip(ran, weights) if pos[0] < tiles) == pytest.approx(tiles)
        # a run program storing nothing before the last that stored skips its block: no tail, and it falls short
        skipper = next(i for i, (pos, role) in enumerate(ran) if role == "stratum")
        skipped = {pos: b for pos, b in blocks.items() if pos != ran[skipper][0]}
        launch = _launch(ran, grid, skipped, out.data_ptr())
        assert tile_lattice.infer(ran, grid, launch.log, launch.owners, [out]) is None, seed
        assert coverage.output_coverage(out, [launch], []) < 1 - coverage.COVERAGE_SLACK, seed


def test_an_idle_tail_is_no_sample_only_when_it_follows_every_busy_program_and_its_step_is_closed():
    busy = {"sectors": 40, "read": 20, "write": 20, "flops": {"fp32": 99.0}, "written": np.array([7 * 4096])}
    # an idle program may still read what every program loads before its loop (a weight vector): it stores nothing
    idle = {"sectors": 16, "read": 16, "write": 0, "flops": {"int": 16.0}, "written": None}
    grid = (100, 1, 1)

    def judged(idle_at: set, programs: list):
        per = [idle if pos[0] in idle_at else busy for pos, _ in programs]
        roles = [r for _, r in programs]
        tail, _ = sample_trust.idle_tail(per, programs, grid)
        storages = [(0, 1 << 20)]
        return (sorted(tail), sample_trust.stray_writers(per, roles, storages, tail),
                sample_trust.outliers(per, roles, tail))

    programs = _line([0, 99, 10, 30, 50, 70, 80, 20, 40, 60, 1, 98, 89, 90], ["corner"] * 2 + ["stratum"] * 5 + [
        "check"] * 3 + ["probe"] * 4)
    assert judged({90, 98, 99}, programs) == ([1, 11, 13], [], [])   # 89 busy, 90 idle: the tail is 90..99
    # the step not closed (89 and 90 not both run), or an idle program before a busy one: judged as before
    assert judged({95, 98, 99}, programs)[0] == [] and judged({95, 98, 99}, programs)[1]
    assert judged({50, 98, 99}, programs)[0] == [] and judged({50, 98, 99}, programs)[1]


def _tile_blocks(programs: list, shape: tuple, tile: tuple, rows: int) -> dict:
    """_launch's blocks of a 2-D grid of `tile` tiles of `shape` (row-major float32), program (m, n) storing tile (m, n)
    masked at the edges, and nothing when m >= rows (row blocks past the last: `if pid_m >= rows: return`)."""
    blocks = {}
    for (m, n, _), _ in programs:
        if m < rows:
            cols = (n * tile[1], min(shape[1], n * tile[1] + tile[1]))
            blocks[(m, n, 0)] = [(4 * (i * shape[1] + cols[0]), 4 * (i * shape[1] + cols[1]))
                                 for i in range(m * tile[0], min(shape[0], m * tile[0] + tile[0]))]
    return blocks


def test_a_2d_grid_rounded_up_along_one_axis_is_weighed_as_its_busy_part_on_every_draw():
    # 16 x 256 tiles over 4097 x 3001 on a (264, 12) grid: the row-block axis rounded up to a multiple of 8, row blocks
    # 257..263 returning at once. A drawn interior program there stored nothing where its neighbours store the output
    # (stray_writers: unpriced), on one secret in four; on the others those programs were weighed as busy ones. The
    # sampler bisects the step along that axis and runs the busy part's last corners (line_grid.tail_probe); the busy
    # part is weighed as a grid of its own and the slab's programs as nothing: exact, and alike, on every draw
    shape, tile, rows = (4097, 3001), (16, 256), 257
    grid = (264, 12, 1)
    out = torch.empty(shape)
    for seed in range(24):
        chosen = sampled.choose_programs(grid, seed) + line_grid.line_probes(grid, [])
        ran = list(chosen)
        line_grid.sample_line(grid, chosen, ran.extend, lambda k: (np.array(
            [bool(_tile_blocks([q], shape, tile, rows)) for q in ran[:k]], dtype=np.float64), 10**6))
        assert {(rows - 1, 0, 0), (rows - 1, 11, 0), (rows, 0, 0)} <= {pos for pos, _ in ran}, seed
        stored = [int(pos[0] < rows) for pos, _ in ran]
        assert coverage.idle_part(ran, grid, stored) == (0, rows), seed
        weights = coverage.position_weights(ran, grid, stored)
        assert math.fsum(weights) == pytest.approx(264 * 12), seed
        assert math.fsum(w for (pos, _), w in zip(ran, weights) if pos[0] < rows) == pytest.approx(rows * 12), seed
        launch = _launch(ran, grid, _tile_blocks(ran, shape, tile, rows), out.data_ptr())
        assert coverage.output_coverage(out, [launch], []) == pytest.approx(1.0, abs=1e-12), seed
        per = [{"sectors": 8 * s, "read": 4 * s, "write": 4 * s, "flops": {"fp32": 9.0 * s},
                "written": np.array([out.data_ptr() // 32]) if s else None} for s in stored]
        idle, split = sample_trust.idle_tail(per, ran, grid)
        assert split == (0, rows) and idle == {i for i, s in enumerate(stored) if not s}, seed
        assert sample_trust.stray_writers(per, [r for _, r in ran], [(out.data_ptr() // 32, 1 << 62)], idle) == []
        # a program idle among busy ones (a skipped tile) is no slab: judged as before, and the step stays open
        skipper = next(pos for pos, role in ran if role == "stratum" and pos[0] < rows - 1)
        holes = [int(pos[0] < rows and pos != skipper) for pos, _ in ran]
        assert coverage.idle_part(ran, grid, holes) is None, seed
    # a slab past half its axis leaves the busy part too few draws: it is not weighed as one
    wide = (2 * rows + 1, 12, 1)
    assert line_grid.idle_split(wide, [(rows - 1, 0, 0), (rows, 0, 0), (0, 0, 0)], [True, False, True]) is None
    assert line_grid.idle_split(wide, [(rows, 0, 0), (rows + 1, 0, 0), (0, 0, 0)], [True, False, True]) == (0, rows + 1)


def test_the_last_program_before_an_idle_tail_may_be_lighter_than_the_sample_never_heavier():
    # it ends the busy line as the corner G-1 ends a whole one (a partial last tile), but it runs after the sample:
    # judged as a corner, by no range, it could redo rows an atomic counter told the drawn programs to leave as zeros
    def counts(n: int) -> dict:
        return {"sectors": n, "read": n, "write": n, "flops": {"fp32": 4.0 * n}, "written": None}
    roles = ["corner", "stratum", "stratum", "check", "check", "end"]
    assert sample_trust.outliers([counts(40)] * 5 + [counts(10)], roles) == []
    assert sample_trust.outliers([counts(40)] * 5 + [counts(160)], roles) == [5]


def _replay(path, inputs: list[torch.Tensor], seed: int, source: str | None = None):
    """(counter, replay, outputs) of a sampled replay (seed None: every program) of `source` (else the solution
    at `path`)."""
    source = source or path.read_text()
    rebuilt = rebuild(source)
    kernels = load_module_from_source(rebuilt.source)
    module = load_module_from_source(source)
    with torch.no_grad(), TraceRecorder(inputs) as recorder:
        out = module.ModelNew()(*inputs)
    trace, constants = recorder.finish([out])
    counter = CostCounter(lifts_are_copies=True, sample_seed=seed, sampler=None if seed is None else run_sampled)
    replay = Replay(trace, inputs, constants, kernels, rebuilt.kernels, counter)
    with torch.no_grad(), counter:
        outputs = replay.run()
    return counter, replay, outputs


def test_the_shipped_tiled_matmul_masked_at_both_edges_is_covered_exactly():
    path = ROOT / "environment/tasks/problems/matmul_bias_relu/solutions/correct/triton_tiled.py"
    torch.manual_seed(0)
    a, b, bias = torch.randn(321, 64), torch.randn(64, 263), torch.randn(263)   # a (6, 5) grid of 64 x 64 tiles
    for seed in (1, 2, 3):
        counter, replay, _ = _replay(path, [a, b, bias], seed)
        replay.checked_outputs()
        assert counter.output_coverage == [pytest.approx(1.0, abs=1e-12)], seed



def test_the_shipped_tutorial_tiles_matmul_on_a_line_grid_is_covered_and_written_exactly_on_every_draw():
    path = ROOT / "environment/tasks/problems/matmul_bias_relu/solutions/correct/triton_tf32x3_tutorial_tiles.py"
    torch.manual_seed(0)
    a, b, bias = torch.randn(2100, 64), torch.randn(64, 1100), torch.randn(1100)   # 17 x 9 tiles of 128, grouped
    for seed in (1, 2, 3, 4):
        counter, replay, _ = _replay(path, [a, b, bias], seed)
        replay.checked_outputs()
        assert counter.output_coverage == [pytest.approx(1.0, abs=1e-12)], seed
        assert counter.records[-1]["bytes_written"] >= 2100 * 1100 * 4, seed


ZEROS = (GELU / "solutions" / "correct" / "triton_fused.py").read_text()


def test_an_output_zeroed_before_the_kernel_stores_into_it_is_judged_on_what_the_kernel_stored():
    # torch.zeros_like, then a kernel whose sampled programs store part of it: the zeros are no result where the
    # programs that were not run would store (not compared) and no coverage (the kernel's own stores cover it)
    source = ZEROS.replace("out = torch.empty_like(x)", "out = torch.zeros_like(x)")
    assert source != ZEROS
    torch.manual_seed(0)
    x, bias = torch.randn(301, 700), torch.randn(700)
    counter, replay, _ = _replay(GELU / "solutions" / "correct" / "triton_fused.py", [x, bias], 11, source)
    index, values = replay.checked_outputs()
    assert counter.output_coverage == [1.0]
    assert index.numel() == 16 * 1024 - (206 * 1024 - x.numel())   # what the 16 sampled programs stored, no zero
    assert torch.allclose(values, torch.nn.functional.gelu(x + bias).flatten()[index], atol=1e-5, rtol=1e-5)
    # a kernel whose programs leave half their block as the fill's zeros falls short: the fill stands for nothing
    half = source.replace("mask=mask)", "mask=mask & (tl.arange(0, BLOCK) < BLOCK // 2))")
    assert half != source
    counter, replay, _ = _replay(GELU / "solutions" / "correct" / "triton_fused.py", [x, bias], 11, half)
    index, values = replay.checked_outputs()
    assert counter.output_coverage[0] < 0.6
    assert torch.allclose(values, torch.nn.functional.gelu(x + bias).flatten()[index], atol=1e-5, rtol=1e-5)


def test_an_aten_write_is_superseded_only_by_a_later_launch_with_unrun_programs_storing_into_its_allocation():
    out, other = torch.zeros(4096), torch.zeros(4096)
    stored = np.arange(out.data_ptr() // 32, out.data_ptr() // 32 + 4, dtype=np.int64)
    run = [((0, 0, 0), "corner"), ((99, 0, 0), "corner"), ((50, 0, 0), "stratum")]
    assert coverage.SampledStores(run, (100, 1, 1), [], [], stored).overwrites(out[:10])
    assert not coverage.SampledStores(run, (100, 1, 1), [], [], stored).overwrites(other)   # another allocation
    assert not coverage.SampledStores(run, (100, 1, 1), [], [], EMPTY).overwrites(out)      # it stored nothing
    whole = [((x, 0, 0), "stratum") for x in range(3)]                                      # every program ran:
    assert not coverage.SampledStores(whole, (3, 1, 1), [], [], stored).overwrites(out)     # its stores are all


HALVES = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, N, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + (offs // N) * stride + offs % N, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        M, N = x.shape
        out = torch.empty(M, 2 * N)
        out[:, :N].copy_(x)
        double_kernel[(triton.cdiv(M * N, 256),)](x, out[:, N:], M * N, N, 2 * N, BLOCK=256)
        return out
'''


def test_an_aten_write_beside_what_a_later_launch_was_handed_is_still_compared_and_counted():
    # the left half copied by aten, the right half stored by a kernel handed that half: only what the kernel may
    # store is left out. Handed the whole output (its offsets computed inside), it may store anywhere in it
    torch.manual_seed(0)
    x = torch.randn(64, 100)
    expected = torch.cat([x, 2 * x], dim=1).flatten()
    for source, whole in ((HALVES, True), (HALVES.replace("out[:, N:], M * N", "out, M * N").replace(
            "(offs // N) * stride + offs % N", "(offs // N) * stride + offs % N + N"), False)):
        counter, replay, _ = _replay(None, [x], 5, source)
        index, values = replay.checked_outputs()
        assert torch.equal(values, expected[index])
        left = int(((index % 200) < 100).sum())
        if whole:
            assert counter.output_coverage == [1.0] and left == 6400
        else:
            assert counter.output_coverage[0] < 0.6 and left == 0


def test_the_checked_positions_of_a_whole_output_are_a_seeded_uniform_draw_of_written_elements():
    """An aten op that wrote all of a GPU-shape output marks every element: MAX_CHECKED of them are
    compared, drawn without listing the millions (which took the replay a second), distinct, sorted,
    all written, the same for the same seed and not for another; a sparse mark is drawn from too."""
    import numpy as np
    import torch

    from environment.evaluation.replay import coverage

    t = torch.empty(1 << 22)
    whole = coverage.written_elements(t, [], [coverage.AtenWrite(t)], seed=7)
    assert whole.size == coverage.MAX_CHECKED and np.all(np.diff(whole) > 0)
    assert np.array_equal(whole, coverage.written_elements(t, [], [coverage.AtenWrite(t)], seed=7))
    assert not np.array_equal(whole, coverage.written_elements(t, [], [coverage.AtenWrite(t)], seed=8))
    # spread over the output, not a prefix: every eighth of it holds about an eighth of the draw
    counts = np.bincount(whole * 8 // t.numel(), minlength=8)
    assert counts.min() > coverage.MAX_CHECKED // 8 * 0.9, counts
    # a view written every 37th element: what is drawn is written
    sparse = t[::37]
    drawn = coverage.written_elements(t, [], [coverage.AtenWrite(sparse)], seed=7)
    assert drawn.size == coverage.MAX_CHECKED and np.all(drawn % 37 == 0)


def test_a_sparse_mark_is_listed_and_only_a_dense_one_drawn_by_chance(monkeypatch):
    """Hitting MAX_CHECKED distinct flags by chance among barely more of them is a coupon collector (16 s and
    2 GB for 65537 flags in a 64 M output; 1.2 s for a 64x64-tile matmul's sampled stores at 4096^2): below
    1/DENSE of the output the flags are listed, and the draw from the list is as uniform."""
    import numpy as np
    import torch

    from environment.evaluation.replay import coverage

    real = coverage._draw_marked
    calls = []
    monkeypatch.setattr(coverage, "_draw_marked", lambda *a: calls.append(a[1]) or real(*a))
    t = torch.empty(1 << 22)
    sparse = coverage.written_elements(t, [], [coverage.AtenWrite(t[::37])], seed=7)
    assert calls == [] and sparse.size == coverage.MAX_CHECKED and np.all(sparse % 37 == 0)
    assert np.all(np.diff(sparse) > 0) and np.bincount(sparse * 8 // t.numel(), minlength=8).min() > 7000
    dense = coverage.written_elements(t, [], [coverage.AtenWrite(t[: t.numel() // 2])], seed=7)
    assert calls == [t.numel() // 2] and dense.size == coverage.MAX_CHECKED and dense.max() < t.numel() // 2
