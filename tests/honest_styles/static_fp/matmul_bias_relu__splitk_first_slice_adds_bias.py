"""Split-K GEMM: programs (tile_m, tile_n, pid_k) each sum one K slice and tl.atomic_add it into a zeroed fp32
buffer; the pid_k == 0 slice also adds the bias, so the bias is added exactly once; ReLU runs after all slices
landed, in a second elementwise kernel (max(sum, 0) does not split over K)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

SPLIT_K = 4
BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32
RELU_BLOCK = 1024


@triton.jit
def splitk_gemm_bias_kernel(a_ptr, b_ptr, bias_ptr, acc_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            SPLIT_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    if pid_k == 0:
        bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
        acc += bias[None, :]
    tl.atomic_add(acc_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def relu_inplace_kernel(x_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        M, K = a.shape
        N = b.shape[1]
        out = torch.zeros((M, N), device=a.device, dtype=torch.float32)
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), SPLIT_K)
        splitk_gemm_bias_kernel[grid](a, b, bias, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, SPLIT_K=SPLIT_K)
        relu_inplace_kernel[(triton.cdiv(M * N, RELU_BLOCK),)](out, M * N, BLOCK=RELU_BLOCK)
        return out
