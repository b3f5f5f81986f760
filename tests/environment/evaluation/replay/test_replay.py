"""Trusted accounting pieces on their own: the trace recorder, the replay, the cost checks, the seeds."""
import math

import pytest
import torch
from pydantic import ValidationError

from environment.evaluation.evaluator.inputs import seed_plan
from environment.evaluation.modeled.counting import CostCounter
from environment.evaluation.modeled.model import load_spec, model_cost
from environment.evaluation.evaluator.credit import validate_cost
from environment.evaluation.replay.execute import Replay, ReplayError
from environment.evaluation.replay.recorder import TraceRecorder
from environment.evaluation.replay.trace import Trace
from environment.evaluation.result import LaunchCost, ModeledCost

SPEC = load_spec()


def record(fn, *inputs):
    with torch.no_grad(), TraceRecorder(list(inputs)) as rec:
        out = fn(*inputs)
    return rec.finish([out])


def replay(trace, inputs, constants, kernels=None):
    counter = CostCounter()
    with torch.no_grad(), counter:
        outputs = Replay(trace, inputs, constants, kernels, [], counter).run()
    return outputs, counter.report(outputs)


def test_a_pytorch_call_replays_on_other_inputs_and_is_counted_by_the_replay():
    weight = torch.randn(64)
    fn = lambda x: torch.nn.functional.gelu(x + weight) * 2.0  # noqa: E731
    x = torch.randn(8, 64)
    trace, constants = record(fn, x)
    assert [s.op for s in trace.steps] == ["aten.add.Tensor", "aten.gelu.default", "aten.mul.Tensor"]
    assert len(constants) == 1 and trace.unreplayable is None  # the weight travels as a constant
    other = torch.randn(8, 64)
    (out,), report = replay(Trace.model_validate(trace.model_dump(mode="json")), [other], constants)
    torch.testing.assert_close(out, fn(other))
    assert len(report["launches"]) == 3


def test_an_output_written_behind_the_tensors_back_does_not_replay():
    def host(x):
        out = torch.zeros_like(x)
        out.numpy()[:] = (x.numpy() * 3.0)
        return out
    x = torch.randn(4, 4)
    trace, constants = record(host, x)
    (out,), _ = replay(trace, [torch.randn(4, 4)], constants)
    assert torch.count_nonzero(out) == 0  # only the traced zero fill is replayed


def test_memory_nobody_wrote_reads_as_nan_in_a_replay():
    trace, constants = record(lambda x: torch.empty_like(x), torch.randn(3))
    (out,), _ = replay(trace, [torch.randn(3)], constants)
    assert torch.isnan(out).all()


def test_custom_operators_and_values_of_unknown_types_make_a_trace_unreplayable():
    @torch.library.custom_op("kp_test::double", mutates_args=())
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    trace, _ = record(double, torch.randn(3))
    assert "not an aten operator" in trace.unreplayable


def test_a_forged_trace_is_refused_on_receipt_or_fails_to_replay():
    trace, constants = record(lambda x: x + 1, torch.randn(3))
    data = trace.model_dump(mode="json")
    with pytest.raises(ValidationError):
        Trace.model_validate(dict(data, steps=[dict(data["steps"][0], time_us=-1.0)]))
    with pytest.raises(ValidationError):
        Trace.model_validate(dict(data, outputs=[dict(data["outputs"][0], storage=-1)]))
    forged = dict(data, outputs=[dict(data["outputs"][0], size=[10**6])])
    with pytest.raises(ReplayError):
        replay(Trace.model_validate(forged), [torch.randn(3)], constants)
    denied = dict(data, steps=[dict(data["steps"][0], op="aten.from_file.default")])
    with pytest.raises(ReplayError):
        replay(Trace.model_validate(denied), [torch.randn(3)], constants)


def _cost(*launches: LaunchCost) -> ModeledCost:
    return ModeledCost(target="t", time_us=math.fsum(l.time_us for l in launches), launches=list(launches))


@pytest.mark.parametrize("launch,why", [
    (LaunchCost(name="k", time_us=-5.0, bytes_unique=4096), "negative or non-finite"),
    (LaunchCost(name="k", time_us=float("nan"), bytes_unique=4096), "negative or non-finite"),
    (LaunchCost(name="k", time_us=0.1, bytes_unique=4096), "below the launch overhead"),
    (LaunchCost(name="k", time_us=5.0, bytes_unique=16), "fewer bytes than the outputs"),
])
def test_impossible_costs_are_refused(launch, why):
    assert why in validate_cost(_cost(launch), output_bytes=1024, spec=SPEC)


def test_a_possible_cost_passes():
    assert validate_cost(_cost(LaunchCost(name="k", time_us=5.0, bytes_unique=4096)), 1024, SPEC) is None
    assert "launched nothing" in validate_cost(model_cost([], SPEC), 1024, SPEC)


def test_seeds_of_one_evaluation_are_independent_labels():
    plan = seed_plan(b"secret", 0, "gelu_bias", "", 5)
    values = [*plan["trials"], plan["init"], plan["counted"], plan["heldout"]]
    assert len(set(values)) == len(values)
    assert plan["counted"] not in (plan["init"] ^ 0x5EED, (plan["init"] ^ 0x5EED) % 2**31)
    assert seed_plan(b"secret", 0, "gelu_bias", "", 5) == plan
    assert seed_plan(b"other", 0, "gelu_bias", "", 5)["heldout"] != plan["heldout"]


def test_a_call_holding_too_many_constant_tensors_is_unreplayable():
    from environment.evaluation.replay.trace import MAX_CONSTANTS
    tables = [torch.full((1,), float(i)) for i in range(MAX_CONSTANTS + 1)]

    def add_all(x):
        for table in tables:
            x = x + table
        return x

    trace, constants = record(add_all, torch.randn(3))
    assert "more than 1024 distinct constant tensors" in trace.unreplayable
