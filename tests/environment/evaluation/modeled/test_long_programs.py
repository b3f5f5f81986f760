"""The sampler's memory-instruction stop (replay/sampled.py: LONG_PROGRAMS) as the GPU-shape verdict reads it: the
model's limit, a capped model-shape price only for a launch whose grid fills the GPU, and the launch found by the
replay's own step prefix and the trace's grid, never by what the message says."""
from environment.evaluation.evaluator.gpu_shape import GpuRun, _long_programs, judge
from environment.evaluation.replay.sampled import CLAIMED, LONG_PROGRAMS, MODEL_LIMIT
from environment.evaluation.replay.trace import AtenStep, LaunchStep, Trace


def _gpu(*grids):
    steps = [AtenStep(op="aten.zeros.default", args=[[8]])] + [LaunchStep(kernel="k", grid=g, args=[]) for g in grids]
    return GpuRun(shape={"M": 1}, trace=Trace(storages=[], steps=steps, outputs=[]))


def _stop(step: int, said: str = "a program of k (one of 132) runs past 4096 memory instructions") -> str:
    return f"step {step} (launch of k) failed: RuntimeError: {MODEL_LIMIT} ({LONG_PROGRAMS}): {said}"


class _Head:
    sampled_error = ""
    sampled_report = None


def test_the_launchs_grid_comes_from_the_trace_not_the_message():
    gpu = _gpu((132, 1, 1), (2, 1, 1), (4, 6, 8))
    assert _long_programs(_stop(1), gpu)[0] == 132
    assert _long_programs(_stop(2), gpu)[0] == 2          # the message says 132: the trace says 2
    assert _long_programs(_stop(3), gpu)[0] == 192
    assert _long_programs(_stop(0), gpu) is None           # an aten step has no grid
    assert _long_programs(_stop(9), gpu) is None           # no such step
    # the text only counts where the replay put it: after its own step prefix, from a RuntimeError
    assert _long_programs("InterpreterError: " + _stop(1), gpu) is None
    assert _long_programs(_stop(1).replace("RuntimeError", "InterpreterError"), gpu) is None
    assert _long_programs("step 1 (launch of k) failed: RuntimeError: something else", gpu) is None


def test_the_stop_is_named_as_the_models_limit_and_a_small_grid_says_why_it_gets_no_price():
    head = _Head()
    head.sampled_error = _stop(1)
    flag, why = judge(None, head, [], _gpu((132, 1, 1)), 132)
    assert flag is None and why.startswith(MODEL_LIMIT) and "idle" not in why
    head.sampled_error = _stop(1, "a program of k (one of 132) runs past 32768 memory instructions")
    flag, why = judge(None, head, [], _gpu((2, 1, 1)), 132)
    assert flag is None and why.startswith(MODEL_LIMIT) and "its 2 programs leave 130 of the GPU's 132 SMs idle" in why


def test_tiles_claimed_from_a_counter_say_why_they_get_no_price():
    head = _Head()
    head.sampled_error = _stop(1, "a program of k (one of 132) runs past 4096 memory instructions at the GPU shape, a "
                                  f"loop over many tiles per program ({CLAIMED})")
    flag, why = judge(None, head, [], _gpu((132, 1, 1)), 132)
    assert flag is None and why.startswith(MODEL_LIMIT) and "one program claims every tile" in why
