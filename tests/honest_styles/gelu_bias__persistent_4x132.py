"""Persistent fused bias + exact GELU: 4 * 132 programs (four per H100 SM), each walks 1-D blocks of 1024
flat elements pid, pid + G, ... (grid-stride); the bias column is the flat index % N."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_SMS = 132


@triton.jit
def gelu_bias_persistent(x_ptr, bias_ptr, out_ptr, n_elements, N, num_blocks, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    G = tl.num_programs(0)
    for blk in range(pid, num_blocks, G):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        b = tl.load(bias_ptr + offs % N, mask=mask, other=0.0)
        y = x + b
        out = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
        tl.store(out_ptr + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        num_blocks = triton.cdiv(n, BLOCK)
        grid = (min(num_blocks, 4 * NUM_SMS),)
        gelu_bias_persistent[grid](x, bias.contiguous(), out, n, x.shape[-1], num_blocks, BLOCK=BLOCK, num_warps=4)
        return out
