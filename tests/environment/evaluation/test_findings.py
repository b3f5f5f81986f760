"""Flags travel as records (name, detail, hack, layer) and each speedup kind has one label."""
from environment import feedback, reward
from environment.evaluation import flags as F
from environment.evaluation.result import (SPEEDUP_LABELS, CorrectnessResult, EvalResult, LoadResult,
                                           PerformanceResult, StaticResult)


def _result(**kw) -> EvalResult:
    return EvalResult(task_id="gelu_bias", backend="cpu", static=StaticResult(ok=True), load=LoadResult(ok=True),
                      correctness=CorrectnessResult(correct=True, trials_passed=5, trials_total=5), **kw)


def test_every_flag_is_a_record_with_its_layer_and_whether_it_is_a_hack():
    r = _result(flags=["untraced_work", "audit_event:gc.get_objects", "no_custom_kernel"])
    by_name = {f.name: f for f in r.findings}
    assert by_name["untraced_work"].hack and by_name["untraced_work"].layer == "replay"
    assert by_name["audit_event"].detail == "gc.get_objects" and not by_name["audit_event"].hack
    assert r.hacked and reward.score(r)[0] == 0.0
    assert "caught by: replay" in feedback.render(r, 0.0, {})


def test_every_named_flag_has_a_layer():
    assert set(F.LAYERS) == F.HACKS | F.WARNINGS


def test_records_survive_a_round_trip_and_are_always_rederived():
    r = _result(flags=["sandbox_violation"])
    data = r.model_dump(mode="json")
    data["findings"] = [{"name": "forged", "detail": None, "hack": False, "layer": "none"}]
    back = EvalResult.model_validate(data)
    assert back.findings == r.findings and back.hacked


def test_one_label_per_speedup_kind_everywhere():
    perf = PerformanceResult(speedup=2.0, speedup_kind="modeled")
    text = feedback.render(_result(performance=perf), 0.875, {})
    assert SPEEDUP_LABELS["modeled"] in text
    assert set(SPEEDUP_LABELS) == {"modeled", "measured_cpu", "measured_cuda"}
