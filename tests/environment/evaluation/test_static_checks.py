"""Stage 1: the AST checks name the forbidden construct and the fix, before any code runs."""
from environment.evaluation import flags as F
from environment.evaluation.static.checks import MAX_SOURCE_BYTES, check_source

REF = """
import torch
class Model(torch.nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias)
"""
OK = """
import torch
class ModelNew(torch.nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias)
"""


def test_an_honest_submission_passes_with_no_flags():
    r = check_source(OK, REF)
    assert r.ok and r.errors == [] and r.flags == [] and not r.uses_triton


def test_empty_source_says_what_to_send():
    r = check_source("   \n", REF)
    assert not r.ok and r.errors == ["The submission is empty: send Python source that defines "
                                     "class ModelNew(torch.nn.Module)."]


def test_oversized_source_names_the_limit():
    r = check_source("#" * (MAX_SOURCE_BYTES + 1), REF)
    assert not r.ok and f"over the {MAX_SOURCE_BYTES} byte limit" in r.errors[0]


def test_non_utf8_text_is_rejected_with_the_fix():
    r = check_source("x = '\udc80'\n" + OK, REF)
    assert r.errors == ["The submission is not valid UTF-8 text: send plain Python source."]


def test_syntax_error_reports_line_and_text():
    r = check_source("import torch\nclass ModelNew(:\n", REF)
    assert not r.ok and r.errors[0].startswith("SyntaxError at line 2:")


def test_missing_model_new_is_explained():
    r = check_source("import torch\nclass Other(torch.nn.Module):\n    pass\n", REF)
    assert r.errors == ["No top-level class ModelNew found: define class ModelNew(torch.nn.Module) with the same "
                        "constructor and forward signature as the reference Model."]


def test_wrong_forward_arity_is_reported_against_the_reference():
    r = check_source(OK.replace("def forward(self, x, bias)", "def forward(self, x)"), REF)
    assert r.errors == ["ModelNew.forward takes 1 input(s) but the reference Model.forward takes 2: "
                        "use the same signature."]


def test_triton_kernels_are_listed():
    src = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x):\n    pass\n" + OK
    r = check_source(src, REF)
    assert r.ok and r.triton_kernels == ["k"] and r.uses_triton


def _flags(src: str) -> list[str]:
    return check_source(src + OK, REF).flags


def test_forbidden_imports_carry_the_module_name():
    assert _flags("import threading\n") == ["forbidden_import:threading"]
    assert _flags("from subprocess import run\n") == ["forbidden_import:subprocess"]
    assert _flags("import ctypes as c\n") == ["forbidden_import:ctypes"]


def test_monkey_patching_torch_or_time_is_flagged():
    assert _flags("import time\ntime.perf_counter = lambda: 0.0\n") == ["monkey_patch:time"]
    assert _flags("import torch\ntorch.allclose = lambda *a, **k: True\n") == ["monkey_patch:torch"]
    assert _flags("import torch.nn.functional as Fn\nFn.gelu = abs\n") == ["monkey_patch:torch.nn.functional"]


def test_try_except_and_reference_use_and_subclasses_are_flagged():
    assert _flags("try:\n    import triton\nexcept Exception:\n    pass\n") == [F.TRY_EXCEPT_FALLBACK]
    assert F.REFERENCE_MODEL_USE in _flags("from reference import Model\n")
    assert F.TENSOR_SUBCLASS in _flags("import torch\nclass Lazy(torch.Tensor):\n    pass\n")


GUARD = ("try:\n    from triton.tools.tensor_descriptor import TensorDescriptor\n    HAS_TMA = True\n"
         "except ImportError:\n    HAS_TMA = False\n")


def test_a_module_level_import_guard_is_a_version_guard_not_a_fallback():
    assert _flags(GUARD) == []
    assert _flags("try:\n    import triton.x as t\nexcept (ImportError, ModuleNotFoundError):\n    import triton as t\n"
                  "except ModuleNotFoundError:\n    pass\n") == []


def test_every_other_try_except_stays_a_fallback():
    fallback = [
        GUARD.replace("except ImportError", "except Exception"),                  # catches more than imports fail with
        GUARD.replace("except ImportError", "except (ImportError, RuntimeError)"),
        GUARD.replace("except ImportError", "except"),                            # bare
        GUARD.replace("HAS_TMA = False", "HAS_TMA = bool(0)"),                     # a call in the handler
        GUARD.replace("HAS_TMA = True", "HAS_TMA = torch.ones(1)"),               # a call in the body
        GUARD.replace("HAS_TMA = False", "HAS_TMA = other"),                       # not a literal
        GUARD.replace("HAS_TMA = True\n", "HAS_TMA = True\n    launch()\n"),
        "try:\n    HAS_TMA = True\nexcept ImportError:\n    pass\n",                 # no import in the body
        GUARD + "else:\n    HAS_TMA = 2\n", GUARD + "finally:\n    pass\n",
        "def load():\n" + "".join("    " + line + "\n" for line in GUARD.splitlines()),  # inside a function
        "if True:\n" + "".join("    " + line + "\n" for line in GUARD.splitlines()),
    ]
    for src in fallback:
        assert F.TRY_EXCEPT_FALLBACK in _flags(src), src
    nested = check_source("def load():\n" + "".join("    " + line + "\n" for line in GUARD.splitlines()), REF)
    assert any("only allowed at module level" in e for e in nested.errors), nested.errors
    # the imports inside a guard are checked like every other
    assert _flags("try:\n    import ctypes\nexcept ImportError:\n    pass\n") == ["forbidden_import:ctypes"]


def test_frame_and_environment_access_is_flagged():
    assert _flags("import sys\nf = sys._getframe\n") == ["forbidden_call:_getframe"]
    assert _flags("import os\nsecret = os.environ\n") == ["forbidden_call:environ"]
    assert _flags("x = eval('1')\n") == ["forbidden_call:eval"]
    assert _flags("fh = open('/tmp/x', 'w')\n") == ["forbidden_call:open"]


def test_torchscript_tasks_on_the_inter_op_pool_are_threads():
    # inside TorchScript torch.jit._fork runs its task on another thread (red team a154), however it is named
    assert _flags("import torch\nf = torch.jit._fork\n") == ["forbidden_call:_fork"]
    assert _flags("import torch\nf = torch.jit.fork\n") == ["forbidden_call:fork"]
    assert _flags("from torch.jit import _fork as spawn\n") == ["forbidden_import:torch.jit._fork"]
    assert _flags("from torch.jit._async import fork\n") == ["forbidden_import:torch.jit._async"]


def test_every_flag_found_is_a_hack_flag():
    for src in ("import gc\n", "import time\ntime.sleep = None\n", "try:\n    pass\nexcept Exception:\n    pass\n"):
        assert all(F.is_hack(f) for f in _flags(src))


# --- rules checked by meaning, not spelling (issue 10) ------------------------------------------

def test_a_forbidden_builtin_used_as_a_value_is_flagged_not_only_when_called_by_name():
    assert _flags("f = exec\nf('1')\n") == ["forbidden_call:exec"]
    assert _flags("def g(code, e=eval):\n    return e(code)\n") == ["forbidden_call:eval"]
    assert _flags("r = list(map(eval, ['1']))\n") == ["forbidden_call:eval"]
    assert _flags("h = lambda: [compile for _ in range(2)]\n") == ["forbidden_call:compile"]
    assert _flags("class C:\n    opener = open\n") == ["forbidden_call:open"]


def test_a_forbidden_builtin_used_as_a_value_names_the_line_and_the_rule():
    r = check_source("import torch\nrunner = exec\n" + OK, REF)
    assert r.errors == ["line 2: exec is used as a value (stored, passed or given as a default); a forbidden "
                        "builtin may not be referred to at all"]


def test_a_parameter_or_local_named_like_a_builtin_is_not_the_builtin():
    assert _flags("def g(input):\n    return input + 1\n") == []
    assert _flags("class A:\n    def m(self, input):\n        return [input for _ in range(2)]\n") == []
    assert _flags("def outer():\n    open = 1\n    def inner():\n        return open\n    return inner\n") == []
    assert _flags("compile = 3\ndef f():\n    return compile\n") == []


def test_every_binding_target_that_writes_into_a_library_is_monkey_patching():
    assert _flags("import torch\nfor torch.allclose in [abs]:\n    pass\n") == ["monkey_patch:torch"]
    assert _flags("import torch\nimport contextlib\nwith contextlib.nullcontext() as torch.testing:\n"
                  "    pass\n") == ["monkey_patch:torch"]
    assert _flags("import torch\ntorch.allclose: object = None\n") == ["monkey_patch:torch"]
    assert _flags("import torch\nx = [0 for torch.allclose in [1]]\n") == ["monkey_patch:torch"]
    assert _flags("import torch\na, *torch.isclose = 1, 2, 3\n") == ["monkey_patch:torch"]
    assert _flags("import torch\ndel torch.allclose\n") == ["monkey_patch:torch"]
    assert _flags("async def f(it):\n    import time\n    async for time.perf_counter in it:\n        pass\n") == [
        "monkey_patch:time"]


def test_assigning_into_a_variable_or_attribute_that_holds_a_library_is_monkey_patching():
    assert _flags("import torch\nt = torch.testing\nt.assert_close = print\n") == ["monkey_patch:torch.testing"]
    assert _flags("import torch\nclass A:\n    def __init__(self):\n        self.m = torch\n"
                  "        self.m.allclose = print\n") == ["monkey_patch:torch"]
    assert _flags("import time\nfor clock in (time,):\n    clock.perf_counter = abs\n") == ["monkey_patch:time"]


def test_binding_a_plain_name_only_shadows_and_aliases_used_for_reading_are_fine():
    assert _flags("(y := 3)\nfor i in range(2):\n    pass\nimport torch.nn.functional as F\nact = F.gelu\n") == []
    assert _flags("import torch\nclass B(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                  "        self.act = torch.nn.functional.gelu\n        self.scale = 2.0\n") == []


def test_an_exit_method_that_can_return_true_is_a_try_except_fallback():
    swallowing = "class S:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return {}\n"
    for value in ("True", "1", "self.ok", "bool(a)"):
        assert _flags(swallowing.format(value)) == [F.TRY_EXCEPT_FALLBACK], value
    r = check_source(swallowing.format("True") + OK, REF)
    assert r.errors == ["line 4: an __exit__ of class S can return a true value; a context manager whose __exit__ "
                        "returns True swallows the exception (a try/except fallback in disguise). An __exit__ may "
                        "only return nothing, None or False"]


def test_an_exit_method_that_returns_only_nothing_none_or_false_is_a_known_safe_context_manager():
    for body in ("pass", "return", "return None", "return False", "self.done = True"):
        assert _flags(f"class S:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n"
                      f"        {body}\n") == [], body


def test_an_exit_that_cannot_be_read_as_a_plain_method_is_a_fallback():
    assert _flags("class S:\n    __exit__ = lambda self, *a: True\n") == [F.TRY_EXCEPT_FALLBACK]
    assert _flags("class S:\n    pass\nS.__exit__ = print\n") == [F.TRY_EXCEPT_FALLBACK]
    assert _flags("S = type('S', (), {'__exit__': lambda *a: 1})\n") == [F.TRY_EXCEPT_FALLBACK]


def test_exception_swallowers_of_contextlib_are_flagged_however_they_are_reached():
    assert _flags("from contextlib import suppress as quietly\n") == [F.TRY_EXCEPT_FALLBACK]
    assert _flags("import contextlib\nq = contextlib.suppress\n") == [F.TRY_EXCEPT_FALLBACK]
    assert _flags("import contextlib\nwith contextlib.ExitStack() as stack:\n    pass\n") == [F.TRY_EXCEPT_FALLBACK]
    assert _flags("import contextlib\nwith contextlib.nullcontext():\n    pass\n") == []


def test_return_break_or_continue_in_finally_discards_the_exception_and_is_a_fallback():
    loop = "def f():\n    for i in range(2):\n        try:\n            pass\n        finally:\n            {}\n"
    for stmt in ("break", "continue", "return 1"):
        assert _flags(loop.format(stmt)) == [F.TRY_EXCEPT_FALLBACK], stmt
    assert _flags("def f():\n    try:\n        pass\n    finally:\n        for i in range(2):\n            break\n") == []
    assert _flags("def f():\n    try:\n        pass\n    finally:\n        print('done')\n") == []
