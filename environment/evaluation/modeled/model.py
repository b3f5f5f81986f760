"""Roofline time of counted launches on a target GPU. Pure and deterministic: no clocks, no I/O
beyond reading the spec, keys summed in sorted order so the same counts give bit-identical times."""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from environment.evaluation.modeled.occupancy import resident_programs, spill_bytes
from environment.evaluation.modeled.precision import charged_precision, tf32_admitted
from environment.evaluation.result import LaunchCost, ModeledCost

SPEC_PATH = Path(__file__).with_name("gpus.yaml")


@lru_cache(maxsize=8)
def _read(path: str) -> dict:
    with open(path) as f:
        return yaml.safe_load(f)


def load_spec(name: str | None = None, path: str | Path = SPEC_PATH) -> dict[str, Any]:
    """The named GPU from gpus.yaml (its default when None), with `key`, `version` and
    `speedup_range` copied in so one dict carries everything the model needs."""
    data = _read(str(path))
    key = name or data["default"]
    if key not in data["gpus"]:
        raise KeyError(f"unknown target GPU {key!r}; gpus.yaml defines {sorted(data['gpus'])}")
    spec = dict(data["gpus"][key])
    spec.update(key=key, version=data["version"], speedup_range=tuple(data["speedup_range"]))
    return spec


def _compute_s(flops: dict[str, float], spec: dict, tf32_ok: bool, share: float = 1.0) -> float:
    total = 0.0
    for key in sorted(flops):
        peak = spec["peak"][charged_precision(key, tf32_ok)] * share
        total += float(flops[key]) / peak
    return total


def launch_cost(record: dict, spec: dict, tf32_ok: bool) -> LaunchCost:
    """max(dram, l2, compute, occupancy) + launch overhead, for one counted launch.

    dram: unique bytes (each sector the launch touches, once) / HBM bandwidth.
    l2: per-instruction sector bytes / L2 bandwidth: every load or store instruction moves the
    sectors its elements fall in, so strided (uncoalesced) access and data re-read by many programs
    cost here even when DRAM sees them once.
    compute: FLOPs / the peak of their precision (tensor-core rates for `tl.dot`, CUDA-core rates for
    elementwise work and reductions).
    occupancy (Triton launches only): waves of programs over the SMs times the time of one wave on the
    busiest SM, so one giant program (or a grid smaller than the SM count) is not free. With the sm_90
    compile's figures (record["compiled"], set by occupancy.attach in the evaluator) an SM holds
    `resident` programs at once (registers, shared memory, warps and blocks per SM): waves =
    ceil(busy programs / (SMs x resident)), where an over-launched grid's idle part (record["programs_idle"]: the
    programs past its last tile, `if pid_m >= row_blocks: return`, which the sample proved store nothing) is no
    busy program: a CTA that returns at once frees its slot as soon as it is dispatched, a cost no sourced sm_90
    figure prices, so the model leaves it out (its limit, stated); the r programs of a wave on one SM share its
    compute and its memory pipe, whose rate grows with resident warps up to `latency_hiding_warps` (latency hiding).
    Spilled registers are local-memory traffic through L2: charged to the l2 term (every busy program) and
    to the wave (at the SM's share of L2 bandwidth). Without the figures (aten ops, a kernel that did
    not compile): one program per SM per wave at the full SM rate, no spills.
    The roofline time is max(dram, compute): what the work needs at best; its share of the modeled
    time is the launch's fraction of peak.
    """
    compiled = record.get("compiled")
    programs = record.get("programs")
    spill = spill_bytes(compiled, record, spec) if programs and compiled else 0.0
    busy = (programs or 0) - record.get("programs_idle", 0)  # an idle part's programs return at once: no spill,
    dram = record["bytes_unique"] / spec["hbm_bytes_per_s"]   # no wave's slot
    l2 = (record["bytes_sectors"] + spill * busy) / spec["l2_bytes_per_s"]
    compute = _compute_s(record.get("flops", {}), spec, tf32_ok)
    occupancy, resident = 0.0, None
    if programs:
        sms = spec["sm_count"]
        resident = resident_programs(compiled, spec) if compiled else 1
        waves = math.ceil(busy / (sms * resident))
        here = min(resident, math.ceil(busy / sms))   # programs on the busiest SM in one wave
        sm_rate = spec["sm_bytes_per_s"]
        if compiled:
            sm_rate *= min(1.0, here * compiled["num_warps"] / spec["occupancy"]["latency_hiding_warps"])
        per_wave = here * max(record.get("program_bytes_max", 0) / sm_rate,
                              _compute_s(record.get("program_flops_max", {}), spec, tf32_ok, 1.0 / sms),
                              spill / (spec["l2_bytes_per_s"] / sms))
        occupancy = waves * per_wave
        resident = resident if compiled else None
    terms = {"memory": dram, "l2": l2, "compute": compute, "occupancy": occupancy}
    bound = max(terms, key=lambda k: terms[k])  # ties resolve in dict order: deterministic
    overhead = spec["launch_overhead_us"] * 1e-6
    if overhead >= terms[bound]:
        bound = "launch"
    time_s = max(terms.values()) + overhead
    roofline = max(dram, compute)
    return LaunchCost(
        name=record["name"], programs=int(programs or 1), bytes_unique=int(record["bytes_unique"]),
        bytes_sectors=int(record["bytes_sectors"]), flops={k: float(v) for k, v in sorted(record.get("flops", {}).items())},
        time_us=time_s * 1e6, bound=bound, roofline_us=roofline * 1e6, peak_fraction=roofline / time_s,
        sampled_programs=record.get("sampled_programs"), idle_programs=int(record.get("programs_idle", 0)),
        resident_programs=resident,
        spill_bytes=int(spill * busy),
    )


def model_cost(records: list[dict], spec: dict, tolerance: dict | None = None,
               shape: dict[str, int] | None = None) -> ModeledCost:
    """Modeled time of a forward call: launches run back to back (no overlap between kernels).

    `tolerance` ({atol, rtol} of the task) decides whether fp32 matmuls are charged as TF32;
    pass the same tolerance for the reference and the candidate. `shape`: the size counted at."""
    tf32_ok = tf32_admitted(tolerance)
    launches = [launch_cost(r, spec, tf32_ok) for r in records]
    time_us = math.fsum(l.time_us for l in launches)
    return ModeledCost(target=f"{spec['name']} (gpus.yaml v{spec['version']})", time_us=time_us, launches=launches,
                       shape=dict(shape or {}),
                       peak_fraction=math.fsum(l.roofline_us for l in launches) / time_us if time_us > 0 else 0.0)


def modeled_speedup(reference: ModeledCost, candidate: ModeledCost, spec: dict) -> float | None:
    """Reference time / candidate time, clamped to the spec's `speedup_range`; None (no credit, never
    the cap) when either time is not a positive finite number."""
    low, high = spec["speedup_range"]
    if not all(math.isfinite(t) and t > 0 for t in (reference.time_us, candidate.time_us)):
        return None
    return min(high, max(low, reference.time_us / candidate.time_us))
