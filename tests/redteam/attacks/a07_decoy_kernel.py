"""Exploit 4: a Triton kernel is defined (to look like custom work) but never launched; PyTorch computes the result."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_mul_kernel(x_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(x_ptr + (offs // N) * 2 * N + offs % N, mask=mask)
    u = tl.load(x_ptr + (offs // N) * 2 * N + N + offs % N, mask=mask)
    tl.store(out_ptr + offs, g * tl.sigmoid(g) * u, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up
