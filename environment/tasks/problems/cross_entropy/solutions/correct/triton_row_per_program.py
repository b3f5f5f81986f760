"""One program per row (the most programs a few rows can give): online log-sum-exp over chunks of
the row, minus the target logit; torch averages the M losses."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_loss_kernel(x_ptr, t_ptr, loss_ptr, C, stride_row, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * stride_row
    offs = tl.arange(0, BLOCK_C)
    run_max = tl.full([BLOCK_C], float("-inf"), tl.float32)   # per-lane running max and sum
    run_sum = tl.zeros([BLOCK_C], dtype=tl.float32)
    for start in range(0, C, BLOCK_C):
        x = tl.load(base + start + offs, mask=start + offs < C, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        safe = tl.where(new_max == float("-inf"), 0.0, new_max)   # lanes that saw only padding
        run_sum = run_sum * tl.exp(run_max - safe) + tl.exp(x - safe)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    total = tl.sum(run_sum * tl.exp(run_max - row_max), axis=0)
    picked = tl.load(base + tl.load(t_ptr + row))
    tl.store(loss_ptr + row, row_max + tl.log(total) - picked)


class ModelNew(nn.Module):
    """No parameters: nn.Module's own constructor is enough."""

    def forward(self, logits, target):
        x = logits.contiguous()
        rows, classes = x.shape
        per_row = x.new_empty(rows)
        row_loss_kernel[(rows,)](x, target.contiguous(), per_row, classes, x.stride(0),
                                 BLOCK_C=min(triton.next_power_of_2(classes), 2048))
        return per_row.mean()
