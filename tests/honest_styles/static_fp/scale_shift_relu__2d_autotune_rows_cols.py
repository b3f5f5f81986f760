"""2-D tiling with the per-column scale/shift loaded once per tile; autotuned over tile shapes keyed on M, N."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[
    triton.Config({"BLOCK_M": 1, "BLOCK_N": 1024}, num_warps=4),
    triton.Config({"BLOCK_M": 4, "BLOCK_N": 256}, num_warps=4),
    triton.Config({"BLOCK_M": 8, "BLOCK_N": 128}, num_warps=4),
    triton.Config({"BLOCK_M": 16, "BLOCK_N": 64}, num_warps=2),
    triton.Config({"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=8),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=8),
], key=["M", "N"])
@triton.jit
def affine_relu_2d(x_ptr, scale_ptr, shift_ptr, out_ptr, M, N, stride_xm, stride_om,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    scale = tl.load(scale_ptr + cols, mask=col_ok, other=0.0)
    shift = tl.load(shift_ptr + cols, mask=col_ok, other=0.0)
    mask = (rows[:, None] < M) & col_ok[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    out = tl.maximum(x * scale[None, :] + shift[None, :], 0.0)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale, shift):
        assert x.dim() == 2 and scale.shape == shift.shape == (x.shape[1],), "per-column scale and shift"
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        affine_relu_2d[grid](x, scale, shift, out, M, N, x.stride(0), out.stride(0))
        return out
