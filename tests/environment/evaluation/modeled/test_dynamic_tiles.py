"""Dynamic tile scheduling (programs claiming tiles from an atomic counter) at the GPU shape: the model's limit,
named as such, never a timeout or an accusation. (The persistent and 2-D tile styles are priced alike on every
seed and secret and beat the reference copy: tests/honest_styles/test_same_price_every_secret.py.) Real harness."""
from __future__ import annotations


from environment import reward
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.tasks import get_task

DYNAMIC = '''"""Dynamic tiles: each of at most 132 programs claims block ids from an atomic counter until none remain."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_bias_dynamic(x_ptr, b_ptr, out_ptr, counter_ptr, n_elements, N, BLOCK: tl.constexpr):
    n_blocks = tl.cdiv(n_elements, BLOCK)
    blk = tl.atomic_add(counter_ptr, 1)
    while blk < n_blocks:
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
        v = x + b
        tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=mask)
        blk = tl.atomic_add(counter_ptr, 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        counter = torch.zeros(1, dtype=torch.int32, device=x.device)
        grid = (min(triton.cdiv(n, 1024), 132),)
        gelu_bias_dynamic[grid](x, bias, out, counter, n, x.shape[-1], BLOCK=1024)
        return out
'''


def test_dynamic_tiles_from_an_atomic_counter_end_as_the_models_limit_not_a_timeout_or_an_accusation():
    # the interpreter runs one program at a time, so the first sampled program claims every tile: the sample stops
    # at its budget (it ran for minutes and the evaluation timed out at 0.0), correct, no speed credit, and the note
    # names the model's limit and gives the kernel no advice
    result = evaluate(get_task("gelu_bias"), DYNAMIC, seed=1)
    assert result.correct and F.UNREPLAYABLE in result.flags, (result.flags, result.performance)
    note = result.performance.note
    assert "a limit of the model, not a fault of the kernel" in note and "Launch the same computation" not in note
    assert reward.score(result)[0] == 0.5
