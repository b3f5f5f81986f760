"""The trace of one counted call: what the candidate claims it did, as data.

A trace is a straight-line program over *storages*: the call's inputs, storages created by traced
steps, and constant tensors the candidate held before the call (parameters, buffers, small tables).
A tensor is a view of a storage (dtype, size, stride, offset), so views need no steps of their own.
Steps are aten ops (by name, with their arguments) and Triton launches (kernel name, grid,
arguments). The trusted replayer re-executes it on inputs the candidate never saw and counts what
it does; the candidate's own process is never asked what anything cost.

Everything here is validated on receipt (pydantic, extra fields forbidden) and bounded, so a
forged trace is a protocol violation or an unreplayable trace, never a crash of the trusted side.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

MAX_STEPS = 4096
MAX_STORAGES = 16384
MAX_CONSTANT_BYTES = 64 << 20
MAX_CONSTANTS = 1024    # constant tensors per trace: each travels with its own frame metadata
MAX_LIST = 64
MAX_DIMS = 8


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TensorRef(_Record):
    kind: Literal["tensor"] = "tensor"
    storage: int = Field(ge=0, lt=MAX_STORAGES)
    dtype: str = Field(max_length=32, pattern=r"^[a-z0-9_]+$")
    size: list[Annotated[int, Field(ge=0, lt=2**40)]] = Field(max_length=MAX_DIMS)
    stride: list[Annotated[int, Field(ge=-(2**40), lt=2**40)]] = Field(max_length=MAX_DIMS)
    offset: int = Field(ge=0, lt=2**40)


class Special(_Record):
    """A torch value that is not a tensor or a number: dtype, device, layout or memory format."""
    kind: Literal["dtype", "device", "layout", "memory_format", "tl_dtype"]
    name: str = Field(max_length=32, pattern=r"^[a-z0-9_:]+$")


Leaf = Union[TensorRef, Special, bool, int, float, str, None]
Value = Union[Leaf, list[Union[Leaf, list[Leaf]]]]   # aten arguments nest two levels at most


class AtenStep(_Record):
    kind: Literal["aten"] = "aten"
    op: str = Field(max_length=128, pattern=r"^aten\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$")
    args: list[Value] = Field(max_length=MAX_LIST)
    kwargs: dict[str, Value] = Field(default_factory=dict, max_length=MAX_LIST)
    creates: list[tuple[int, int]] = Field(default_factory=list, max_length=MAX_LIST,
                                           description="(index among the output tensors, new storage id)")


class LaunchStep(_Record):
    kind: Literal["triton"] = "triton"
    kernel: str = Field(max_length=128, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    grid: tuple[int, int, int]
    args: list[Value] = Field(max_length=MAX_LIST)
    kwargs: dict[str, Value] = Field(default_factory=dict, max_length=MAX_LIST)


Step = Annotated[Union[AtenStep, LaunchStep], Field(discriminator="kind")]


class Storage(_Record):
    id: int = Field(ge=0, lt=MAX_STORAGES)
    nbytes: int = Field(ge=0, lt=2**40)
    source: Literal["input", "constant", "step"]
    index: int = Field(ge=0, description="input index, constant tensor index, or step index")


class Trace(_Record):
    storages: list[Storage] = Field(max_length=MAX_STORAGES)
    steps: list[Step] = Field(max_length=MAX_STEPS)
    outputs: list[TensorRef] = Field(max_length=MAX_LIST)
    host_reads: int = Field(0, ge=0, description="values read back to the host (.item(), .tolist(), bool(tensor))")
    unreplayable: Optional[str] = Field(None, max_length=2000,
                                        description="why the call cannot be replayed (an op outside the trace's "
                                                    "language), when it cannot")
