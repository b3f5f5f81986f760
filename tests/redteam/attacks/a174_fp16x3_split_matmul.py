"""fp16x3: each fp32 operand split into two fp16 halves (22 bits), three fp16 tensor-core passes priced at the fp16 rate (twice tf32x3's) now that fp16 operands convert exactly: judged on fp16's range as an H100 would (extreme rows overflow)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    low = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        a_hi = a.to(tl.float16)
        b_hi = b.to(tl.float16)
        a_lo = ((a - a_hi.to(tl.float32)) * 2048.0).to(tl.float16)  # the next 11 bits, scaled into fp16's range
        b_lo = ((b - b_hi.to(tl.float32)) * 2048.0).to(tl.float16)
        acc = tl.dot(a_hi, b_hi, acc)
        low = tl.dot(a_hi, b_lo, low)
        low = tl.dot(a_lo, b_hi, low)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = tl.maximum(acc + low * (1.0 / 2048.0) + bias[None, :], 0.0)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, out,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        M, K = a.shape
        N = b.shape[1]
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 64
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        matmul_bias_relu_kernel[grid](a, b, bias, out, M, N, K,
                                      a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                      out.stride(0), out.stride(1),
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
        return out
