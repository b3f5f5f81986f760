"""Occupancy and spills from the sm_90 compile's figures (occupancy.py, model.launch_cost): programs
resident per SM as the CUDA occupancy calculator gives them for cc 9.0, spill traffic, and the join of
compile results to launch records (a launch without them keeps the one-program-per-SM model)."""
import pytest

from environment.evaluation.modeled import occupancy as occ
from environment.evaluation.modeled.model import launch_cost, load_spec
from environment.evaluation.result import CompileInfo

SPEC = load_spec()
SIG = {"name": "k", "signature": {"x_ptr": "*fp32", "BLOCK": "constexpr"}, "constexprs": {"BLOCK": 1024},
       "aligned": ["x_ptr"], "options": {}}


def _compiled(registers, num_warps=4, shared_bytes=0, spills=0):
    return {"registers": registers, "num_warps": num_warps, "shared_bytes": shared_bytes, "spills": spills}


@pytest.mark.parametrize("registers,warps,shared,resident", [
    (31, 4, 0, 16),          # the 64-warp limit: 16 programs of 4 warps
    (32, 1, 0, 32),          # the 32-block limit
    (64, 8, 0, 4),           # 2048 registers per warp: 32 warps of the 64K, 4 programs of 8
    (189, 4, 0, 2),          # 6144 per warp (rounded to 256): 10 warps, 2 programs of 4
    (255, 8, 0, 1),          # 8192 per warp: 8 warps, one program of 8
    (32, 4, 98304, 2),       # shared memory: 2 x (96 KiB + 1 KiB reserved) of 228 KiB
    (255, 4, 180480, 1),     # flash attention at D=128: shared memory and registers both bind
])
def test_resident_programs_follow_the_cc90_occupancy_calculator(registers, warps, shared, resident):
    assert occ.resident_programs(_compiled(registers, warps, shared), SPEC) == resident


def _record(programs, **extra):
    return {"name": "k", "kind": "triton", "programs": programs, "bytes_unique": 1 << 20, "bytes_sectors": 1 << 20,
            "flops": {"fp32": 1e6}, "program_bytes_max": 1 << 16, "program_flops_max": {"fp32": 1e5},
            "program_accesses_max": 3, "signature": SIG, **extra}


def test_without_compile_figures_the_launch_keeps_one_program_per_sm():
    plain = launch_cost(_record(1000), SPEC, False)
    waves = -(-1000 // SPEC["sm_count"])
    per_program = max((1 << 16) / SPEC["sm_bytes_per_s"], 1e5 / (SPEC["peak"]["fp32"] / SPEC["sm_count"]))
    assert plain.resident_programs is None and plain.spill_bytes == 0
    assert plain.time_us == pytest.approx(max(waves * per_program, (1 << 20) / SPEC["l2_bytes_per_s"]) * 1e6
                                          + SPEC["launch_overhead_us"])


def test_resident_programs_shorten_the_waves_and_few_warps_hide_less_latency():
    plain = launch_cost(_record(1000), SPEC, False)
    full = launch_cost(_record(1000, compiled=_compiled(31)), SPEC, False)
    assert full.resident_programs == 16 and full.time_us <= plain.time_us
    lonely = launch_cost(_record(8, compiled=_compiled(31, num_warps=1)), SPEC, False)  # 8 one-warp programs
    assert lonely.time_us > launch_cost(_record(8), SPEC, False).time_us


def test_an_idle_part_takes_no_wave_slot_and_spills_nothing():
    # programs past an over-launched grid's last tile return at once (the sample proved they store nothing): priced
    # as the busy programs alone, where counting them filled 2x the waves and spilled for them
    compiled = _compiled(255, spills=288)
    busy = launch_cost(_record(1000, compiled=compiled), SPEC, False)
    rounded = launch_cost(_record(2048, compiled=compiled, programs_idle=1048), SPEC, False)
    assert rounded.time_us == busy.time_us and rounded.spill_bytes == busy.spill_bytes
    assert rounded.programs == 2048 and rounded.idle_programs == 1048
    assert launch_cost(_record(2048, compiled=compiled), SPEC, False).time_us > busy.time_us


def test_spilled_bytes_are_stored_and_reloaded_per_memory_instruction_at_the_l2_rate():
    cost = launch_cost(_record(1000, compiled=_compiled(255, spills=288)), SPEC, False)
    assert cost.spill_bytes == 288 * 128 * 2 * 3 * 1000
    no_spill = launch_cost(_record(1000, compiled=_compiled(255)), SPEC, False)
    assert cost.time_us > no_spill.time_us and cost.peak_fraction < no_spill.peak_fraction
    assert cost.bound in ("l2", "occupancy")


def test_compile_results_join_only_their_own_signature_and_a_failed_compile_joins_nothing():
    other = dict(SIG, aligned=[])   # the same kernel and constexprs, another specialisation
    infos = [CompileInfo(kernel="k", ok=True, registers=40, spills=0, shared_bytes=0, num_warps=4),
             CompileInfo(kernel="k", ok=False, error="does not compile")]
    table = occ.compiled_by_key([SIG, other], infos)
    records = [_record(10), _record(10, signature=other), _record(10, compiled=_compiled(1)) | {"signature": {}},
               {"name": "aten.add", "kind": "aten", "bytes_unique": 0, "bytes_sectors": 0}]
    occ.attach(records, table)
    assert records[0]["compiled"]["registers"] == 40
    assert "compiled" not in records[1] and "compiled" not in records[2] and "compiled" not in records[3]
    assert occ.compiled_by_key([SIG, other], infos[:1]) == {}   # not one answer per signature: no join
    assert occ.infos_for([other], [SIG, other], infos) == infos[1:]
    beyond = dict(SIG, constexprs={"BLOCK": 2048})   # a signature the capped compile left out
    [left_out] = occ.infos_for([beyond], [SIG, other], infos)
    assert not left_out.ok and "distinct kernel specialisations" in left_out.error   # denies credit (gates)
    assert occ.infos_for([SIG], [SIG, other], infos[:1]) == infos[:1]
    assert occ.distinct([SIG, dict(SIG), other]) == [SIG, other]


def _busiest_program_time(programs: list[dict[str, float]]) -> float:
    """The modeled time of a one-wave launch whose programs did `programs` (FLOPs per precision each): the
    occupancy term (its busiest program on one SM) decides it."""
    from environment.evaluation.modeled.triton_launch import TritonLaunch
    launch = TritonLaunch("k", {"constexprs": {}, "options": {}})
    for flops in programs:
        launch.program()
        for key, count in flops.items():
            launch.op(key, count)
    record, _, _ = launch.finish()
    return launch_cost(dict(record, bytes_unique=32, bytes_sectors=32), SPEC, False).time_us


def test_cheap_dots_in_one_program_do_not_hide_the_busiest_program():
    # red team a114: int8 dots (the cheapest per counted FLOP) in one program made it "the busiest" by raw
    # FLOP sum, so the heaviest fp32 program was never priced; the occupancy term must see the fp32 program
    heavy = {"dot_fp32": 4e8}
    alone = _busiest_program_time([heavy, {"dot_fp32": 1e6}])
    padded = _busiest_program_time([heavy, {"dot_fp32": 1e6, "dot_int8": 8e8}])
    assert padded >= alone > 0, (padded, alone)
