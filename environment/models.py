"""Wire types of kernel_env (the contract in DESIGN.md; tests and outside tools rely on these names)."""
from __future__ import annotations

from typing import Literal, Optional

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field

from environment.evaluation.result import AnyFloat, EvalResult, SpeedupKind, TimingStats

MAX_CODE_BYTES = 256 * 1024


class KernelAction(Action):
    code: str = Field(
        description="Full Python source in KernelBench format: defines class ModelNew(torch.nn.Module) "
        "with the reference Model's constructor and forward signature. Triton kernels or plain PyTorch.",
        max_length=MAX_CODE_BYTES,
    )
    finish: bool = Field(False, description="End the episode after this step.")


class Timings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: str = Field("ms", description="Unit of the statistics.")
    source: str = Field(description="How the numbers were obtained, e.g. 'measured on CPU (wall clock)' "
                        "or 'modeled H100 SXM roofline estimate, not measured'.")
    reference: Optional[TimingStats] = Field(None, description="Reference implementation statistics.")
    candidate: Optional[TimingStats] = Field(None, description="Submitted implementation statistics.")


class KernelObservation(Observation):
    task_id: str = Field("", description="Task id, e.g. gelu_bias.")
    difficulty: str = Field("", description="easy, medium or hard.")
    prompt: str = Field("", description="The full task text an LLM agent sees.")
    reference_code: str = Field("", description="The reference PyTorch implementation (KernelBench format).")
    turn: int = Field(0, ge=0, description="Submissions made so far in this episode.")
    max_turns: int = Field(5, ge=1, description="Submissions allowed in this episode.")
    backend: Literal["cpu", "cuda"] = Field("cpu", description="Device the harness evaluates on.")
    compiled: Optional[bool] = Field(None, description="The submission passed static checks and loaded.")
    correct: Optional[bool] = Field(None, description="Every correctness trial passed.")
    trials_passed: int = Field(0, ge=0, description="Correctness trials passed.")
    trials_total: int = Field(0, ge=0, description="Correctness trials run.")
    max_abs_error: Optional[AnyFloat] = Field(
        None, description="Largest absolute error against the reference (\"Infinity\" when NaN/Inf mismatch).")
    speedup: Optional[float] = Field(None, description="Reference time / submission time; null when unknown.")
    speedup_kind: Optional[SpeedupKind] = Field(
        None, description="measured_cuda, measured_cpu or modeled (H100 roofline estimate, not measured).")
    timings: Optional[Timings] = Field(None, description="Reference and candidate timing statistics.")
    flags: list[str] = Field(default_factory=list, description="Detected hacks and warnings.")
    feedback: str = Field("", description="Human-readable report: what happened and how to improve.")
    reward_breakdown: dict[str, float] = Field(
        default_factory=dict, description="Reward components; they sum to score.")
    score: float = Field(0.0, ge=0.0, le=1.0, description="Score of this submission in [0, 1].")
    best_score: float = Field(0.0, ge=0.0, le=1.0, description="Best score in this episode so far.")
    error: Optional[str] = Field(None, description="One-line cause when the submission failed, else null.")
    outcome: Optional[Literal["ok", "submission_failed", "harness_error"]] = Field(
        None, description="After a step: ok (judged), submission_failed (did not pass static checks or load), or "
        "harness_error (the environment failed: reward is null, the turn is not consumed; send the step again).")
    evaluation: Optional[EvalResult] = Field(
        None, description="The full typed evaluation record, stage by stage (mismatch table, launches, "
        "per-launch modeled costs, compile info, captured log).")


class KernelState(State):
    task_id: Optional[str] = Field(None, description="Task of the current episode.")
    seed: Optional[int] = Field(None, description="Public seed of the current episode.")
    turn: int = Field(0, ge=0, description="Submissions made so far.")
    max_turns: int = Field(5, ge=1, description="Submissions allowed.")
    best_score: float = Field(0.0, ge=0.0, le=1.0, description="Best score so far.")
    history: list[float] = Field(default_factory=list, description="Score of each step, in order.")
    done: bool = Field(False, description="The episode has ended.")
