"""The typed protocol between the evaluator and its children (candidate, reference, replayer).

Every message is a pydantic record validated by its receiver: commands in the child, replies in the
evaluator. A reply that does not validate (a forged frame, a field of the wrong type, a field that
does not exist) is a protocol violation, never a crash of the trusted side. Frames (frames.py)
carry these records as their JSON header; tensors travel beside them as raw bytes.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from environment.config import HarnessConfig
from environment.evaluation.replay.trace import Trace

Init = Optional[list[Union[bool, int, float, str, None]]]


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- commands (evaluator -> child) -------------------------------------------------------------
class Limits(_Message):
    memory_mb: int
    cpu_seconds: int
    max_file_mb: int
    timeout_s: float = 0.0
    landlock: bool = True
    seccomp: bool = True

    @classmethod
    def of(cls, config: HarnessConfig) -> "Limits":
        return cls(memory_mb=config.memory_mb, cpu_seconds=config.cpu_seconds, max_file_mb=config.max_file_mb,
                   timeout_s=config.timeout_s, landlock=config.landlock, seccomp=config.seccomp)


class Job(_Message):
    """The first frame a candidate or reference child reads: what to load and how."""
    cmd: Literal["job"] = "job"
    nonce: str = ""                 # set by ChildHandle.send
    tmpdir: str
    source: str
    class_name: Literal["ModelNew", "Model"]
    init_args: list[Any]            # JSON values, or {"__tensor__": i} for the i-th tensor of the frame
    init_seed: int
    backend: Literal["cpu", "cuda"]
    device: Literal["cpu", "cuda"]
    tolerance: dict[str, Optional[Union[bool, float]]]   # atol, rtol, tf32_admissible (None: no matmul)
    limits: Limits
    train_mode: bool = False        # run the model as constructed (KernelBench), not after .eval()


class InputPlan(_Message):
    """The GPU-shape inputs, made by the trusted process that uses them (the reference's child, the
    replayer) instead of being sent: the reference's get_inputs at `shape` under `seed` (inputs.py
    planned_inputs), what the evaluator's make_inputs would make. Never sent to the candidate."""
    code: str                       # the reference's source (task code)
    derived: str = ""
    shape: dict[str, int]
    seed: int = Field(ge=0, lt=2**63)
    cap_bytes: int = Field(ge=0)


class MakeInputs(_Message):
    """An optional first frame for the replayer, sent while the trials run: make the GPU-shape inputs
    of `plan` now (a later job's sampled replay with the same plan uses them)."""
    cmd: Literal["inputs"] = "inputs"
    nonce: str = ""
    plan: InputPlan


class SampledReplay(_Message):
    """The second replay of a job: the trace recorded at the task's GPU shape, replayed on inputs of
    that shape (`inputs` of them, made by the replayer from `plan`) with a sample of each launch's
    programs (replay/sampled.py). Its `constants` tensors follow the first replay's in the frame."""
    trace: Trace
    plan: InputPlan
    inputs: int = Field(ge=0)
    constants: int = Field(ge=0)
    seed: int = Field(ge=0, lt=2**63, description="draws the interior programs (the secret sampling seed)")


class ReplayJob(_Message):
    """The one frame the replayer reads: the generated kernel module, the trace, and tensors (the
    held-out inputs, then the candidate's constants, then the sampled replay's tensors if any)."""
    cmd: Literal["job"] = "job"
    nonce: str = ""
    tmpdir: str
    module: str
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    kernels: list[str]
    trace: Trace
    inputs: int = Field(ge=0)
    # input groups after the held-out ones, each replayed too (outputs only): the counted call's own inputs (what
    # the candidate returned there must be what its recorded work computes, verdict.untraced_difference), then
    # held-out draws of the task's other input families (judged against the reference like the first)
    again: list[int] = Field(default_factory=list, max_length=8)
    # the groups after the first replay every launch's programs in an order drawn from this secret (a kernel whose
    # answer rests on programs running in pid order, as the interpreter runs them and a GPU does not, misses there)
    order_seed: Optional[int] = Field(None, ge=0)
    backend: Literal["cpu", "cuda"]
    limits: Limits
    # the sampler's job (a second replayer, beside the first replay): only the sampled replay; the frame's
    # tensors are then its constants alone
    sampled: Optional[SampledReplay] = None


class _Command(_Message):
    nonce: str = ""
    init: Init = None


class Run(_Command):
    cmd: Literal["run"] = "run"
    repeat: int = Field(1, ge=1, le=2)
    float64: bool = False                 # the reference only: run a float64 copy (the oracle)
    order_seed: Optional[int] = None      # launches run their programs in this secret order (CPU hosts)


class Stage(_Command):
    cmd: Literal["stage"] = "stage"
    arity: int = Field(ge=1)


class Time(_Command):
    cmd: Literal["time"] = "time"
    skip_model: bool = False


# a child's error when forward returned something else than plain tensors (a subclass, a lazy stand-in)
NOT_PLAIN = "forward must return plain tensors"


class Digest(_Command):
    """The digests of the last timed call's outputs, asked right after its Timed reply: hashing hundreds of
    MiB of outputs inside the timed call put seconds of host work on the clock of a sub-millisecond kernel."""
    cmd: Literal["digest"] = "digest"


class Fetch(_Command):
    cmd: Literal["fetch"] = "fetch"
    index: int = Field(ge=0)


class Count(_Command):
    cmd: Literal["count"] = "count"
    # The reference only. With a plan: count on inputs it makes itself (the GPU-shape run), send no
    # outputs and keep them for Pick (only the positions the replay checked travel back).
    plan: Optional[InputPlan] = None


class Pick(_Command):
    """The values of the outputs kept by the last planned Count at the frame's index tensors (one
    int64 tensor of flat positions per output)."""
    cmd: Literal["pick"] = "pick"


class TraceCall(_Command):
    cmd: Literal["trace"] = "trace"
    # Record at these input geometries ((shape, dtype) per input) on zero-filled inputs the child
    # allocates itself (the GPU-shape trace: its values are never used, so none are sent), and send
    # back only the constants. None: record on the frame's tensors and send the outputs first.
    geometry: Optional[list[tuple[list[int], str]]] = Field(None, max_length=64)


class Exit(_Command):
    cmd: Literal["exit"] = "exit"


Command = Annotated[Union[Run, Stage, Time, Digest, Fetch, Count, Pick, TraceCall, Exit], Field(discriminator="cmd")]
COMMAND = TypeAdapter(Command)


# --- replies (child -> evaluator) --------------------------------------------------------------
MAX_TEXT = 4000  # what a child may say in one text field; more is cut, never refused (it is the child's text)


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[:MAX_TEXT] + f" [... {len(value) - MAX_TEXT} more characters cut]"
    if isinstance(value, list):
        return [_cut(v) for v in value[:64]]
    return value


class Reply(_Message):
    nonce: str
    ok: bool
    error: Optional[str] = None
    compute_s: float = Field(0.0, ge=0.0, allow_inf_nan=False)

    @field_validator("error", "returned", "audit", "races", "swallowed", mode="before", check_fields=False)
    @classmethod
    def _bounded_text(cls, value: Any) -> Any:
        """Text from a child is capped where it is received: it can never grow the result past a frame."""
        return _cut(value)


class Loaded(Reply):
    kind: Literal["loaded"]
    line: Optional[int] = Field(None, ge=1, le=10**7, description="the submission line where loading raised")
    layers: dict[str, Union[bool, int, str]] = Field(default_factory=dict)


class Ran(Reply):
    kind: Literal["ran", "run"]
    plain: bool = False
    returned: Optional[str] = Field(None, description="what forward returned when it holds no tensor at all")
    mutated: bool = False
    launches: dict[str, int] = Field(default_factory=dict)
    outputs: int = Field(0, ge=0)
    audit: list[str] = Field(default_factory=list)
    races: list[str] = Field(default_factory=list, description="write-write races the shuffled trial saw")
    swallowed: list[str] = Field(default_factory=list, description="exceptions forward swallowed")


class Staged(Reply):
    kind: Literal["staged", "stage"]
    sets: int = Field(0, ge=0)


class Timed(Reply):
    kind: Literal["timed", "time"]
    elapsed_s: float = Field(0.0, allow_inf_nan=False)


class Digested(Reply):
    kind: Literal["digested", "digest"]
    digests: list[str] = Field(default_factory=list)


class Fetched(Reply):
    kind: Literal["fetched", "fetch", "picked", "pick"]


class Counted(Reply):
    """The reference's own counted call (task code, its own process)."""
    kind: Literal["counted", "count"]
    report: dict[str, Any] = Field(default_factory=dict)
    # a planned Count: the geometry ((shape, dtype) each) of the inputs it made and of the outputs it
    # kept, and the inputs' fingerprint (inputs.fingerprint: the replayer's must be the same)
    inputs: list[tuple[list[int], str]] = Field(default_factory=list, max_length=64)
    kept: list[tuple[list[int], str]] = Field(default_factory=list, max_length=64)
    fingerprint: str = ""


class Traced(Reply):
    kind: Literal["traced", "trace"]
    trace: Optional[Trace] = None
    outputs: int = Field(0, ge=0)


class Replayed(Reply):
    """The replayer's answer; a job with a sampled replay gets a second one carrying only
    `sampled_report` or `sampled_error`, and the checked positions and values as its tensors."""
    kind: Literal["replayed"]
    harness: bool = Field(False, description="the replayer's own failure (not the trace's): a harness error")
    report: dict[str, Any] = Field(default_factory=dict)
    again_outputs: list[int] = Field(default_factory=list, max_length=8,
                                     description="how many of the last outputs each of the job's `again` groups gave")
    sampled_report: Optional[dict[str, Any]] = None
    sampled_error: Optional[str] = None
    sampled_inputs_error: Optional[str] = Field(None, description="the replayer could not make the GPU-shape "
                                                "inputs from the plan (the environment's, like the reference's)")
    fingerprint: str = ""           # of the GPU-shape inputs it made, before any kernel ran
    layers: dict[str, Union[bool, int, str]] = Field(default_factory=dict)


class Unknown(Reply):
    kind: Literal["error"]


def parse(model: type[Reply], header: dict[str, Any]) -> Reply:
    """The reply as `model`; raises ValueError (a protocol violation) for anything else, a refused
    command included (the evaluator only sends commands the child knows)."""
    try:
        return model.model_validate(header)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ValueError(f"a {model.__name__} reply does not validate ({where}: {first.get('msg')})") from None
