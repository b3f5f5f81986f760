"""Flat elementwise kernel autotuned over BLOCK_SIZE x num_warps (the usual 'many configs' sweep)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

AUTOTUNE_CONFIGS = [triton.Config({"BLOCK_SIZE": bs}, num_warps=nw)
                    for bs in (256, 512, 1024, 2048, 4096) for nw in (2, 4, 8)]


@triton.autotune(configs=AUTOTUNE_CONFIGS, key=["n_elements"])
@triton.jit
def fused_bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, n_elements, hidden_size, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    bias = tl.load(bias_ptr + (offsets % hidden_size), mask=mask)
    z = x + bias
    out = z * 0.5 * (1.0 + tl.erf(z / 1.4142135623730951))
    tl.store(out_ptr + offsets, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        output = torch.empty_like(x)
        n_elements = output.numel()
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        fused_bias_gelu_kernel[grid](x, bias, output, n_elements, x.shape[-1])
        return output
