"""Kernels rebuilt from the syntax tree: no submission code runs, honest styles survive."""
import ast

import pytest

from environment.evaluation.replay.rebuild import rebuild

HONEST = '''
import math
import triton
import triton.language as tl
from triton.language.extra import libdevice

LOG2E = tl.constexpr(1.0 / math.log(2.0))
BLOCK_DEFAULT: tl.constexpr = 2 ** 10
HALF = 0.5 * math.sqrt(4)


def configs():
    return [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 1024) for w in (2, 4)]


@triton.jit
def _gelu(v):
    return HALF * v * (1.0 + libdevice.erf(v * 0.7071067811865476))


@triton.autotune(configs=configs(), key=["n"])
@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr = BLOCK_DEFAULT):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, _gelu(x) + tl.exp2(x * LOG2E) * 0.0, mask=m)
'''


def test_honest_styles_rebuild_with_constants_as_literals():
    rebuilt = rebuild(HONEST)
    assert sorted(rebuilt.kernels) == ["_gelu", "kernel"] and not rebuilt.refused
    assert f"LOG2E = _kp_tl.constexpr({1.0 / __import__('math').log(2.0)!r})" in rebuilt.source
    assert "BLOCK_DEFAULT = _kp_tl.constexpr(1024)" in rebuilt.source and "HALF = 1.0" in rebuilt.source
    assert "autotune" not in rebuilt.source and "def configs" not in rebuilt.source
    ast.parse(rebuilt.source)


def test_the_same_source_gives_the_same_module():
    assert rebuild(HONEST).digest == rebuild(HONEST).digest


SIDE_EFFECTS = '''
import os
import triton
import triton.language as tl

def side(f):
    os.system("touch /tmp/pwned")
    return f

BLOCK = tl.constexpr(side(128))
x = open("/etc/passwd").read()

@side
@triton.jit
def decorated(p, BLOCK2: print("annotation ran") or tl.constexpr):
    pass

@triton.jit
def defaulted(p, n=print("default ran")):
    pass

@triton.jit
def uses_unevaluable(p):
    tl.store(p, BLOCK)

@triton.jit
def reaches_numpy(p):
    tl.store(p, np.float32(1.0))

@triton.jit
def reaches_handle(p):
    v = tl.load(p)
    v.handle.data[:] = 0

@triton.jit
def dunder(p):
    tl.store(p, p.__class__)

@triton.jit
def calls_refused(p):
    reaches_numpy(p)
'''


def test_code_that_would_run_at_definition_is_never_run_and_unsafe_bodies_are_refused():
    rebuilt = rebuild(SIDE_EFFECTS)
    assert rebuilt.kernels == ["decorated"]
    assert "side(" not in rebuilt.source and "print(" not in rebuilt.source and "open(" not in rebuilt.source
    assert "os" not in rebuilt.source.split()
    why = rebuilt.refused
    assert "default" in why["defaulted"] or "constant" in why["defaulted"]
    assert "BLOCK" in why["uses_unevaluable"]
    assert "reaches_numpy" in why  # np.float32: neither a Triton member nor a local
    assert "is not an attribute of a Triton tensor" in why["reaches_handle"]
    assert "private attribute" in why["dunder"] or "dunder" in why["dunder"]
    assert "calls reaches_numpy" in why["calls_refused"]


@pytest.mark.parametrize("expr", ["2 ** 10 ** 10", "1 << 100000", "'x' * 10 ** 9"])
def test_constant_expressions_are_bounded(expr):
    rebuilt = rebuild(f"import triton\nimport triton.language as tl\nC = {expr}\n"
                      "@triton.jit\ndef k(p):\n    tl.store(p, C)\n")
    assert rebuilt.kernels == [] and "C" in rebuilt.refused["k"]


def test_a_kernel_name_bound_twice_is_refused():
    src = "import triton\n@triton.jit\ndef k(p):\n    pass\n@triton.jit\ndef k(p):\n    pass\n"
    assert "bound more than once" in rebuild(src).refused["k"]
