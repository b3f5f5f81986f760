"""Run a sample of a launch's programs and scale its counts to the whole grid (the GPU-shape replay).

The interpreter cannot run a whole launch at the sizes a GPU runs (an 8192x8192 elementwise launch
is 65,536 programs, minutes of interpreter time), so the replay at the task's GPU shape runs, per
launch, the *boundary* programs (every corner of the grid: first and last index on each axis,
where masks and tails live) and a few *interior* programs drawn from the secret seed, all under
the same counting hooks as a full replay. Per-program counts are then scaled to the grid:
boundary programs weigh 1 each, each interior program stands for (programs - boundary) / interior.

DRAM traffic of the whole launch is estimated as the scaled sum of each program's unique sectors,
capped by the footprint of the tensor arguments the sample touched (a tile re-read by many
programs is DRAM traffic once and L2 traffic every time, which the per-instruction sectors
charge), and never below what the sample itself touched. Deterministic: the sample depends only
on the grid and the seed.

The estimate's interior programs are drawn from the seed too (one uniformly at random inside each
of STRATA equal strata of the grid), and the replayer keys that seed to the server secret and the
submission's digest: the same submission gets bit-identical prices for the same seed, and no kernel
can compute which programs carry the estimate (fixed strata were skipped by a kernel that did no
work exactly there: red team a96). Homogeneity is checked both ways between the estimate's and the
check programs (with the corners in both ranges; a corner that touches no memory is left out of the
lower bound), and every interior program must store into the same arguments as the others. The
output coverage (coverage.py) estimates how many distinct elements of each returned output view the
sampled programs stand for (by the bytes they touch, any element size, each program weighed by the
programs at its kind of grid position): a program that skips its block covers nothing, so a sampled
skipper voids the estimate (red team a104-a106, a108, a116, a117). A line grid small and cheap enough
(line_grid.EXACT_LINE, EXACT_ACCESSES: a persistent kernel's) runs whole: counted exactly, whatever the draw (red team a213).
"""
from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import torch

from environment.evaluation.child import gpu_numerics
from environment.evaluation.modeled.memory import SECTOR
from environment.evaluation.modeled.triton_launch import ProgramTooLong
from environment.evaluation.replay import closure, closure_reads, tickets, tile_lattice
from environment.evaluation.replay.line_grid import line_axis, line_probes, sample_line
from environment.evaluation.replay.coverage import SampledStores, program_weights
from environment.evaluation.replay.producer import producer
from environment.evaluation.replay.sample_trust import OUTLIER_SLACK, idle_tail, outliers, stray_writers  # noqa: F401 (re-exported)
from environment.evaluation.replay.tile_stores import class_tiles

# Budget per launch: at most 8 corner programs, STRATA evenly spaced interior programs (the
# estimate) and CHECKS interior programs drawn from the secret seed (checked, and their counts must
# lie within the range the estimate's programs span). A grid of at most FULL programs runs whole.
# With the interpreter's ~1-50 ms per program at GPU shapes this bounds the sampled replay of one
# launch to about a second on a 2-core host.
STRATA = 6
CHECKS = 6
FULL = 16
# A launch whose programs add into shared elements atomically (split-K into a zeroed output) leaves partial
# sums where only the sample ran: each sampled program's position is completed along the grid's short axes
# (shortest first, at most COMPLETE programs per position), the split axis of such kernels, so the elements
# it added into hold whole sums and can be compared. The completing programs carry no weight anywhere.
COMPLETE = 16
# A split-K (split-hidden) kernel's split axis is found by running one sampled program's neighbour on each axis:
# an axis whose neighbour adds into the same elements is a split axis, completed whole for every sampled position
# when that costs at most COMPLETE_PROGRAMS programs (64 splits of a K/64 slice are one full tile's work each)
COMPLETE_PROGRAMS = 2048
# The most memory instructions one sampled program may execute (a persistent program over a 8192 x 8192 output
# on 132 programs executes ~1,500; a tiled GEMM's ~130). A program past it is one the interpreter cannot run in
# the time a replay has, and the GPU-shape price is void with a message naming the model's limit: above all a
# program claiming tiles from an atomic counter until it runs out, which claims every tile when programs run one
# at a time, as they do here (its real share is the tiles over the programs: a price this model cannot take)
PROGRAM_ACCESSES = 4096
# ... unless the launch runs few programs: then each may execute up to its share of LAUNCH_ACCESSES (a grid of
# 8 programs that each loop over an eighth of a 4097 x 3001 tensor executes ~4,500: honest, slow, and priced)
LAUNCH_ACCESSES = 65536
MODEL_LIMIT = "a limit of the model, not a fault of the kernel"
# Names that limit in the message (evaluator/gpu_shape.py reads it there): a launch whose grid fills the GPU (a
# persistent loop over min(SMs, tiles) programs) keeps its model-shape price capped at 1x; a smaller one gets none
LONG_PROGRAMS = "programs too long to sample"
CLAIMED = "atomics: tiles claimed from a counter?"   # ... and no price at all then (the model shape's is one program's)


def aten_reads(sink, name: str, reads) -> None:
    """The sampled replay's CostCounter hook for an aten op's reads (closure_reads.aten_bound): the model's limit, named."""
    try:
        closure_reads.aten_bound(sink.producers, name, reads)
    except closure.ClosureLimit as limit:
        raise RuntimeError(f"{MODEL_LIMIT} ({closure.LIMIT}): {limit}") from None


def choose_programs(grid: tuple[int, int, int], seed: int) -> list[tuple[tuple[int, int, int], str]]:
    """((x, y, z), role) of the programs to run, role "corner", "stratum" or "check": every program of
    a small grid (as "stratum"), else the corners, one program drawn from the seed in each of STRATA
    equal strata (the estimate), and CHECKS more drawn from the seed. Nothing but the grid and the
    seed decides them (the seed is secret: see the module docstring). Launches with the same grid
    run the same programs, so a pipeline of launches over the same tiling (a row-wise kernel feeding
    another) reads what the sampled programs of the earlier launch wrote."""
    gx, gy, gz = grid
    total = gx * gy * gz
    if total <= FULL:
        return [((x, y, z), "stratum") for x in range(gx) for y in range(gy) for z in range(gz)]

    def point(k: int) -> tuple[int, int, int]:
        return (k // (gy * gz), (k // gz) % gy, k % gz)

    corners = sorted({(x, y, z) for x in {0, gx - 1} for y in {0, gy - 1} for z in {0, gz - 1}})
    taken = {(x * gy + y) * gz + z for x, y, z in corners}
    rng = np.random.default_rng([seed & (2**63 - 1), gx, gy, gz])
    strata: list[int] = []
    for i in range(STRATA):
        low, high = i * total // STRATA, (i + 1) * total // STRATA
        k = int(rng.integers(low, high))
        while k in taken:  # a corner (or a tiny stratum): the next free program
            k = (k + 1) % total
        taken.add(k)
        strata.append(k)
    checks: list[int] = []
    while len(checks) < min(CHECKS, total - len(taken)):  # rejection: the grid is far larger than the sample
        k = int(rng.integers(total))
        if k not in taken:
            taken.add(k)
            checks.append(k)
    return ([(c, "corner") for c in corners] + [(point(k), "stratum") for k in sorted(strata)]
            + [(point(k), "check") for k in sorted(checks)])


def completion_axes(grid: tuple[int, int, int], chosen: list, split: list[int] | None = None) -> list[int]:
    """The axes completion() completes: `split` (the axes along which programs add into the same elements) when
    completing them costs at most COMPLETE_PROGRAMS programs, else the shortest axes longer than 1 whose extents
    multiply to at most COMPLETE."""
    def positions(axes: list[int]) -> int:
        return len({tuple(c for a, c in enumerate(p) if a not in axes) for p, _ in chosen})
    if split and positions(split) * math.prod(grid[a] for a in split) <= COMPLETE_PROGRAMS:
        return list(split)
    axes, span = [], 1
    for a in sorted((a for a in range(3) if grid[a] > 1), key=lambda a: grid[a]):
        if span * grid[a] <= COMPLETE:
            axes.append(a)
            span *= grid[a]
    return axes


def completion(grid: tuple[int, int, int], chosen: list, split: list[int] | None = None) -> list:
    """((x, y, z), "complete") of the programs that share a run program's index on every axis but the
    completion_axes, not run yet. Every run program's position is completed, split_probes' neighbours too: each
    adds into its own elements, which are compared."""
    axes = completion_axes(grid, chosen, split)
    run, extra = {p for p, _ in chosen}, []
    for p, _ in (chosen if axes else []):
        for q in itertools.product(*[range(grid[a]) if a in axes else (p[a],) for a in range(3)]):
            if q not in run:
                run.add(q)
                extra.append((q, "complete"))
    return extra


def split_probes(grid: tuple[int, int, int], chosen: list) -> list:
    """((x, y, z), "check"): the neighbour of the first sampled interior program (else the first program) on
    each axis longer than 1, not already run (split_axes compares what they add into). Each is one more check of the
    sample, weighed and range-checked as one: a program the sample runs and compares carries its share (red team
    a252, a254, a255: run last as a weightless "complete" program, an atomic counter told it so, and it redid the
    rows the drawn programs had stored zeros into)."""
    first = next((p for p, r in chosen if r == "stratum"), chosen[0][0])
    run, out = {p for p, _ in chosen}, []
    for a in range(3):
        if grid[a] > 1:
            q = tuple((c + 1 if c + 1 < grid[a] else c - 1) if k == a else c for k, c in enumerate(first))
            if q not in run:
                run.add(q)
                out.append((q, "check"))
    return out


def split_axes(launch, chosen: list) -> list[int]:
    """The axes along which the first sampled interior program and its neighbour add atomically into the same
    bytes (the split axes of a split-K reduction into a zeroed output)."""
    first = next((p for p, r in chosen if r == "stratum"), chosen[0][0])
    order = {p: k for k, (p, _) in enumerate(chosen)}
    added = launch.atomic_addresses
    mine = added(order[first])
    axes = []
    for a in range(3):
        q = next((p for p, _ in chosen if p != first and all(p[i] == first[i] for i in range(3) if i != a)), None)
        if q is not None and mine.size and np.intersect1d(mine, added(order[q])).size:
            axes.append(a)
    return axes


def _stored_per_program(launch, count: int) -> np.ndarray:
    """Elements each run program stored (atomics included), by run order."""
    if not launch.store_log:
        return np.zeros(count)
    sizes = np.array([a.size for a, _ in launch.store_log], dtype=np.float64)
    return np.bincount(np.asarray(launch.store_program, dtype=np.int64), weights=sizes, minlength=count)[:count]


def run_sampled(executor, args_dev, kwargs, sink, seed: int, exact: bool = True) -> list:
    """GridExecutor.__call__ of the interpreter with its grid loop replaced by the chosen programs,
    counted by `sink` (begin, the programs, end), the launch's record then scaled to the grid.
    Returns the (addresses, itemsize) of every store the programs made. `exact` off (an autotune benchmark, which
    only ranks configs): the sample stands, neither a small line grid's rest run (line_grid.rest_of_line) nor an
    atomic launch's split columns completed."""
    import triton
    import triton.runtime.interpreter as interp

    sink.launch_begin(executor, args_dev, kwargs)
    argspec = inspect.getfullargspec(executor.fn)
    kwargs = {k: v for k, v in kwargs.items() if k in argspec.args or k in argspec.kwonlyargs}
    try:
        args_hst, kwargs_hst = executor._init_args_hst(args_dev, kwargs)
        for hook in executor.pre_run_hooks:
            hook(*args_hst, **kwargs_hst)
        patch_scope = interp._patch_lang(executor.fn)
        try:
            args = inspect.getcallargs(executor.fn, *args_hst, **kwargs_hst)
            args = {name: arg if name in executor.constexprs else interp._implicit_cvt(arg) for name, arg in args.items()}
            grid = executor.grid(args) if callable(executor.grid) else executor.grid
            grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
            chosen = choose_programs(grid, seed)
            chosen = chosen + line_probes(grid, chosen)
            sink.launch.access_budget = max(PROGRAM_ACCESSES, LAUNCH_ACCESSES // len(chosen))
            spread: tuple = ()
            interp.interpreter_builder.set_grid_dim(*grid)

            def run(programs):
                for (x, y, z), _ in programs:
                    interp.interpreter_builder.set_grid_idx(x, y, z)
                    executor.fn(**args)
            def run_closed(programs):   # earlier launches' unsampled programs that store what these read run first
                if sink.producers and programs:
                    with gpu_numerics.unrecorded():
                        closure.close(sink, executor.fn, args, grid, programs, executor.fn.__name__,
                                      storage_spans([*args_dev, *kwargs.values()]))
                run(programs)
            try:
                # a launch small enough to be completed whole keeps what its stores and atomics overwrote, to be run
                # again in the secret's order if it is (tickets.whole_in_secret_order)
                sink.launch.undo = [] if math.prod(grid) <= COMPLETE_PROGRAMS else None
                sink.launch.watch_order()
                whole = False
                # every program this launch runs stores where the others may: an element two of them store with
                # different values is a race on a GPU (red team a252: a program told by an atomic counter that it runs
                # after the sample overwrote the zeros the sampled programs stored, unweighed)
                with gpu_numerics.stores_recorded(executor.fn.__name__, grid) as stored:
                    run_closed(chosen)
                    chosen = chosen + sample_line(grid, chosen, run_closed,
                                                  lambda n: (_stored_per_program(sink.launch, n),
                                                             sink.launch.program_accesses_max),
                                                  whole=not sink.producers, rest=exact)
                    if exact and sink.launch.atomics():
                        neighbours = split_probes(grid, chosen)
                        run(neighbours)
                        chosen = chosen + neighbours
                        split = split_axes(sink.launch, chosen)
                        spread = tuple(completion_axes(grid, chosen, split))
                        extra = completion(grid, chosen, split)
                        whole = sink.launch.undo is not None and len(chosen) + len(extra) >= math.prod(grid)
                        if not whole:
                            run(extra)
                        chosen = chosen + extra
                    # which program gets which value is the GPU's order (an atomic's returned value, a flag or count
                    # another program stored, loaded): run whole in the secret's order, or the model's limit
                    if exact and not whole and (sink.launch.reads_earlier_stores or (
                            sink.launch.atomics() and tickets.values_used(executor.fn))):
                        chosen = chosen + tickets.rest(grid, chosen, sink.launch.undo is not None,
                                                       executor.fn.__name__, MODEL_LIMIT)
                        whole = True
                if whole:
                    chosen, stored = tickets.whole_in_secret_order(sink, run, chosen, seed, executor.fn.__name__, grid)
                if sink.producers:   # what they read run together, not only probed one by one
                    closure_reads.after(sink, executor.fn.__name__)
                sink.launch.undo = None
                sink.write_races.extend(stored.races)
            except closure.ClosureLimit as limit:
                raise RuntimeError(f"{MODEL_LIMIT} ({closure.LIMIT}): {limit}") from None
            except closure.ClosureOutlier as outlier:
                raise RuntimeError(str(outlier)) from None
            except ProgramTooLong:
                claimed = f" ({CLAIMED})" if sink.launch.atomics() else ""
                raise RuntimeError(
                    f"{MODEL_LIMIT} ({LONG_PROGRAMS}): a program of {executor.fn.__name__} (one of "
                    f"{math.prod(grid)}) runs past {sink.launch.access_budget} memory instructions at the GPU shape, "
                    f"a loop over many tiles per program{claimed}; the interpreter cannot replay enough of them in "
                    "the time a replay has") from None
            except Exception as e:
                if triton.knobs.compilation.front_end_debugging:
                    raise
                raise interp.InterpreterError(repr(e)) from e
        finally:
            patch_scope.restore()
        executor._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)
    finally:
        sink.launch_end()
    launch = sink.finished
    made = producer(executor.fn.__name__, executor.fn, args, grid, chosen, launch,
                            storage_spans([*args_dev, *kwargs.values()]))
    if made is not None:
        made.since = len(sink.ledger.history)
        made.idle = idle_tail(launch.per_program, chosen, grid)[1]
        made.order = len(sink.sampled_launches)   # appended below: the order its stores carry
        for part in made.parts:
            part.tiles = class_tiles(made, part, launch.store_log, np.asarray(launch.store_program, dtype=np.int64),
                                     chosen)
        sink.producers.append(made)
    lattice = None if spread or line_axis(grid) is None else tile_lattice.infer(
        chosen, grid, launch.store_log, launch.store_program, [*args_dev, *kwargs.values()])
    sink.sampled_launches.append(SampledStores(chosen, grid, launch.store_log, launch.store_program, launch.writes,
                                               spread, lattice))
    sink.records[-1] = scale_record(sink.records[-1], launch.per_program, chosen, grid,
                                    launch.reads, launch.writes, storage_spans([*args_dev, *kwargs.values()]), spread,
                                    lattice)
    return launch.store_log


def _outside(spans: list[tuple[int, int]], touched: np.ndarray) -> int:
    """Touched sectors (sorted) that lie in none of the spans (sorted, disjoint sector intervals)."""
    inside = sum(int(np.searchsorted(touched, b) - np.searchsorted(touched, a)) for a, b in spans)
    return int(touched.size) - inside


def _footprint(spans: list[tuple[int, int]], touched: np.ndarray) -> int:
    """Sectors in the union of the spans (sector intervals) that contain a touched sector."""
    if not touched.size:
        return 0
    hit = [(a, b) for a, b in spans if b > a and np.searchsorted(touched, a) < np.searchsorted(touched, b)]
    total, end = 0, -1
    for a, b in sorted(hit):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def storage_spans(values) -> list[tuple[int, int]]:
    """Sector intervals [first, end) of the whole allocations (untyped storages) behind the tensor
    arguments of a launch (a tensor descriptor's base tensor included), sorted, overlapping ones merged
    (two storages may share a boundary sector)."""
    tensors = [v if isinstance(v, torch.Tensor) else getattr(v, "base", None) for v in values]
    spans = sorted({(t.untyped_storage().data_ptr() // SECTOR,
                     (t.untyped_storage().data_ptr() + t.untyped_storage().nbytes() - 1) // SECTOR + 1)
                    for t in tensors if isinstance(t, torch.Tensor) and t.untyped_storage().nbytes()})
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def scale_record(record: dict, per_program: list[dict], programs: list, grid: tuple[int, int, int],
                 reads: np.ndarray, writes: np.ndarray, storages: list[tuple[int, int]], spread: tuple = (),
                 lattice=None) -> dict:
    """The launch record of the whole grid from its sampled programs' counts (((x, y, z), role) per run
    program), each program weighed as in the coverage (coverage.program_weights: by its kind of grid position,
    or along a line grid between its run neighbours), so an honest tiling's masked edge tiles and a persistent
    kernel's longer first programs count as what they are, whichever programs the seed drew; a launch completed
    along its split axes (`spread`) weighs each sampled position as its whole column. DRAM traffic is capped by
    the allocations the sample touched (never by the argument views: a kernel handed x[:1] reads all of
    x through its pointer, red team a101); sectors touched outside every argument's allocation are
    counted (sample_outside_sectors) and void the estimate."""
    if len(per_program) != len(programs):
        raise RuntimeError(f"{len(per_program)} programs counted, {len(programs)} run")
    roles = [r for _, r in programs]
    total = grid[0] * grid[1] * grid[2]
    weights = program_weights(programs, grid, [int(p["write"]) for p in per_program], spread, lattice)
    idle, split = idle_tail(per_program, programs, grid)
    idle_programs = 0
    if split is not None:   # the programs before an idle part end the busy one as program G-1 ends a whole line
        axis, end = split   # (sample_trust.ENDS)
        roles = ["end" if pos[axis] == end - 1 else r for (pos, _), r in zip(programs, roles)]
        idle_programs = total - total // grid[axis] * end
    flops: dict[str, float] = {}
    for w, p in zip(weights, per_program):
        for key in sorted(p["flops"]):
            flops[key] = flops.get(key, 0.0) + w * p["flops"][key]

    def scaled(metric: str) -> float:
        return math.fsum(w * p[metric] for w, p in zip(weights, per_program))

    unique, written, outside = 0, 0, 0
    for side, seen in (("read", reads), ("write", writes)):
        outside += _outside(storages, seen)
        estimate = max(int(seen.size), min(int(round(scaled(side))), _footprint(storages, seen)))
        unique += estimate
        written = estimate if side == "write" else written
    return dict(record, programs=total, programs_idle=idle_programs, bytes_unique=unique * SECTOR, bytes_sectors=int(round(scaled("sectors"))),
                bytes_written=written * SECTOR, flops={k: flops[k] for k in sorted(flops)},
                sampled_programs=len(roles), sample_outliers=len(outliers(per_program, roles, idle)),
                sample_stray_writers=len(stray_writers(per_program, roles, storages, idle)),
                sample_outside_sectors=outside)
