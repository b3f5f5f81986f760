"""Gates before any modeled credit. Pure: reads the trusted replay's counting report (JSON) and the
AOT compile results; every returned entry is "<flag>: <reason with the fix>" and denies modeled credit.
An empty list means the modeled speedup may be rewarded (correctness on fresh inputs is checked
by the harness, not here)."""
from __future__ import annotations

from environment.evaluation.flags import ATEN_IN_KERNEL, CROSS_PROGRAM_RACE, MODELED_UNAVAILABLE, WRITE_RACE
from environment.evaluation.result import CompileInfo


def modeled_gates(report: dict, compile_infos: list[CompileInfo] | None = None) -> list[str]:
    found: list[str] = []
    if report.get("aten_in_kernel"):
        ops = report["aten_in_kernel"]
        found.append(f"{ATEN_IN_KERNEL}: PyTorch ran inside a Triton launch ({ops[0]}"
                     f"{f' and {len(ops) - 1} more' if len(ops) > 1 else ''}); a kernel body (and its grid "
                     "function) may only use triton.language")
    for race in report.get("cross_program_raw") or []:
        found.append(f"{CROSS_PROGRAM_RACE}: in {race['kernel']}, program {race['reader_program']} reads "
                     f"{race['addresses']} addresses that program {race['writer_program']} writes in the same "
                     "launch; programs run concurrently on a GPU: use tl.atomic_* or a second launch")
    for race in (report.get("write_races") or [])[:1]:   # the sampled GPU-shape replay's (replay/sampled.py)
        found.append(f"{WRITE_RACE}: at the GPU shape, {race}")
    for info in compile_infos or []:
        if not info.ok:
            found.append(f"{MODELED_UNAVAILABLE}: kernel {info.kernel} does not compile for sm_90: {info.error}")
    return found
