"""jit helpers called from a kernel (tl.sum is one) no longer re-patch the language on every call
under the interpreter: the same results, a handful of patch scans per launch instead of several per call."""
import torch
import triton
import triton.language as tl
import triton.runtime.interpreter as interp

from environment.evaluation.child import gpu_numerics


@triton.jit
def _row_sums(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0), axis=0)
    tl.store(out_ptr + row, total)


def test_helper_calls_inside_a_launch_skip_the_patch_scan(monkeypatch):
    gpu_numerics.install()
    scans = []
    original = interp._patch_builtin
    monkeypatch.setattr(interp, "_patch_builtin", lambda *a: scans.append(a[0]) or original(*a))
    x = torch.randn(4, 1000)
    out = torch.empty(4)
    for _ in range(2):  # the second launch finds tl.core patched by the first's helper call: still patched
        scans.clear()
        _row_sums[(4,)](x, out, 1000, BLOCK=64)
        torch.testing.assert_close(out, x.sum(dim=1), rtol=1e-5, atol=1e-4)
    calls = 4 * 16  # tl.sum calls of the launch: each used to scan three or four modules
    assert len(scans) <= 8 < calls
