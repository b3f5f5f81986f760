"""2-D tiles (rows x columns) so the bias is loaded once per column tile; the grid is a lambda over the
launch meta-parameters, built once in __init__ and reused every call."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_2d(x_ptr, b_ptr, y_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    x = tl.load(x_ptr + rm[:, None] * stride_m + rn[None, :], mask=mask, other=0.0)
    v = x + b[None, :]
    y = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(y_ptr + rm[:, None] * stride_m + rn[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, block_m: int = 16, block_n: int = 128):
        super().__init__()
        self.meta = dict(BLOCK_M=block_m, BLOCK_N=block_n)
        self.grid = lambda M, N: (triton.cdiv(M, self.meta["BLOCK_M"]), triton.cdiv(N, self.meta["BLOCK_N"]))

    def forward(self, x, bias):
        x2 = x.contiguous().view(-1, x.shape[-1])
        M, N = x2.shape
        y = torch.empty_like(x2)
        gelu_bias_2d[self.grid(M, N)](x2, bias, y, M, N, x2.stride(0), **self.meta)
        return y.view(x.shape)
