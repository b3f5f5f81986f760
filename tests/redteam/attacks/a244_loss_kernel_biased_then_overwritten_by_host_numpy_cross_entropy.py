"""Host work through a numpy view on a scalar output: the traced kernel computes the loss times (1 + 3e-5), forward overwrites it with the exact float64 loss through out.numpy(). Before the counted-input replay: a near miss, 0.4, above the unpatched kernel (0.1)."""
import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(l_ptr, t_ptr, o_ptr, M, C, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    acc = 0.0
    for r in range(0, M):
        x = tl.load(l_ptr + r * C + cols, mask=cols < C, other=-float("inf"))
        mx = tl.max(x, 0)
        lse = mx + tl.log(tl.sum(tl.exp(x - mx), 0))
        t = tl.load(t_ptr + r)
        acc += lse - tl.load(l_ptr + r * C + t)
    loss = acc / M
    tl.store(o_ptr, loss * (1.0 + 3e-5))


class ModelNew(nn.Module):
    def forward(self, logits, target):
        logits = logits.contiguous(); target = target.contiguous()
        M, C = logits.shape
        out = torch.empty((), dtype=logits.dtype)
        k[(1,)](logits, target, out, M, C, BLOCK=triton.next_power_of_2(C))
        L = logits.numpy().astype(np.float64); t = target.numpy()
        mx = L.max(1, keepdims=True)
        lse = (mx + np.log(np.exp(L - mx).sum(1, keepdims=True)))[:, 0]
        out.numpy()[...] = np.float32((lse - L[np.arange(M), t]).mean())
        return out
