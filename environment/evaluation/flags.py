"""Named flags. A HACK flag zeroes the score; a WARNING is reported and costs nothing by itself."""

# --- hacks (score 0) -------------------------------------------------------------
FORBIDDEN_IMPORT = "forbidden_import"          # threads, processes, sockets, ctypes, gc, inspect, ...
FORBIDDEN_CALL = "forbidden_call"              # exec/eval, open for write, os.system, frame access, ...
MONKEY_PATCH = "monkey_patch"                  # assigning into torch/time/triton/harness modules
TRY_EXCEPT_FALLBACK = "try_except_fallback"    # try/except around kernel launches
REFERENCE_MODEL_USE = "reference_model_use"    # subclassing or importing the reference Model
TENSOR_SUBCLASS = "tensor_subclass"            # torch.Tensor subclasses, __torch_function__/dispatch
DECOY_KERNEL = "decoy_kernel"                  # a Triton kernel defined but never launched
OUTPUT_NOT_TENSOR = "output_not_plain_tensor"  # output is a subclass / lazy object / no real storage
SANDBOX_VIOLATION = "sandbox_violation"        # the child was killed by seccomp (SIGSYS)
PROTOCOL_VIOLATION = "protocol_violation"      # a malformed or forged frame on the result channel
OUTPUT_PROVENANCE = "output_provenance"        # retired (v1 ledger); kept so old records still read as hacks
ATEN_IN_KERNEL = "aten_in_kernel"              # modeled mode: PyTorch ops executed inside a Triton program
UNTRACED_WORK = "untraced_work"                # modeled mode: the recorded work, replayed on held-out inputs, is wrong

HACKS = frozenset({
    FORBIDDEN_IMPORT, FORBIDDEN_CALL, MONKEY_PATCH, TRY_EXCEPT_FALLBACK, REFERENCE_MODEL_USE,
    TENSOR_SUBCLASS, DECOY_KERNEL, OUTPUT_NOT_TENSOR, SANDBOX_VIOLATION, PROTOCOL_VIOLATION,
    OUTPUT_PROVENANCE, ATEN_IN_KERNEL, UNTRACED_WORK,
})

# --- warnings ----------------------------------------------------------------------
INPUT_MUTATION = "input_mutation"              # the candidate wrote into its inputs (fails correctness)
NONDETERMINISTIC = "nondeterministic"          # two runs on the same inputs differ (fails correctness)
TIMEOUT = "timeout"
MEMORY_LIMIT = "memory_limit"
OUTPUT_TRUNCATED = "output_truncated"
NO_CUSTOM_KERNEL = "no_custom_kernel"          # plain PyTorch: allowed, measured or modeled like any other
IMPLAUSIBLE_SPEEDUP = "implausible_speedup"    # beyond the plausible bound: not rewarded
CROSS_PROGRAM_RACE = "cross_program_race"      # read-after-write across programs of one launch
WRITE_RACE = "write_race"                      # two programs of one launch stored different values to one element
MODELED_UNAVAILABLE = "modeled_unavailable"    # the modeled-time self-test failed; no speed credit
AUDIT_EVENT = "audit_event"                    # the audit-hook tripwire saw a blocked event
SANDBOX_DEGRADED = "sandbox_degraded"          # a requested sandbox layer could not be applied on this host
UNREPLAYABLE = "unreplayable"                  # modeled mode: the counted call cannot be replayed; no speed credit
TRACE_DATA_DEPENDENT = "trace_data_dependent"  # modeled mode: work depends on values read to the host; no credit
INVALID_COST = "invalid_cost"                  # modeled mode: a cost record failed validation; no speed credit
UNSUPPORTED_LANGUAGE = "unsupported_language"  # CUDA C++/CuTe/TileLang on a host that runs Triton and PyTorch only
SIZE_DEPENDENT = "size_dependent"              # modeled mode: at the GPU shape the sampled programs compute a wrong result

WARNINGS = frozenset({
    INPUT_MUTATION, NONDETERMINISTIC, TIMEOUT, MEMORY_LIMIT, OUTPUT_TRUNCATED, NO_CUSTOM_KERNEL,
    IMPLAUSIBLE_SPEEDUP, CROSS_PROGRAM_RACE, WRITE_RACE, MODELED_UNAVAILABLE, AUDIT_EVENT, SANDBOX_DEGRADED,
    UNREPLAYABLE, TRACE_DATA_DEPENDENT, INVALID_COST, UNSUPPORTED_LANGUAGE, SIZE_DEPENDENT,
})


# The layer of the harness that raises each flag (the README's sandbox table names the same layers).
LAYERS = {
    FORBIDDEN_IMPORT: "static", FORBIDDEN_CALL: "static", MONKEY_PATCH: "static", TENSOR_SUBCLASS: "static",
    REFERENCE_MODEL_USE: "static", TRY_EXCEPT_FALLBACK: "static", DECOY_KERNEL: "runtime-check",
    OUTPUT_NOT_TENSOR: "runtime-check", SANDBOX_VIOLATION: "seccomp", PROTOCOL_VIOLATION: "protocol",
    OUTPUT_PROVENANCE: "runtime-check", ATEN_IN_KERNEL: "replay", UNTRACED_WORK: "replay",
    INPUT_MUTATION: "runtime-check", NONDETERMINISTIC: "runtime-check", TIMEOUT: "process",
    MEMORY_LIMIT: "rlimits", OUTPUT_TRUNCATED: "rlimits", NO_CUSTOM_KERNEL: "static",
    IMPLAUSIBLE_SPEEDUP: "runtime-check", CROSS_PROGRAM_RACE: "replay", WRITE_RACE: "runtime-check",
    MODELED_UNAVAILABLE: "compile", AUDIT_EVENT: "audit", SANDBOX_DEGRADED: "process", UNREPLAYABLE: "replay",
    TRACE_DATA_DEPENDENT: "replay", INVALID_COST: "replay", UNSUPPORTED_LANGUAGE: "static", SIZE_DEPENDENT: "replay",
}


def name_of(flag: str) -> str:
    return flag.split(":", 1)[0]


def is_hack(flag: str) -> bool:
    return name_of(flag) in HACKS
