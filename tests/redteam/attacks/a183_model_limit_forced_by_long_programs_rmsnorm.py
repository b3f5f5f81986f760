"""GPU-shape pricing, the model's limit: a row kernel launched on 2 programs at every size, each walking half the rows, passes 4096 memory instructions per program at the GPU shape (8192 rows), which stops the sample with a message naming the model's limit; the price must not fall back to the model shape's (where 2 programs of 32 rows each are cheap), nor be the environment's failure."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_walk_kernel(x_ptr, w_ptr, out_ptr, M, N, stride_row, eps, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0)
    for row in range(tl.program_id(0), M, tl.num_programs(0)):
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
        rmsnorm_walk_kernel[(2,)](x, weight.contiguous(), out, M, N, x.stride(0), 1e-6,
                                  BLOCK_N=triton.next_power_of_2(N))
        return out
