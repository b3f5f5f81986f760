"""Wrong: a fixed 4096-column block per row covers every listed and modeled N, but longer rows (N=50257 on the GPU) lose their tail."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, N, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < N, other=float("-inf"))
    m = tl.max(x, axis=0)
    tl.store(out_ptr + row, m + tl.log(tl.sum(tl.exp(x - m), axis=0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty(M, dtype=x.dtype, device=x.device)
        logsumexp_kernel[(M,)](x, out, N, x.stride(0), BLOCK=4096)  # the whole row in one block
        return out
