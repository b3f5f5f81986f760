"""The sampled replay at the GPU shape (replay/sampled.py): which programs run, how their counts
scale to the grid, and when the sample is not trusted. Real kernels through the real Replay."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from environment.evaluation.modeled.counting import CostCounter
from environment.evaluation.replay import coverage, sampled
from environment.evaluation.replay.execute import Replay, ReplayError
from environment.evaluation.replay.rebuild import rebuild
from environment.evaluation.replay.recorder import TraceRecorder
from environment.evaluation.replay.sampled import run_sampled
from tests.environment.evaluation.modeled.modeled_helpers import GELU, load_module


def test_only_the_corners_are_public_the_estimate_and_the_checks_come_from_the_seed():
    grid = (12007, 1, 1)
    one, two = sampled.choose_programs(grid, 1), sampled.choose_programs(grid, 2)
    role = lambda chosen, r: [p for p, role in chosen if role == r]  # noqa: E731
    assert role(one, "corner") == role(two, "corner") == [(0, 0, 0), (12006, 0, 0)]
    assert role(one, "stratum") != role(two, "stratum") and role(one, "check") != role(two, "check")
    assert len(role(one, "check")) == sampled.CHECKS
    # one estimate program inside each of the STRATA equal strata (a stratified sample of the grid)
    assert [p[0] * sampled.STRATA // 12007 for p in role(one, "stratum")] == list(range(sampled.STRATA))
    public = {int((i + 0.5) * 12007 / sampled.STRATA) for i in range(sampled.STRATA)}  # the old fixed strata
    assert not public & {p[0] for p in role(one, "stratum")}
    assert sampled.choose_programs(grid, 1) == one                       # deterministic for one seed
    assert len({p for p, _ in one}) == len(one)                          # no program twice
    assert sampled.choose_programs((4, 2, 1), 1) == [((x, y, 0), "stratum") for x in range(4) for y in range(2)]
    corners = [p for p, role in sampled.choose_programs((64, 32, 2), 5) if role == "corner"]
    assert len(corners) == 8 and (63, 31, 1) in corners


def test_scaling_weighs_corners_once_and_the_interior_for_the_rest_and_caps_dram_at_the_footprint():
    roles = [((0, 0, 0), "corner"), ((1001, 0, 0), "corner"), ((1, 0, 0), "probe"), ((400, 0, 0), "stratum"),
             ((1000, 0, 0), "check")]
    per = [{"sectors": 10, "read": 4, "write": 2, "flops": {"fp32": 1.0}}] * 5
    reads = np.arange(0, 20, dtype=np.int64)
    writes = np.arange(100, 110, dtype=np.int64)
    record = {"name": "k", "kind": "triton", "programs": 5, "bytes_unique": 0, "bytes_sectors": 0, "flops": {}}
    big = sampled.scale_record(record, per, roles, (1002, 1, 1), reads, writes, [(0, 10**6), (10**6, 2 * 10**6)])
    # 2 corners at weight 1, the interior programs of the line shared by the run ones between them
    assert big["programs"] == 1002 and big["flops"] == {"fp32": 1002.0} and big["bytes_sectors"] == 10020
    assert big["bytes_unique"] == (4 * 1002 + 2 * 1002) * 32 and big["bytes_written"] == 2 * 1002 * 32
    capped = sampled.scale_record(record, per, roles, (1002, 1, 1), reads, writes, [(0, 50), (100, 120)])
    assert capped["bytes_unique"] == (50 + 20) * 32         # re-reads are DRAM traffic once
    untouched = sampled.scale_record(record, per, roles, (1002, 1, 1), reads, writes, [(0, 50), (5000, 6000)])
    assert untouched["bytes_unique"] == (50 + 10) * 32      # a span nobody touched is not traffic; the sample is a floor
    # the writes lie in no argument's allocation: counted, and the judge voids the estimate for them
    assert big["sample_outside_sectors"] == capped["sample_outside_sectors"] == 0
    assert untouched["sample_outside_sectors"] == 10


def test_the_footprint_cap_is_the_whole_allocation_behind_an_argument_view_not_the_view():
    x = torch.zeros(1024, 64)                 # 256 KiB: 8192 sectors
    [(first, end)] = sampled.storage_spans([x[:1], x[5:7]])  # a one-row view (red team a101) and another
    assert end - first == x.numel() * 4 // 32
    roles = [((0, 0, 0), "corner"), ((1023, 0, 0), "corner"), ((1, 0, 0), "probe"), ((500, 0, 0), "stratum"),
             ((1022, 0, 0), "check")]
    per = [{"sectors": 8, "read": 8, "write": 0, "flops": {}}] * 5
    seen = np.arange(first, first + 40, dtype=np.int64)  # the sample read 40 sectors of x, rows beyond x[:1]
    record = {"name": "k", "kind": "triton", "programs": 5, "bytes_unique": 0, "bytes_sectors": 0, "flops": {}}
    est = sampled.scale_record(record, per, roles, (1024, 1, 1), seen, np.arange(0, dtype=np.int64), [(first, end)])
    assert est["bytes_unique"] == 8 * 1024 * 32 and est["sample_outside_sectors"] == 0   # every read charged


def test_a_check_program_outside_the_estimates_range_is_an_outlier_but_alignment_jitter_is_not():
    base = {"sectors": 100, "read": 64, "write": 32, "flops": {"fp32": 1024.0}}
    roles = ["corner", "stratum", "stratum", "check", "check"]
    jitter = dict(base, sectors=101, read=65)
    heavy = dict(base, sectors=400, read=256)
    assert sampled.outliers([base, base, base, jitter, base], roles) == []
    assert sampled.outliers([base, base, base, jitter, heavy], roles) == [4]


def test_homogeneity_is_two_sided_with_the_corners_in_both_ranges():
    base = {"sectors": 100, "read": 64, "write": 32, "flops": {"fp32": 1024.0}}
    skipped = dict(base, sectors=32, read=0)     # an estimate program that skips its block (red team a96)
    roles = ["corner", "stratum", "stratum", "check", "check"]
    # a cheap estimate program lies below every check and corner: flagged (one-sided, only checks were judged)
    assert sampled.outliers([base, skipped, base, base, base], roles) == [1]
    heavy = dict(base, sectors=400, read=256)
    assert sampled.outliers([base, base, base, heavy, base], roles) == [3]
    # work growing with the program index (causal attention): the corners are the lightest and heaviest
    rows = [dict(base, sectors=100 * k, read=64 * k) for k in (1, 9, 3, 7, 4, 6)]
    assert sampled.outliers(rows, ["corner", "corner", "stratum", "stratum", "check", "check"]) == []
    # an empty corner (an over-provisioned grid's masked tail) does not open the lower bound (red team a106)
    empty = {"sectors": 0, "read": 0, "write": 0, "flops": {}}
    assert sampled.outliers([empty, base, base, base, skipped], roles) == [4]


def _trace_at(module, x, bias):
    with torch.no_grad(), TraceRecorder([x, bias]) as recorder:
        out = module.ModelNew()(x, bias)
    return recorder.finish([out])


def _full_and_sampled_gelu(seed: int = 11):
    """The shipped gelu_bias kernel at 301 x 700 (a line grid of 206 programs) replayed whole and sampled from seed:
    (full record, its outputs), (sampled record, its replay)."""
    source = (GELU / "solutions" / "correct" / "triton_fused.py").read_text()
    module = load_module(GELU / "solutions" / "correct" / "triton_fused.py")
    rebuilt = rebuild(source)
    kernels = load_module_from_source(rebuilt.source)
    torch.manual_seed(0)
    x, bias = torch.randn(301, 700), torch.randn(700)
    trace, constants = _trace_at(module, x, bias)
    results = []
    for sample_seed in (None, seed):
        counter = CostCounter(lifts_are_copies=True, sample_seed=sample_seed,
                              sampler=None if sample_seed is None else run_sampled)
        replay = Replay(trace, [x, bias], constants, kernels, rebuilt.kernels, counter)
        with torch.no_grad(), counter:
            outputs = replay.run()
        results.append((counter.launch_records()[-1], replay, outputs, counter))
    return x, bias, results


def test_a_sampled_replay_of_the_shipped_kernel_scales_to_the_full_replays_counts_and_checks_what_it_wrote(
        sampled_line_grids):   # sampled, not run whole as a line grid this small and cheap is (conftest.py)
    x, bias, results = _full_and_sampled_gelu()
    (full, _, full_out, _), (est, replay, _, counter) = results
    # 14 sampled programs and the two ends of the line's interior (programs 1 and 204)
    assert full["programs"] == est["programs"] == 206 and est["sampled_programs"] == 16
    assert est["bytes_unique"] == full["bytes_unique"]          # every program's own sectors, once
    assert abs(est["bytes_sectors"] - full["bytes_sectors"]) <= 0.02 * full["bytes_sectors"]
    assert est["flops"] == full["flops"] and est["sample_outliers"] == 0
    index, values = replay.checked_outputs()
    assert counter.output_coverage == [1.0]   # the corners once, each stratum's block for its share: the output
    assert index.numel() == 16 * 1024 - (206 * 1024 - x.numel())   # what the 16 programs stored (the tail is masked)
    expected = torch.nn.functional.gelu(x + bias).flatten()[index]
    assert torch.allclose(values, expected, atol=1e-5, rtol=1e-5)
    assert torch.allclose(full_out[0], torch.nn.functional.gelu(x + bias), atol=1e-5, rtol=1e-5)


def test_a_small_cheap_line_grid_is_run_whole_and_counted_as_the_full_replay_whatever_the_seed():
    # 206 programs of 3 memory instructions: within EXACT_LINE and EXACT_ACCESSES (line_grid.rest_of_line)
    for seed in (11, 12):
        x, bias, results = _full_and_sampled_gelu(seed)
        (full, _, _, _), (est, replay, _, counter) = results
        assert est["sampled_programs"] == 206 and est["sample_outliers"] == 0
        assert {k: est[k] for k in ("programs", "bytes_unique", "bytes_sectors", "flops")} == \
            {k: full[k] for k in ("programs", "bytes_unique", "bytes_sectors", "flops")}
        index, values = replay.checked_outputs()
        assert counter.output_coverage == [1.0]
        assert index.numel() == coverage.MAX_CHECKED < x.numel()   # every element stored: a draw of them compared
        assert torch.allclose(values, torch.nn.functional.gelu(x + bias).flatten()[index], atol=1e-5, rtol=1e-5)


def load_module_from_source(source: str):
    import importlib.util
    import tempfile
    from pathlib import Path
    path = Path(tempfile.mkdtemp()) / "kernels_sampled_test.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_interior_program_that_stores_into_another_tensor_than_its_neighbours_is_a_stray_writer():
    out, junk = (100, 200), (200, 300)   # sector intervals of two allocations
    honest = {"written": np.arange(110, 114, dtype=np.int64)}
    scratch = {"written": np.arange(210, 214, dtype=np.int64)}      # its output block left unwritten
    roles = ["corner", "stratum", "stratum", "check", "check"]
    assert sampled.stray_writers([honest, honest, honest, honest, honest], roles, [out, junk]) == []
    assert sampled.stray_writers([scratch, honest, scratch, honest, honest], roles, [out, junk]) == [2]
    assert sampled.stray_writers([honest] * 4, ["stratum"] * 4, [out, junk]) == []   # a whole small grid


def test_a_tensor_descriptors_base_counts_as_an_argument_allocation():
    from triton.tools.tensor_descriptor import TensorDescriptor
    x = torch.zeros(64, 64)
    descriptor = TensorDescriptor.from_tensor(x, [16, 16])
    assert sampled.storage_spans([descriptor, 3]) == sampled.storage_spans([x])


def test_an_atomic_launch_completes_each_sampled_position_along_its_short_axes_and_weighs_them_nothing():
    chosen = sampled.choose_programs((100, 4, 1), 3)
    extra = sampled.completion((100, 4, 1), chosen)
    run = {p for p, _ in chosen} | {p for p, _ in extra}
    assert len(run) == len(chosen) + len(extra) and all(r == "complete" for _, r in extra)
    assert run == {(x, y, 0) for (x, _, _), _ in chosen for y in range(4)}   # every split of each sampled block
    # the shortest axes first, while their extents multiply to at most COMPLETE: z (4) here, not y (32) too
    wide = sampled.completion((100, 32, 4), [((5, 7, 0), "stratum")])
    assert sorted(p for p, _ in wide) == [(5, 7, z) for z in (1, 2, 3)]
    assert sampled.completion((100, 1, 1), chosen) == []                     # a long line has no split axis
    # a completing program stands for nothing; on a grid over several axes each class is shared by its samples
    assert coverage.program_weights([((0, 0, 0), "corner"), ((5, 1, 0), "stratum"), ((5, 2, 0), "complete")],
                                    (10, 4, 1), [1, 1, 1])[2] == 0.0
    # completed along a split axis, a sampled program's weight is its whole column's: which split does the work
    # is then no matter (red team a180: one interior split per tile did it all, the light ones were sampled)
    column = [((5, 1, 0), "stratum"), ((5, 0, 0), "complete"), ((5, 2, 0), "complete"), ((5, 3, 0), "complete")]
    plain = coverage.program_weights(column, (10, 4, 1), [1] * 4)
    spread = coverage.program_weights(column, (10, 4, 1), [1] * 4, (1,))
    assert plain[1:] == [0.0] * 3 and spread == [pytest.approx(plain[0] / 4)] * 4


SPLIT_K = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fc2_split_kernel(h_ptr, w_ptr, b_ptr, out_ptr, M, N, K, stride_hm, stride_wn, stride_om, K_PER_SPLIT,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    split = tl.program_id(2)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(split * K_PER_SPLIT, split * K_PER_SPLIT + K_PER_SPLIT, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(h_ptr + offs_m[:, None] * stride_hm + k[None, :],
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(w_ptr + k[:, None] + offs_n[None, :] * stride_wn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    if split == 0:
        acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    tl.atomic_add(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :], acc,
                  mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, h):
        M, HID = h.shape
        D = self.fc2.weight.shape[0]
        out = torch.zeros((M, D), dtype=h.dtype, device=h.device)
        grid = (triton.cdiv(M, 64), triton.cdiv(D, 64), triton.cdiv(HID, 32))
        fc2_split_kernel[grid](h, self.fc2.weight, self.fc2.bias, out, M, D, HID, h.stride(0),
                               self.fc2.weight.stride(0), out.stride(0), 32, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
        return out
'''


def test_a_split_k_launch_is_completed_along_its_split_axis_however_long_and_its_sums_compared_whole():
    # 64 splits (grid (4, 2, 64)): the split axis is longer than COMPLETE, so completing the short axes left partial
    # sums where the sample ran (size_dependent for an honest kernel); the axis whose neighbour adds into the same
    # elements is completed instead, the neighbours run to find it included
    module, rebuilt = load_module_from_source(SPLIT_K), rebuild(SPLIT_K)
    kernels = load_module_from_source(rebuilt.source)
    torch.manual_seed(0)
    model = module.ModelNew(128, 2048)
    h = torch.randn(256, 2048)
    with torch.no_grad(), TraceRecorder([h]) as recorder:
        out = model(h)
    trace, constants = recorder.finish([out])
    counter = CostCounter(lifts_are_copies=True, sample_seed=5, sampler=run_sampled)
    replay = Replay(trace, [h], constants, kernels, rebuilt.kernels, counter)
    with torch.no_grad(), counter:
        replay.run(keep=False)
    index, values = replay.checked_outputs()
    assert counter.output_coverage == [pytest.approx(1.0, abs=1e-12)]
    with torch.no_grad():
        expected = model.fc2(h).flatten()[index]
    assert index.numel() > 0 and torch.allclose(values, expected, atol=1e-4, rtol=1e-4)
    [launch] = counter.sampled_launches
    split = [p for p, r in launch.programs if r == "complete"]
    assert {p[2] for p in split} == set(range(64))                           # whole sums along the split axis
    assert counter.launch_records()[-1]["sample_outliers"] == 0


def test_a_counter_given_a_seed_without_the_sampler_or_the_reverse_is_refused_with_the_cause():
    # modeled/ imports nothing from replay/: whoever makes a sampling counter hands it replay/sampled.py's sampler,
    # and one without it would silently count every program at the GPU shape
    for kwargs in ({"sample_seed": 3}, {"sampler": run_sampled}):
        with pytest.raises(ValueError, match="needs both sample_seed and sampler"):
            CostCounter(lifts_are_copies=True, **kwargs)
    assert CostCounter(sample_seed=3, sampler=run_sampled).sampler is run_sampled


TICKETS = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def take_ticket(cnt_ptr, out_ptr, T: tl.constexpr):
    pid = tl.program_id(0)
    ticket = tl.atomic_add(cnt_ptr, 1)
    tl.store(out_ptr + pid, (ticket < T).to(tl.int32))


class ModelNew(nn.Module):
    def forward(self, x):
        cnt = torch.zeros(1, dtype=torch.int32, device=x.device)
        out = torch.empty(x.shape[0], dtype=torch.int32, device=x.device)
        take_ticket[(x.shape[0],)](cnt, out, T=16)
        return out
'''


def test_an_atomic_launch_completed_whole_runs_every_program_in_the_secrets_order():
    # the sample ran first, so the first tickets of a counter went to the sampled programs: a launch marked them and
    # a later launch redid only the compared rows (red team a257). Completed whole, the launch runs again from the
    # start in an order drawn from the secret: the first tickets go to programs the draw does not name
    module, rebuilt = load_module_from_source(TICKETS), rebuild(TICKETS)
    kernels = load_module_from_source(rebuilt.source)
    x = torch.zeros(600)
    with torch.no_grad(), TraceRecorder([x]) as recorder:
        out = module.ModelNew()(x)
    trace, constants = recorder.finish([out])
    for seed in (5, 6):
        counter = CostCounter(lifts_are_copies=True, sample_seed=seed, sampler=run_sampled)
        replay = Replay(trace, [x], constants, kernels, rebuilt.kernels, counter)
        with torch.no_grad(), counter:
            [marks] = replay.run()
        [launch] = counter.sampled_launches
        assert sorted(p for p, _ in launch.programs) == [(k, 0, 0) for k in range(600)]   # run whole, once each
        marked = {k for k in range(600) if marks[k]}
        assert marked == {p[0] for p, _ in launch.programs[:16]}                         # the run order's first 16
        drawn = sampled.choose_programs((600, 1, 1), seed)
        assert len(marked & {p[0] for p, _ in drawn}) < len(drawn) // 2, seed             # not the drawn programs
        assert counter.write_races == [] and counter.launch_records()[-1]["programs"] == 600


# the counter read back with a plain load after an add whose value goes unused: the same ticket
TICKET_LOADED = TICKETS.replace("    ticket = tl.atomic_add(cnt_ptr, 1)\n",
                                "    tl.atomic_add(cnt_ptr, 1)\n    ticket = tl.load(cnt_ptr, volatile=True)\n")


@pytest.mark.parametrize("source", [TICKETS, TICKET_LOADED], ids=["returned", "loaded"])
def test_a_launch_using_an_atomics_value_past_the_complete_grid_is_the_models_limit(source):
    # helper-71: a row computed only under a ticket below 256 was right in every sampled row (the sample, run first,
    # took the first tickets) and wrong in 7936 of 8192 on a GPU. Past the grid the replay runs whole, which program
    # gets which ticket is the GPU's order, which a sample cannot stand for: the model's limit, named
    assert source.count("atomic_add") == 1
    module, rebuilt = load_module_from_source(source), rebuild(source)
    kernels = load_module_from_source(rebuilt.source)
    x = torch.zeros(sampled.COMPLETE_PROGRAMS + 1)
    with torch.no_grad(), TraceRecorder([x]) as recorder:
        out = module.ModelNew()(x)
    trace, constants = recorder.finish([out])
    counter = CostCounter(lifts_are_copies=True, sample_seed=5, sampler=run_sampled)
    replay = Replay(trace, [x], constants, kernels, rebuilt.kernels, counter)
    with pytest.raises(ReplayError, match=r"a limit of the model, not a fault of the kernel \(order-dependent "
                                          r"values\): what programs of take_ticket read"):
        with torch.no_grad(), counter:
            replay.run()


def test_only_an_atomic_whose_value_is_used_makes_its_launch_order_dependent():
    from environment.evaluation.replay.tickets import values_used
    bare = TICKETS.replace("    ticket = tl.atomic_add(cnt_ptr, 1)\n    tl.store(out_ptr + pid, (ticket < T).to(tl.int32))",
                           "    tl.atomic_add(cnt_ptr, 1)\n    tl.store(out_ptr + pid, 1)")
    helper = TICKETS.replace("@triton.jit\ndef take_ticket", "@triton.jit\ndef ticket_of(p):\n    return tl.atomic_add(p, 1)"
                             "\n\n\n@triton.jit\ndef take_ticket").replace("ticket = tl.atomic_add(cnt_ptr, 1)",
                                                                            "ticket = ticket_of(cnt_ptr)")
    assert bare != TICKETS and "ticket_of(cnt_ptr)" in helper
    got = [values_used(load_module_from_source(rebuild(s).source).take_ticket) for s in (TICKETS, bare, helper)]
    assert got == [True, False, True]
