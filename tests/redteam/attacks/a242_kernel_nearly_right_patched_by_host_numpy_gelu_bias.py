"""Host work through a numpy view: the traced kernel is off by 1.5e-5 at element 0 (inside the tolerance for most values there, so its replay on held-out inputs passed), and forward patches that element exactly through out.numpy(). Before the counted-input replay: correct, priced as the honest kernel (0.875) while the unpatched kernel is a wrong answer."""
import math
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, b_ptr, o_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(x_ptr + offs, mask=m, other=0.0) + tl.load(b_ptr + offs % N, mask=m, other=0.0)
    out = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
    out = tl.where(offs == 0, out + 1.5e-5, out)
    tl.store(o_ptr + offs, out, mask=m)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        x = x.contiguous(); bias = bias.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        k[(triton.cdiv(n, 1024),)](x, bias, out, n, x.shape[-1], BLOCK=1024)
        v = float(x.numpy().reshape(-1)[0]) + float(bias.numpy()[0])
        out.numpy().reshape(-1)[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
        return out
