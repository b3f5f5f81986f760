"""Not a hack (a false-positive check, closure ordering): the tf32x3 MLP with one [M, D] workspace holding x's copy for fc1 and then, once fc1 has run, the output (filled with fc2's bias, fc2 adding its GEMM into it): correct on a GPU (stream order), but the closure runs fc1's unsampled programs after the bias fill, where their input is gone."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

SMS = 132
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages), largest first: 128 x 128 x 32 on 8 warps at large sizes (its
# sm_90 compile holds tf32x3's split operands in 254 registers, no spills; 64-deep K steps spill), down to 16 x 16
TILES = ((128, 128, 32, 8, 3), (64, 64, 64, 8, 3), (32, 64, 64, 4, 3), (32, 32, 64, 4, 3), (16, 32, 64, 4, 3),
         (16, 16, 64, 4, 3))


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
                  APPLY_GELU: tl.constexpr, ACCUMULATE: tl.constexpr, EVEN_K: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """out = act(x @ w.T + b), x: [M, K], w: [N, K] (nn.Linear layout, read transposed through its strides)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # rows and columns past the edge read row M-1 / column N-1 again (clamped): their results are never stored
    rows = tl.minimum(offs_m, M - 1)
    cols = tl.minimum(offs_n, N - 1)
    x_ptrs = x_ptr + rows[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + cols[None, :] * stride_wn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            x = tl.load(x_ptrs)
            w_t = tl.load(w_ptrs)
        else:
            x = tl.load(x_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
            w_t = tl.load(w_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(x, w_t, acc, input_precision="tf32x3")
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if not ACCUMULATE:
        acc += tl.load(b_ptr + cols)[None, :]
    if APPLY_GELU:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    out_ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    keep = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if ACCUMULATE:   # the output already holds something to add to (here fc2's bias)
        acc += tl.load(out_ptrs, mask=keep, other=0.0)
    tl.store(out_ptrs, acc, mask=keep)


def linear(x, layer, apply_gelu, out=None):
    M, K = x.shape
    w = layer.weight
    N = w.shape[0]
    accumulate = out is not None
    if out is None:
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = next(
        (t for t in TILES if triton.cdiv(M, t[0]) * triton.cdiv(N, t[1]) >= SMS), TILES[-1])
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_kernel[grid](x, w, layer.bias, out, M, N, K,
                        x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
                        APPLY_GELU=apply_gelu, ACCUMULATE=accumulate, EVEN_K=K % BLOCK_K == 0,
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=warps, num_stages=stages)
    return out


class ModelNew(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, x):
        ws = x.clone()   # one [M, D] buffer: x's copy for fc1, then the output (x is dead once fc1 has run)
        h = linear(ws, self.fc1, True)
        ws.copy_(self.fc2.bias.expand_as(ws))   # the output starts as fc2's bias
        return linear(h, self.fc2, False, out=ws)
