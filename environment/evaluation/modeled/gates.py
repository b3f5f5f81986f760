"""Gates before any modeled credit. Pure: reads the child's counting report (JSON) and the AOT
compile results; every returned entry is "<flag>: <reason with the fix>" and denies modeled credit.
An empty list means the modeled speedup may be rewarded (correctness on fresh inputs is checked
by the harness, not here)."""
from __future__ import annotations

from environment.evaluation.flags import (ATEN_IN_KERNEL, CROSS_PROGRAM_RACE, MODELED_UNAVAILABLE,
                                          OUTPUT_PROVENANCE)
from environment.evaluation.result import CompileInfo


def modeled_gates(report: dict, compile_infos: list[CompileInfo] | None = None) -> list[str]:
    found: list[str] = []
    if not report.get("launches"):
        found.append(f"{OUTPUT_PROVENANCE}: no counted launch produced the output; compute it with a "
                     "Triton kernel or PyTorch ops inside forward")
    elif report.get("provenance", 0.0) < 1.0:
        missing = report.get("output_bytes", 0) - report.get("output_bytes_counted", 0)
        tainted = report.get("tainted_launches") or []
        cause = (f"launches {', '.join(tainted[:3])} read data produced on the host" if tainted
                 else "they were written outside any counted launch (host numpy, .numpy() views, or memoized)")
        found.append(f"{OUTPUT_PROVENANCE}: {missing} of {report.get('output_bytes', 0)} output bytes do not come "
                     f"from a counted launch on the inputs: {cause}; write every output element in a kernel")
    if report.get("aten_in_kernel"):
        ops = report["aten_in_kernel"]
        found.append(f"{ATEN_IN_KERNEL}: PyTorch ran inside a Triton launch ({ops[0]}"
                     f"{f' and {len(ops) - 1} more' if len(ops) > 1 else ''}); a kernel body (and its grid "
                     "function) may only use triton.language")
    for race in report.get("cross_program_raw") or []:
        found.append(f"{CROSS_PROGRAM_RACE}: in {race['kernel']}, program {race['reader_program']} reads "
                     f"{race['addresses']} addresses that program {race['writer_program']} writes in the same "
                     "launch; programs run concurrently on a GPU: use tl.atomic_* or a second launch")
    for info in compile_infos or []:
        if not info.ok:
            found.append(f"{MODELED_UNAVAILABLE}: kernel {info.kernel} does not compile for sm_90: {info.error}")
    return found
