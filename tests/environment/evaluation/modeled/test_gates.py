"""Each gate is pinned by a real adversarial kernel or host trick."""
import torch
import triton
import triton.language as tl

import modeled_kernels as kernels
from environment.evaluation.modeled.gates import modeled_gates
from environment.evaluation.result import CompileInfo
from modeled_helpers import GELU, count, load_module


def gelu_inputs():
    gen = torch.Generator().manual_seed(1)
    return torch.randn(127, 257, generator=gen), torch.randn(257, generator=gen)


def test_fused_gelu_passes_every_gate():
    fused = load_module(GELU / "solutions" / "correct" / "triton_fused.py").ModelNew()
    _, report = count(fused, *gelu_inputs())
    assert report["provenance"] == 1.0
    assert modeled_gates(report) == []


def test_cross_program_read_after_write_without_atomics_is_flagged_as_a_race():
    x = torch.randn(1000)
    out, report = count(kernels.racy_sum, x)
    assert torch.allclose(out, x.sum().reshape(1), atol=1e-4)  # correct in the interpreter
    assert report["cross_program_raw"] == [
        {"kernel": "racy_sum_kernel", "addresses": 7, "writer_program": 1, "reader_program": 8}]
    assert modeled_gates(report) == [
        "cross_program_race: in racy_sum_kernel, program 8 reads 7 addresses that program 1 writes in the same "
        "launch; programs run concurrently on a GPU: use tl.atomic_* or a second launch"]


def test_pytorch_called_inside_a_triton_program_is_caught():
    kernels.HOST_SIDE[:] = [torch.randn(4), torch.empty(4)]
    x = torch.randn(100)

    def escape(v):
        out = torch.empty_like(v)
        kernels.aten_inside_kernel[(1,)](v, out, v.numel(), BLOCK=128)
        return out

    _, report = count(escape, x)
    assert report["aten_in_kernel"] == ["aten.copy_.default in aten_inside_kernel"]
    assert modeled_gates(report) == [
        "aten_in_kernel: PyTorch ran inside a Triton launch (aten.copy_.default in aten_inside_kernel); a kernel "
        "body (and its grid function) may only use triton.language"]


def test_a_kernel_that_fails_the_sm90_compile_denies_modeled_credit():
    report = {"launches": [{"name": "k"}], "provenance": 1.0}
    infos = [CompileInfo(kernel="k", ok=False, error="NameError('torch is not defined')")]
    assert modeled_gates(report, infos) == [
        "modeled_unavailable: kernel k does not compile for sm_90: NameError('torch is not defined')"]


@triton.jit
def _sum_in_combine(pa, na, pb, nb):
    """A combine function that reads a whole row itself: the reviewer's a76-a78 pattern."""
    offs = tl.arange(0, 1024)
    row = tl.load(pb.to(tl.pointer_type(tl.float32)) + offs, mask=offs < nb, other=0.0)
    tl.store(pb.to(tl.pointer_type(tl.float32)), tl.sum(row, axis=0))
    return pa, na


@triton.jit
def _hide_in_reduce(x_ptr, n):
    one = (tl.arange(0, 2) * 0 + 1).to(tl.int64)
    tl.reduce((one * x_ptr.to(tl.int64), one * n), 0, _sum_in_combine)


def test_memory_traffic_inside_a_reduction_combine_function_is_charged():
    x = torch.randn(1024)
    counter_bytes = count(lambda t: (_hide_in_reduce[(1,)](t, t.numel()), t)[1], x)[1]["launches"][0]
    assert counter_bytes["bytes_unique"] >= 1024 * 4, counter_bytes  # the 4 KiB row the combine read
