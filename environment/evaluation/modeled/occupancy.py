"""Occupancy and register spills from the trusted sm_90 compile (aot.py), joined to launch records.

The evaluator compiles every launch signature the trusted replay recorded and `attach` copies the
compile's figures into the launch records (key `compiled`) before the roofline prices them; the
figures never come from the candidate's process. A launch whose kernel did not compile (or whose
signature was not compiled) gets no `compiled` entry and keeps the plain model: one program per SM
per wave, no spill traffic. Constants and their sources: gpus.yaml, `occupancy`.
"""
from __future__ import annotations

import json
import math
from typing import Iterable

from environment.evaluation.result import CompileInfo

FIELDS = ("registers", "spills", "shared_bytes", "num_warps")


def kernel_key(signature: dict) -> str:
    """A launch signature (name, argument types, constexprs, alignment, options) as one string: the
    trusted replay records it with each launch and in the report's `kernels`, which are compiled."""
    return json.dumps(signature, sort_keys=True)


def distinct(kernels: Iterable[dict]) -> list[dict]:
    """Launch signatures without repeats, first occurrence first (deterministic)."""
    seen, out = set(), []
    for sig in kernels:
        key = kernel_key(sig)
        if key not in seen:
            seen.add(key)
            out.append(sig)
    return out


def compiled_by_key(kernels: list[dict], infos: list[CompileInfo]) -> dict[str, dict]:
    """The compile's figures per signature, for those that compiled. compile_kernels answers one info
    per signature, in order; any other answer (a refused request) joins nothing."""
    if len(infos) != len(kernels):
        return {}
    return {kernel_key(sig): {f: int(getattr(info, f) or 0) for f in FIELDS} for sig, info in zip(kernels, infos)
            if info.ok and info.kernel == sig.get("name") and info.registers is not None and info.num_warps}


def infos_for(kernels: list[dict], compiled: list[dict], infos: list[CompileInfo]) -> list[CompileInfo]:
    """The compile's answers for `kernels` (the `compiled` signatures, which `infos` answers in order,
    are the first of them); an answer that is not one per signature (a refused request) is returned
    whole. A kernel left out of the compile (beyond aot.MAX_KERNELS) is a failure: it was neither
    checked for sm_90 nor priced with its registers and spills."""
    if len(infos) != len(compiled):
        return list(infos)
    by_sig = {kernel_key(sig): info for sig, info in zip(compiled, infos)}
    return [by_sig.get(kernel_key(sig)) or CompileInfo(
        kernel=str(sig.get("name", "?")), ok=False,
        error=f"not compiled: the launches use more than {len(compiled)} distinct kernel specialisations "
              "(kernel, constexprs, argument types, options); launch fewer") for sig in kernels]


def attach(records: list[dict], table: dict[str, dict]) -> None:
    """Set (or clear) each Triton record's `compiled` from the table, in place."""
    for record in records:
        record.pop("compiled", None)
        key = kernel_key(record["signature"]) if isinstance(record.get("signature"), dict) else None
        if record.get("kind") == "triton" and key in table:
            record["compiled"] = dict(table[key])


def resident_programs(compiled: dict, spec: dict) -> int:
    """Programs (thread blocks) one SM holds at once, limited by warps, blocks, registers and shared
    memory, as the CUDA occupancy calculator computes it for compute capability 9.0."""
    occ = spec["occupancy"]
    warps = max(1, compiled["num_warps"])
    limits = [occ["max_blocks_per_sm"], occ["max_warps_per_sm"] // warps]
    regs = max(1, compiled["registers"])
    unit = occ["register_alloc_unit"]
    per_warp = math.ceil(regs * spec["warp_size"] / unit) * unit
    limits.append((occ["registers_per_sm"] // per_warp) // warps)
    unit = occ["shared_alloc_unit"]
    shared = math.ceil(compiled["shared_bytes"] / unit) * unit + occ["shared_reserved_per_block"]
    limits.append(occ["shared_per_sm"] // shared)
    return max(1, min(limits))   # a kernel that compiled runs: at least one program per SM


def spill_bytes(compiled: dict, record: dict, spec: dict) -> float:
    """Local-memory traffic of one (the busiest) program's spilled registers: every thread stores and
    reloads its spilled bytes (x2) once per memory instruction the program executed, the stand-in for
    the loop trip count (a loop issues its loads every iteration; neither the compile nor the counter
    knows the trip count itself). gpus.yaml `occupancy.spill_passes_per_access` scales it."""
    threads = compiled["num_warps"] * spec["warp_size"]
    passes = max(1, record.get("program_accesses_max", 0)) * spec["occupancy"]["spill_passes_per_access"]
    return float(compiled["spills"]) * threads * 2 * passes
