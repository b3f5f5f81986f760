"""The GPU-shape inputs are made where they are used (the reference's child, the replayer) from a plan:
the same tensors the evaluator's make_inputs makes, a fingerprint that tells them apart, and a
mismatch between the two makers that is the environment's (model-shape price), never the submission's."""
import pytest
import torch

from environment.evaluation.evaluator.inputs import fingerprint, make_inputs, planned_inputs
from environment.evaluation.evaluator.gpu_shape import GpuRun, price
from environment.evaluation.transport.protocol import InputPlan, Replayed
from environment.tasks import GRADED_TASKS, get_task


def _plan(task, seed: int) -> InputPlan:
    return InputPlan(code=task.reference_code, derived=task.derived, shape=dict(task.cpu_shapes[0]), seed=seed,
                     cap_bytes=1 << 28)


@pytest.mark.parametrize("task_id", GRADED_TASKS)
def test_planned_inputs_are_what_the_evaluator_makes(task_id):
    task = get_task(task_id)
    made = planned_inputs(_plan(task, 1234))
    expected = make_inputs(task.load_reference(), dict(task.cpu_shapes[0]), "normal", 1234)
    assert len(made) == len(expected)
    assert all(a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(made, expected))
    assert fingerprint(made) == fingerprint(expected)
    assert fingerprint(planned_inputs(_plan(task, 1235))) != fingerprint(made)


def test_fingerprint_sees_one_changed_element_of_the_sample_and_the_geometry():
    x = torch.randn(4, 1 << 17)
    y = x.clone()
    y.view(-1)[0] += 1.0  # the first element is always in the sample
    assert fingerprint([x]) != fingerprint([y])
    assert fingerprint([x]) != fingerprint([x.reshape(8, 1 << 16)])


def _gpu(replayer: Replayed) -> GpuRun:
    return GpuRun(shape={"M": 8}, trace=object(), fingerprint="a" * 64, replayer_inputs=replayer)


@pytest.mark.parametrize("said", [dict(fingerprint="b" * 64), dict(sampled_inputs_error="MemoryError: no room")])
def test_inputs_the_two_makers_disagree_on_are_the_environments(said):
    """A task whose get_inputs is not a function of the seed, or a replayer that cannot make them:
    the model-shape price stands (no flag), whatever the replay did."""
    replayer = Replayed(kind="replayed", nonce="", ok=True, **said)
    priced = price(None, _gpu(replayer), head=None, checked=[], spec={}, tolerance={}, validate=None)
    assert priced.flag is None and priced.candidate is None and not priced.capped
    assert "inputs" in priced.why


@pytest.mark.parametrize("gpu", [
    GpuRun(shape={"M": 8}, why="the reference stopped there (timed out)", provoked=True),
    GpuRun(shape={"M": 8}, trace=object(), fingerprint="a" * 64, replayer_inputs=Replayed(
        kind="replayed", nonce="", ok=True, sampled_inputs_error="the sampler stopped before its first reply: killed")),
    GpuRun(shape={"M": 8}, trace=object(), fingerprint="a" * 64, replayer_inputs=None)])
def test_a_failure_on_the_harness_side_after_the_submission_ran_there_earns_no_credit(gpu):
    """The reference stopping at the GPU shape, or the sampler dying before it said which inputs it made,
    happens after the submission's code ran there (time and memory it shares): the model-shape price, which
    can be the higher one, does not stand; no speed credit (and no hack flag)."""
    priced = price(None, gpu, head=None, checked=[], spec={}, tolerance={}, validate=None)
    assert priced.denied and priced.flag is None and priced.candidate is None
