"""Persistent RMSNorm: at most one program per SM, each walks rows pid, pid + G, ... (grid-stride)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_persistent(x_ptr, w_ptr, out_ptr, M, N, stride_row, eps, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    G = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0)
    for row in range(pid, M, G):
        x = tl.load(x_ptr + row * stride_row + cols, mask=cmask, other=0.0)
        inv_rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(out_ptr + row * stride_row + cols, x * inv_rms * w, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        grid = (min(M, 132),)
        rmsnorm_persistent[grid](x, weight.contiguous(), out, M, N, x.stride(0), 1e-6,
                                 BLOCK_N=triton.next_power_of_2(N))
        return out
