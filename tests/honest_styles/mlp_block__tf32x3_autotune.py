"""Two tiled GEMMs on tensor cores (tf32x3 tl.dot: fp32-accurate from three TF32 passes), each
@triton.autotune'd over tile shapes keyed on (M, N, K), grouped 1-D program order for L2 reuse; fc1 has bias +
erf GELU in its epilogue, fc2 its bias."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def linear_tf32x3(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, APPLY_GELU: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """out = act(x @ w.T + b), x: [M, K] and w: [N, K] contiguous, b: [N]."""
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = 8 * grid_n
    first_m = (pid // per_group) * 8
    size_m = tl.minimum(grid_m - first_m, 8)
    pid_m = first_m + (pid % per_group) % size_m
    pid_n = (pid % per_group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        x = tl.load(x_ptr + offs_m[:, None] * K + k[None, :], mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        w_t = tl.load(w_ptr + offs_n[None, :] * K + k[:, None], mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w_t, acc, input_precision="tf32x3")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    if APPLY_GELU:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear(x, layer, apply_gelu):
    x = x.contiguous()
    M, K = x.shape
    w = layer.weight.contiguous()
    N = w.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    linear_tf32x3[grid](x, w, layer.bias, out, M, N, K, APPLY_GELU=apply_gelu)
    return out


class ModelNew(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, x):
        return linear(linear(x, self.fc1, True), self.fc2, False)
