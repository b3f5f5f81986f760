"""Precision names shared by the counters and the model.

Elementwise work is keyed by the element type ("fp32", "fp16", "bf16", "fp64", "int"); matrix
work by "dot_<type>". The keys match `peak` in gpus.yaml.
"""
from __future__ import annotations

import torch

# TF32 keeps 10 mantissa bits (unit roundoff ~4.9e-4); a task whose tolerance is tighter than
# this cannot be met with TF32 on a real GPU, whatever the interpreter's exact fp32 shows.
TF32_MIN_TOLERANCE = 1e-3

_TORCH_ELEMENT = {
    torch.float64: "fp64", torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
}

_TL_ELEMENT = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "bf16": "bf16"}


def torch_dot_precision(dtype: torch.dtype) -> str:
    """Matmul precision of an aten op: PyTorch runs fp32 matmuls in IEEE fp32 by default."""
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        return "dot_fp8"
    if dtype == torch.int8:
        return "dot_int8"
    return "dot_" + _TORCH_ELEMENT.get(dtype, "fp32")


def tl_element_precision(tl_dtype) -> str:
    """Elementwise precision of an interpreter operand (a triton.language dtype)."""
    name = getattr(tl_dtype, "name", str(tl_dtype))
    if name in _TL_ELEMENT:
        return _TL_ELEMENT[name]
    return "fp32" if name.startswith("fp") else "int"


def tl_dot_precision(tl_dtype, input_precision) -> tuple[str, int]:
    """(precision key, passes) of a tl.dot: fp32 operands default to TF32; x3/x6 cost 3/6 passes."""
    name = getattr(tl_dtype, "name", str(tl_dtype))
    if name.startswith("fp8"):
        return "dot_fp8", 1
    if name in ("int8", "uint8"):
        return "dot_int8", 1
    if name in ("fp16", "bf16", "fp64"):
        return "dot_" + name, 1
    mode = getattr(input_precision, "name", str(input_precision or "TF32")).upper()
    if mode == "IEEE":  # explicitly IEEE: CUDA-core FMAs on sm_90, never the tensor cores
        return "dot_ieee", 1
    if mode == "BF16X3":  # ~16 bits: its own key, charged as single-pass TF32 is (charged_precision)
        return "dot_bf16x3", 3
    if mode.startswith("BF16X"):
        return "dot_bf16", int(mode[5:])
    if mode == "TF32X3":  # three TF32 tensor-core products: about fp32 accuracy, its own key (never demoted)
        return "dot_tf32x3", 3
    return "dot_tf32", 1


def tf32_admitted(tolerance: dict | None) -> bool:
    """True when the task's tolerance (atol, rtol) is loose enough for TF32 matmuls."""
    if not tolerance:
        return False
    if tolerance.get("tf32_admissible") is not None:  # decided per task by running the reference (tf32_policy.py)
        return bool(tolerance["tf32_admissible"])
    return min(float(tolerance.get("atol", 0.0)), float(tolerance.get("rtol", 0.0))) >= TF32_MIN_TOLERANCE


def charged_precision(key: str, tf32_ok: bool) -> str:
    """The peak a counted precision is charged at (its passes are already in the FLOPs), so TF32 defaults
    win nothing for free: PyTorch's fp32 matmuls run as TF32 when the tolerance admits it (the reference
    and a PyTorch candidate alike), and a single-pass TF32 dot is charged as IEEE fp32 when the tolerance
    does not (correctness is checked at small shapes; TF32's error grows with K at the GPU shape). A
    tf32x3 dot is fp32-accurate: always the TF32 tensor-core rate, three passes. A Triton `ieee` dot runs
    on the CUDA cores: always the fp32 FMA rate. A bf16x3 dot (~16 bits, short of fp32 as TF32 is) is charged
    like single-pass TF32: the BF16 rate where the task admits TF32, the fp32 rate where it does not; bf16x6 is
    fp32-accurate: always the BF16 rate. (A kernel switching to bf16x3 at the GPU shape only, where outputs are
    compared on normal inputs, was priced above honest work: red team a238.)"""
    if key == "dot_bf16x3":
        return "dot_bf16" if tf32_ok else "dot_fp32"
    if key == "dot_ieee":
        return "dot_fp32"
    if key == "dot_tf32x3":
        return "dot_tf32"
    if tf32_ok and key == "dot_fp32":
        return "dot_tf32"
    if not tf32_ok and key == "dot_tf32":
        return "dot_fp32"
    return key
