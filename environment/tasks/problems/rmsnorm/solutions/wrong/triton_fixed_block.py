"""Wrong: reduces only the first 256 columns (a fixed block), so rows longer than 256 lose their tail."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, N, stride_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    ss = tl.zeros([BLOCK], dtype=tl.float32)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < N, other=0.0)
    ss += x * x
    inv_rms = 1.0 / tl.sqrt(tl.sum(ss, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        c = start + cols
        m = c < N
        xv = tl.load(x_ptr + row * stride_row + c, mask=m, other=0.0)
        w = tl.load(w_ptr + c, mask=m, other=0.0)
        tl.store(out_ptr + row * stride_row + c, xv * inv_rms * w, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        rmsnorm_kernel[(M,)](x, weight, out, N, x.stride(0), 1e-6, BLOCK=256)
        return out
