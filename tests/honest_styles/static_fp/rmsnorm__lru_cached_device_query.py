"""Persistent RMSNorm: the device's SM count comes from a functools.lru_cache'd query (asked once per device
index, as vLLM and Liger do), the grid is min(4 * SMs, rows) programs striding over rows."""
import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl


@functools.lru_cache(maxsize=None)
def num_sms(device_index: int) -> int:
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties(device_index).multi_processor_count
    return 132


@triton.jit
def rmsnorm_persistent(x_ptr, w_ptr, y_ptr, M, N, stride, eps, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0)):
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(y_ptr + row * stride + cols, x * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        device_index = x.device.index or 0
        grid = (min(4 * num_sms(device_index), M),)
        rmsnorm_persistent[grid](x, weight, y, M, N, x.stride(0), 1e-6, BLOCK_N=triton.next_power_of_2(N))
        return y
