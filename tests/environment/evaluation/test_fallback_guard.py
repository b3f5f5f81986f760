"""The run-time backing of the no-fallback rule (fallback_guard.py), in this process: an exception
that leaves a guarded block and is swallowed is recorded; the iteration protocol and honest code are not."""
from __future__ import annotations

import textwrap

from environment.evaluation.child.fallback_guard import RECORDER, compile_guarded

SOURCE = textwrap.dedent('''
    import contextlib
    import triton


    def suppressed(x):
        """Docstrings stay docstrings."""
        with contextlib.suppress(ZeroDivisionError):
            return 1 / x
        return -1


    def finally_break():
        for _ in range(1):
            try:
                return 1 / 0
            finally:
                break
        return -1


    def honest(x):
        gen = (i * x for i in range(3))
        total = sum(gen)
        default = getattr(x, "missing", 5)
        first = next(iter([]), 7)
        return total + default + first


    @triton.jit
    def kernel(x):
        pass
''')


def _load():
    code, guards = compile_guarded(SOURCE, "submission.py")
    namespace = dict(guards)
    exec(code, namespace)
    return namespace


def _run(fn, *args):
    RECORDER.begin()
    try:
        return fn(*args), RECORDER.end()
    finally:
        RECORDER.active = False


def test_an_exception_swallowed_by_a_with_or_a_finally_break_is_recorded_with_its_line():
    ns = _load()
    assert _run(ns["suppressed"], 0) == (-1, ["ZeroDivisionError: division by zero at line 9"])
    assert _run(ns["finally_break"]) == (-1, ["ZeroDivisionError: division by zero at line 16"])


def test_honest_code_and_the_iteration_protocol_record_nothing():
    ns = _load()
    assert _run(ns["suppressed"], 2) == (0.5, [])
    assert _run(ns["honest"], 2) == (18, [])
    assert ns["suppressed"].__doc__ == "Docstrings stay docstrings."


def test_triton_kernels_are_left_as_written_for_the_jit_to_reparse():
    ns = _load()
    assert ns["kernel"].fn.__code__.co_firstlineno == SOURCE.splitlines().index("@triton.jit") + 1


def test_nothing_is_recorded_outside_a_trial_call():
    ns = _load()
    RECORDER.active = False
    assert ns["suppressed"](0) == -1 and RECORDER.seen == []
