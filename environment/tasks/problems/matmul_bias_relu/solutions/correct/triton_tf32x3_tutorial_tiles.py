"""Tiled Triton matmul with the bias add and ReLU fused into the epilogue, on the tensor cores (tl.dot with
input_precision="tf32x3": three TF32 products, about fp32 accuracy, so the fp32 contract holds), in the matmul
tutorial's shape: 128 x 128 x 32 tiles on 8 warps where the grid still fills the H100's 132 SMs, programs
grouped along M so neighbouring programs share B tiles in L2, pointers advanced by a K step.
The tile table is mlp_block's triton_fused_tf32x3 (measured 1.54x over cuBLAS fp32 on an H100 at shapes this
task shares); triton_tf32x3.py's 64 x 64 x 64 tiles on 4 warps measured 0.615x."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

SMS = 132
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages), largest first: 128 x 128 x 32 on 8 warps (tf32x3's split
# operands fit in 254 registers on sm_90, no spills), smaller tiles where the big ones leave SMs idle
TILES = ((128, 128, 32, 8, 3), (64, 64, 64, 8, 3), (32, 64, 64, 4, 3), (32, 32, 64, 4, 3), (16, 32, 64, 4, 3),
         (16, 16, 64, 4, 3))
GROUP_M = 8


@triton.jit
def matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            EVEN_K: tl.constexpr, GROUP_M: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    group_size = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * grid_n)) % group_size
    pid_n = (pid % (GROUP_M * grid_n)) // group_size
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # rows and columns past the edge read row M-1 / column N-1 again (clamped): their results are never stored
    rows = tl.minimum(offs_m, M - 1)
    cols = tl.minimum(offs_n, N - 1)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    out = tl.maximum(acc + tl.load(bias_ptr + cols)[None, :], 0.0)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, out,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        M, K = a.shape
        N = b.shape[1]
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = next(
            (t for t in TILES if triton.cdiv(M, t[0]) * triton.cdiv(N, t[1]) >= SMS), TILES[-1])
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        matmul_bias_relu_kernel[grid](a, b, bias, out, M, N, K,
                                      a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                      out.stride(0), out.stride(1),
                                      EVEN_K=K % BLOCK_K == 0, GROUP_M=GROUP_M,
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                      num_warps=warps, num_stages=stages)
        return out
