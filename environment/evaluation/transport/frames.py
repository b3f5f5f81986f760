"""The private channel between the trusted evaluator and a child: JSON header + raw tensor bytes.

Never pickle: unpickling a child's object would run the child's code in the trusted process.
Every frame carries the per-run nonce, its declared sizes are checked before anything is read,
and reads and writes have deadlines so a child that stops reading (or floods) cannot wedge the
parent.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any, Optional

import numpy as np
import torch

MAGIC = b"KPF1"
MAX_HEADER = 4 * 1024 * 1024
MAX_PAYLOAD = 1 << 30
DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
    "bool": torch.bool,
}
_NAMES = {v: k for k, v in DTYPES.items()}


class FrameError(Exception):
    """A malformed, forged or late frame. The evaluator treats it as a protocol violation."""


class ChannelClosed(FrameError):
    """The other side closed the channel (or died) before a whole frame arrived."""


class ClosedIdle(ChannelClosed):
    """The other side closed the channel between frames: the end of a conversation, or a process
    forked ahead of a request that never came (a pool closing its spares)."""


class Deadline(FrameError):
    """The other side did not answer in time."""


def tensor_meta(t: torch.Tensor) -> dict[str, Any]:
    return {"dtype": _NAMES[t.dtype], "shape": list(t.shape)}


def tensor_bytes(t: torch.Tensor) -> bytes:
    """t's bytes, read with Python's torch hooks off: a TorchFunctionMode (or dispatch mode) left pushed by the
    submission cannot run its work when the outputs are hashed or sent, off the clock (red team a153)."""
    with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():
        t = t.detach().contiguous().cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().tobytes()
        return t.numpy().tobytes()


def encode_header(header: dict[str, Any], tensors: list[torch.Tensor] = ()) -> bytes:
    """The frame's JSON header, exactly as encode() writes it (with the per-tensor metadata), without
    copying any tensor; raises FrameError when the frame would break the limits the reader enforces."""
    payload = sum(t.numel() * t.element_size() for t in tensors)
    if payload > MAX_PAYLOAD:
        raise FrameError(f"frame payload of {payload} bytes exceeds {MAX_PAYLOAD}")
    header = dict(header, tensors=[dict(tensor_meta(t), nbytes=t.numel() * t.element_size()) for t in tensors])
    head = json.dumps(header, allow_nan=True).encode()
    if len(head) > MAX_HEADER:
        raise FrameError(f"frame header of {len(head)} bytes exceeds {MAX_HEADER}")
    return head


def encode(header: dict[str, Any], tensors: list[torch.Tensor] = ()) -> bytes:
    """One frame; raises FrameError when it would break the limits the reader enforces, so the
    sender learns it is over a limit instead of the reader dying on it."""
    head = encode_header(header, tensors)
    return MAGIC + struct.pack("<I", len(head)) + head + b"".join(tensor_bytes(t) for t in tensors)


def _decode_tensor(meta: Any, blob: memoryview) -> torch.Tensor:
    """Copy into torch's own allocation (64-byte aligned, like a GPU allocator's 256): numpy's
    16-byte alignment would make sector counts, and so modeled times, depend on the address."""
    dtype = DTYPES[meta["dtype"]]
    shape = [int(s) for s in meta["shape"]]
    carrier = torch.int16 if dtype == torch.bfloat16 else dtype
    out = torch.empty(shape, dtype=carrier)
    if out.numel():
        out.view(-1).numpy()[:] = np.frombuffer(blob, dtype=out.view(-1).numpy().dtype)
    return out.view(torch.bfloat16) if dtype == torch.bfloat16 else out


def _validate_meta(meta: Any) -> int:
    if not isinstance(meta, dict) or meta.get("dtype") not in DTYPES or not isinstance(meta.get("shape"), list):
        raise FrameError("tensor descriptor must have a known dtype and a shape list")
    if not all(isinstance(s, int) and 0 <= s < 1 << 40 for s in meta["shape"]):
        raise FrameError("tensor shape must be non-negative integers")
    numel = 1
    for s in meta["shape"]:
        numel *= s
    nbytes = numel * torch.empty((), dtype=DTYPES[meta["dtype"]]).element_size()
    if meta.get("nbytes") != nbytes:
        raise FrameError("tensor nbytes does not match dtype and shape")
    return nbytes


def _read_exact(fd: int, n: int, deadline: float, at_boundary: bool = False) -> bytearray:
    buf = bytearray()
    while len(buf) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Deadline(f"no complete frame within the deadline ({len(buf)}/{n} bytes)")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            if at_boundary and not buf:
                raise ClosedIdle("channel closed between frames")
            raise ChannelClosed(f"channel closed after {len(buf)}/{n} bytes")
        buf += chunk
    return buf


def read_frame(fd: int, nonce: Optional[str], deadline: float) -> tuple[dict[str, Any], list[torch.Tensor]]:
    """Read one frame; check magic, sizes and nonce before trusting any of it."""
    head = _read_exact(fd, 8, deadline, at_boundary=True)
    if bytes(head[:4]) != MAGIC:
        raise FrameError("bad frame magic")
    (length,) = struct.unpack("<I", bytes(head[4:]))
    if length > MAX_HEADER:
        raise FrameError(f"frame header of {length} bytes exceeds {MAX_HEADER}")
    try:
        header = json.loads(bytes(_read_exact(fd, length, deadline)))
    except (ValueError, RecursionError) as exc:  # RecursionError: a forged header nested past the C stack
        raise FrameError(f"frame header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise FrameError("frame header must be a JSON object")
    if nonce is not None and header.get("nonce") != nonce:
        raise FrameError("frame nonce does not match this run")
    metas = header.pop("tensors", [])  # a transport detail: the caller gets the tensors themselves
    if not isinstance(metas, list):
        raise FrameError("tensors must be a list")
    sizes = [_validate_meta(m) for m in metas]
    if sum(sizes) > MAX_PAYLOAD:
        raise FrameError("frame payload too large")
    payload = memoryview(_read_exact(fd, sum(sizes), deadline)) if sizes else memoryview(b"")
    tensors, offset = [], 0
    for meta, size in zip(metas, sizes):
        tensors.append(_decode_tensor(meta, payload[offset:offset + size]))
        offset += size
    return header, tensors


def write_frame(fd: int, data: bytes, deadline: Optional[float] = None) -> None:
    """Write a whole frame. With a deadline the fd must be non-blocking: a peer that stops reading
    cannot hold the writer past it."""
    view = memoryview(data)
    while view:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Deadline("peer did not read the frame within the deadline")
            _, ready, _ = select.select([], [fd], [], remaining)
            if not ready:
                continue
        try:
            n = os.write(fd, view[: 1 << 20])
        except BlockingIOError:
            continue
        except (BrokenPipeError, OSError) as exc:
            raise ChannelClosed(f"peer closed the channel ({exc})") from None
        view = view[n:]
