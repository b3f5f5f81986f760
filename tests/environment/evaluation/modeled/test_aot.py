"""The sm_90 ahead-of-time compile gate, on a CPU-only host (bundled ptxas)."""
import pytest
import torch

from environment.evaluation.modeled import aot
from environment.evaluation.replay.rebuild import rebuild
from modeled_helpers import GELU, count, load_module

FUSED = GELU / "solutions" / "correct" / "triton_fused.py"


@pytest.fixture(scope="module")
def fused_signatures():
    _, report = count(load_module(FUSED).ModelNew(), torch.randn(127, 257), torch.randn(257))
    return report["kernels"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(aot, "CACHE_DIR", tmp_path_factory.getbasetemp() / "aot_cache")


def test_launch_signature_matches_what_the_jit_would_specialise(fused_signatures):
    assert fused_signatures == [{
        "name": "gelu_bias_kernel",
        "signature": {"x_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32", "N": "i32",
                      "BLOCK": "constexpr"},
        "constexprs": {"BLOCK": 1024}, "aligned": ["x_ptr", "b_ptr", "out_ptr"], "options": {}}]


def test_fused_gelu_compiles_for_sm90_and_reports_registers(fused_signatures):
    [info] = aot.compile_kernels(rebuild(FUSED.read_text()), fused_signatures, timeout_s=120)
    assert info.ok, info.error
    assert info.kernel == "gelu_bias_kernel"
    assert 8 <= info.registers <= 255
    assert info.spills == 0 and info.shared_bytes == 0


def test_a_second_compile_of_the_same_source_is_served_from_the_cache(fused_signatures):
    first = aot.compile_kernels(rebuild(FUSED.read_text()), fused_signatures)
    assert list(aot.CACHE_DIR.glob("*.json"))
    assert aot.compile_kernels(rebuild(FUSED.read_text()), fused_signatures) == first


def test_a_python_escape_inside_a_kernel_body_is_never_rebuilt_nor_compiled(fused_signatures):
    escaped = FUSED.read_text().replace("tl.store(out_ptr + offs, y, mask=mask)",
                                        "tl.store(out_ptr + offs, torch.sigmoid(y), mask=mask)")
    rebuilt = rebuild(escaped)
    assert rebuilt.kernels == [] and "`torch` is neither a local" in rebuilt.refused["gelu_bias_kernel"]
    [info] = aot.compile_kernels(rebuilt, fused_signatures, timeout_s=120)
    assert not info.ok and "is not a kernel rebuilt from the source" in info.error


def test_malformed_launch_signatures_from_the_child_are_refused():
    [info] = aot.compile_kernels(rebuild(FUSED.read_text()), [{"name": "gelu_bias_kernel; rm -rf /", "signature": {}}])
    assert not info.ok and info.error == "bad kernel name 'gelu_bias_kernel; rm -rf /'"


def test_a_kernel_that_crashes_the_compiler_natively_fails_to_compile_and_is_not_a_harness_error(fused_signatures):
    # LLVM's report_fatal_error on an inline-asm string naming a missing operand aborts the worker (SIGABRT),
    # reachable from a branch the interpreter never takes: the crash is the submission's, not the environment's
    crashing = FUSED.read_text().replace(
        "tl.store(out_ptr + offs, y, mask=mask)",
        "if n_elements < 0:\n        y = tl.inline_asm_elementwise(\"mov.b32 $0, $7;\", \"=r,r\", [y], dtype=tl.float32, "
        "is_pure=True, pack=1)\n    tl.store(out_ptr + offs, y, mask=mask)")
    assert crashing != FUSED.read_text()
    [info] = aot.compile_kernels(rebuild(crashing), fused_signatures, timeout_s=120)
    assert not info.ok and "crashed the sm_90 compiler" in info.error and "exited with -6" in info.error
    assert not list(aot.CACHE_DIR.glob("*.json")) or all("crashed" not in p.read_text()
                                                         for p in aot.CACHE_DIR.glob("*.json"))


def test_the_trusted_canary_compiles_in_a_fresh_worker():
    request = {"arch": 90, "max_shared_bytes": 232448}
    assert aot._canary_fails(request, timeout_s=120) is None
