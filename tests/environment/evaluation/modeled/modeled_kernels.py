"""Test-only candidates and references for the modeled-time tests (vector add, softmax, a naive
small-tile matmul, and one adversarial fixture per gate)."""
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def vector_add(x, y, block=1024):
    out = torch.empty_like(x)
    vector_add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def naive_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, TILE: tl.constexpr):
    # One TILExTILE output tile per program, K walked TILE at a time: every program re-reads
    # whole rows of A and columns of B, so traffic grows with M*N*K/TILE.
    rm = tl.program_id(0) * TILE + tl.arange(0, TILE)
    rn = tl.program_id(1) * TILE + tl.arange(0, TILE)
    acc = tl.zeros((TILE, TILE), dtype=tl.float32)
    for k0 in range(0, K, TILE):
        rk = k0 + tl.arange(0, TILE)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def naive_matmul(a, b, tile=16):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n)
    naive_matmul_kernel[(triton.cdiv(m, tile), triton.cdiv(n, tile))](a, b, c, m, n, k, TILE=tile)
    return c


@triton.jit
def racy_sum_kernel(x_ptr, partial_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Each program writes its partial sum; the last program then reads every partial with plain
    # loads. Correct in the interpreter (programs run in order), a race on a GPU.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
    if pid == tl.num_programs(0) - 1:
        idx = tl.arange(0, BLOCK)
        parts = tl.load(partial_ptr + idx, mask=idx < tl.num_programs(0), other=0.0)
        tl.store(out_ptr, tl.sum(parts, axis=0))


def racy_sum(x, block=128):
    programs = triton.cdiv(x.numel(), block)
    partial = torch.empty(programs)
    out = torch.empty(1)
    racy_sum_kernel[(programs,)](x, partial, out, x.numel(), BLOCK=block)
    return out


@triton.jit
def aten_inside_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    HOST_SIDE[1].copy_(HOST_SIDE[0])  # a Python escape: PyTorch inside a program


HOST_SIDE = []


def gelu_on_host_numpy(x, bias):
    """The answer computed with numpy on the host and wrapped as a tensor: no kernel at all."""
    from math import erf
    v = x.numpy() + bias.numpy()
    return torch.from_numpy((0.5 * v * (1.0 + np.vectorize(erf)(v / np.sqrt(2.0)))).astype(np.float32))


def gelu_on_host_laundered(x, bias):
    """The same host answer, then copied by a counted aten op so some launch writes the output."""
    return gelu_on_host_numpy(x, bias).clone()


# One program of 16384 is occupancy-bound, 16 programs of 1024 leave most SMs idle, 128 programs
# of 128 spread the traffic: the modeled time must pick 128.
@triton.autotune(configs=[triton.Config({"BLOCK": 16384}), triton.Config({"BLOCK": 1024}),
                          triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def tuned_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def tuned_add(x, y):
    out = torch.empty_like(x)
    tuned_add_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, out, x.numel())
    return out


# Split sums accumulated by atomics into a zeroed buffer: the benchmark runs pollute it, so Triton's
# reset_to_zero zeroes it once more after benchmarking (tuning work a warmed GPU call never does).
@triton.autotune(configs=[triton.Config({"SPLIT": 2}), triton.Config({"SPLIT": 8})], key=["n"],
                 reset_to_zero=["out_ptr"])
@triton.jit
def tuned_split_sum_kernel(x_ptr, out_ptr, n, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    chunk = tl.cdiv(n, SPLIT)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(tl.program_id(0) * chunk, (tl.program_id(0) + 1) * chunk, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=(offs < n) & (offs < (tl.program_id(0) + 1) * chunk), other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def tuned_split_sum(x):
    out = torch.zeros(1, dtype=torch.float32)
    tuned_split_sum_kernel[lambda meta: (meta["SPLIT"],)](x, out, x.numel(), BLOCK=256)
    return out


@triton.jit
def mark_pid_kernel(out_ptr):
    tl.store(out_ptr + tl.program_id(0), tl.program_id(0).to(tl.float32))


@triton.jit
def count_split_kernel(out_ptr):
    tl.atomic_add(out_ptr + tl.program_id(0), 1.0)
