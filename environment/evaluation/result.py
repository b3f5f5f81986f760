"""The one typed evaluation record, nested by pipeline stage.

A stage that was not reached is ``None``. The same record is logged, rendered in the
playground, carried in the observation (``KernelObservation.evaluation``) and exported.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, computed_field, model_validator

SpeedupKind = Literal["measured_cuda", "measured_cpu", "modeled"]
# One label per kind, used wherever a speedup is shown (observation timings, feedback, playground).
SPEEDUP_LABELS: dict[str, str] = {
    "modeled": "modeled H100 roofline estimate, not measured",
    "measured_cpu": "measured on this host's CPU (wall clock of the trusted evaluator)",
    "measured_cuda": "measured with CUDA events, L2 flushed",
}
# ok: the harness reached a verdict on code that loaded (right or wrong); submission_failed: the
# code did not pass the static checks or did not load; harness_error: the environment failed.
Outcome = Literal["ok", "submission_failed", "harness_error"]


def _finite_or_name(value: float) -> float | str:
    """NaN and infinities become "NaN"/"Infinity"/"-Infinity": valid JSON for every client, and
    pydantic reads them back as floats."""
    if math.isfinite(value):
        return value
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


# A float that may be NaN or infinite (a mismatching candidate's values) and still round-trips.
AnyFloat = Annotated[float, PlainSerializer(_finite_or_name)]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StaticResult(_Record):
    ok: bool = Field(description="True when the source parsed and no forbidden construct was found.")
    errors: list[str] = Field(default_factory=list, description="What is wrong, each with the fix.")
    flags: list[str] = Field(default_factory=list, description="Named flags of forbidden constructs found.")
    triton_kernels: list[str] = Field(default_factory=list, description="Names of @triton.jit functions defined.")
    uses_triton: bool = Field(False, description="The source defines at least one Triton kernel.")
    line: Optional[int] = Field(None, ge=1, description="The submission line (1-based) the first error points at; "
                                                       "None when no error is tied to a line.")
    flag_lines: dict[str, int] = Field(default_factory=dict, description="The first submission line of each flag's "
                                                                         "construct.")


class LoadResult(_Record):
    ok: bool = Field(description="ModelNew imported, was constructed and ran once.")
    error: Optional[str] = Field(None, description="Exception or failure text when not ok.")
    exit_reason: Optional[str] = Field(None, description="How the child ended when it died: timeout, signal, exit code.")
    line: Optional[int] = Field(None, ge=1, description="The submission line where loading raised: the innermost "
                                                       "frame of the traceback inside the submission (or the line "
                                                       "of a syntax error); None when it is not in the submission.")


class Mismatch(_Record):
    trial: int = Field(description="Trial index (0-based) of the first mismatch.")
    distribution: str = Field(description="Input distribution of that trial.")
    shape: dict[str, int] = Field(default_factory=dict, description="Problem dimensions of that trial.")
    indices: list[list[int]] = Field(default_factory=list, description="First mismatching element indices.")
    expected: list[AnyFloat] = Field(default_factory=list, description="Reference values at those indices.")
    actual: list[AnyFloat] = Field(default_factory=list, description="Candidate values at those indices.")
    max_abs_error: AnyFloat = Field(0.0, description="Largest absolute error in that trial (NaN/Inf-aware).")
    mean_abs_error: AnyFloat = Field(0.0, description="Mean absolute error in that trial.")
    mismatched: int = Field(0, description="Number of elements outside tolerance.")
    total: int = Field(0, description="Number of elements compared.")


class CorrectnessResult(_Record):
    correct: bool = Field(description="Every trial matched, inputs untouched, and results deterministic.")
    trials_passed: int = 0
    trials_total: int = 0
    max_abs_error: Optional[AnyFloat] = Field(None, description="Largest absolute error over all compared trials.")
    atol: float = 0.0
    rtol: float = 0.0
    error: Optional[str] = Field(None, description="The first failure, with its cause and a hint.")
    mismatch: Optional[Mismatch] = None
    inputs_mutated: bool = False
    deterministic: bool = True


class KernelLaunches(_Record):
    triton_launches: int = Field(0, description="Triton kernel launches counted during one forward call.")
    kernels_launched: list[str] = Field(default_factory=list, description="Names of Triton kernels that ran.")


class TimingStats(_Record):
    median_ms: float
    min_ms: float
    max_ms: float
    std_ms: float = 0.0
    samples: int = 0


class LaunchCost(_Record):
    """One modeled launch on the target GPU (CPU hosts)."""
    name: str
    programs: int = 1
    bytes_unique: int = 0
    bytes_sectors: int = 0
    flops: dict[str, float] = Field(default_factory=dict, description="FLOPs by precision.")
    time_us: float = 0.0
    bound: Literal["memory", "l2", "compute", "launch", "occupancy"] = "memory"
    roofline_us: float = Field(0.0, description="Time at the roofline: max(unique bytes / HBM bandwidth, FLOPs / "
                                                "peak rate of their precision), what this work needs at best.")
    peak_fraction: float = Field(0.0, description="roofline_us / time_us: the share of the peak this launch reaches "
                                                  "(as kernelbench.com v3's peak_fraction).")
    sampled_programs: Optional[int] = Field(None, description="Programs run to estimate the launch at the GPU shape "
                                                              "(None: every program ran).")
    idle_programs: int = Field(0, description="Programs of the grid's idle part (past its last tile, storing "
                                              "nothing), proven by the sample: they take no slot in a wave.")
    resident_programs: Optional[int] = Field(None, description="Programs resident per SM by the sm_90 compile's "
                                                               "registers, shared memory and warps (None: not "
                                                               "compiled; one per SM is assumed).")
    spill_bytes: int = Field(0, description="Local-memory traffic of spilled registers, priced at the L2 rate.")


class ModeledCost(_Record):
    target: str = Field(description="Target GPU the roofline model describes.")
    time_us: float
    launches: list[LaunchCost] = Field(default_factory=list)
    shape: dict[str, int] = Field(default_factory=dict, description="The problem size the launches were counted at.")
    peak_fraction: float = Field(0.0, description="Sum of the launches' roofline times / modeled time.")


class CompileInfo(_Record):
    """Ahead-of-time compile of one Triton kernel for the target GPU."""
    kernel: str
    ok: bool
    registers: Optional[int] = Field(None, description="Registers per thread.")
    spills: Optional[int] = Field(None, description="Bytes of local memory per thread (the stack frame ptxas spills "
                                                    "registers to).")
    shared_bytes: Optional[int] = Field(None, description="Shared memory per program (block).")
    num_warps: Optional[int] = None
    error: Optional[str] = None


class PerformanceResult(_Record):
    speedup: Optional[float] = Field(None, description="Reference time / candidate time, or None when not known.")
    speedup_kind: Optional[SpeedupKind] = None
    reference: Optional[TimingStats] = Field(None, description="Reference timing (ms) or modeled time (ms).")
    candidate: Optional[TimingStats] = None
    modeled_reference: Optional[ModeledCost] = None
    modeled_candidate: Optional[ModeledCost] = None
    compile: list[CompileInfo] = Field(default_factory=list)
    model_shape_speedup: Optional[float] = Field(None, description="Modeled: the speedup at the model shape, "
                                                 "every program of the trusted replay run.")
    gpu_shape_speedup: Optional[float] = Field(None, description="Modeled: the speedup at the task's GPU shape, "
                                               "from sampled programs; the credited speedup is the lower of the two.")
    note: Optional[str] = Field(None, description="Why the speedup is what it is (or missing).")


class Finding(_Record):
    """A flag as a record: what was found, the detail, whether it zeroes the score, the layer."""
    name: str
    detail: Optional[str] = None
    hack: bool
    layer: str
    line: Optional[int] = Field(None, description="The submission line of the construct (static findings).")


class Signal(_Record):
    """One independent signal's opinion of a step (environment/signals), computed apart from the main verdict."""
    name: str = Field(description="The signal, e.g. static_rules, physics_floor, own_kernel_share.")
    verdict: Literal["agree", "disagree", "veto", "abstain"] = Field(
        description="agree with the main verdict; disagree (flagged, reward unchanged); veto (the reward is 0); "
                    "abstain (nothing to say on this host or input).")
    value: Optional[float] = Field(None, description="The signal's measure, when it has one (see why).")
    why: str = Field("", description="What the signal saw, in one sentence.")


class EvalResult(_Record):
    task_id: str
    backend: Literal["cpu", "cuda"]
    outcome: Outcome = Field("ok", description="ok, submission_failed, or harness_error (the environment failed: "
                                               "no score, no turn consumed).")
    harness_error: Optional[str] = Field(None, description="What failed in the environment, when outcome is "
                                                           "harness_error.")
    static: StaticResult
    load: Optional[LoadResult] = None
    correctness: Optional[CorrectnessResult] = None
    launches: Optional[KernelLaunches] = None
    performance: Optional[PerformanceResult] = None
    flags: list[str] = Field(default_factory=list, description="Detected hacks (see flags.py) and warnings.")
    log: str = Field("", description="Captured stdout/stderr of the candidate, capped.")
    wall_s: float = Field(0.0, description="Wall time of the whole evaluation.")
    compute_s: float = Field(0.0, description="Time spent inside candidate and reference forward calls (child clocks).")
    stage_s: dict[str, float] = Field(default_factory=dict, description="Wall time of each harness stage (seconds).")
    notes: list[str] = Field(default_factory=list, description="What the environment did on the way, e.g. the one "
                                                          "retry after an evaluation worker was lost.")
    signals: list[Signal] = Field(default_factory=list, description="Independent signals (environment/signals): a "
                                                                    "veto zeroes the reward, a disagreement is flagged.")

    @model_validator(mode="before")
    @classmethod
    def _derived_fields_are_not_input(cls, data):
        """`findings` is serialised for every reader but always derived from the flags on load."""
        if isinstance(data, dict) and "findings" in data:
            data = {k: v for k, v in data.items() if k != "findings"}
        return data

    @computed_field(description="Every flag (static and runtime) as a record: name, detail, hack, layer.")
    @property
    def findings(self) -> list[Finding]:
        from environment.evaluation import flags as F
        out = []
        for flag in dict.fromkeys(list(self.static.flags) + list(self.flags)):
            name, _, detail = flag.partition(":")
            out.append(Finding(name=name, detail=detail or None, hack=F.is_hack(flag),
                               layer=F.LAYERS.get(name, "runtime-check"), line=self.static.flag_lines.get(flag)))
        return out

    @property
    def failing_line(self) -> Optional[int]:
        """The submission line to look at: a detected hack's construct, else the first static error, else
        where loading raised; None when the failure is not tied to a line (or nothing failed)."""
        hack = next((f.line for f in self.findings if f.hack and f.line), None)
        if hack is not None:
            return hack
        if not self.static.ok:
            return self.static.line
        return self.load.line if self.load is not None and not self.load.ok else None

    @property
    def hacked(self) -> bool:
        return any(f.hack for f in self.findings)

    @property
    def compiled(self) -> bool:
        return bool(self.static.ok and self.load is not None and self.load.ok)

    @property
    def correct(self) -> bool:
        return bool(self.correctness is not None and self.correctness.correct)
