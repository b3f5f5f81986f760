"""The playground's pure renderers and input checks, without a browser or a server."""
from __future__ import annotations

import pandas as pd
import pytest

from environment.evaluation.result import (CorrectnessResult, EvalResult, LoadResult, Mismatch, PerformanceResult,
                                           StaticResult, TimingStats)
from environment.trajectory import EpisodeRecord, Message, StepRecord
from ui import charts, episode_view, markup, step_view, verdict
from ui.app import checked_seed, default_example, example_choices, example_code
from ui.players import ModelSettings, resolve_token
from ui.session import PlayError, env_base_url


def step(n: int = 1, *, correct: bool = True, speedup=None, kind=None, timings=True, flags=(), reward=None,
         mismatch: bool = False, error=None) -> StepRecord:
    perf = None
    if correct:
        perf = PerformanceResult(
            speedup=speedup, speedup_kind=kind, note=None if speedup else "Modeled GPU time is not available",
            reference=TimingStats(median_ms=2.0, min_ms=1.8, max_ms=2.5, std_ms=0.2, samples=5) if timings else None,
            candidate=TimingStats(median_ms=1.0, min_ms=0.9, max_ms=1.4, std_ms=0.1, samples=5) if timings else None)
    m = Mismatch(trial=2, distribution="wide", shape={"M": 3, "N": 5}, indices=[[0, 1], [2, 4]],
                 expected=[1.0, 2.0], actual=[1.5, float("nan")], max_abs_error=0.5, mean_abs_error=0.1,
                 mismatched=2, total=15) if mismatch else None
    ev = EvalResult(task_id="gelu_bias", backend="cpu", static=StaticResult(ok=True), load=LoadResult(ok=True),
                    correctness=CorrectnessResult(correct=correct, trials_passed=5 if correct else 2, trials_total=5,
                                                  max_abs_error=0.0 if correct else 0.5, atol=1e-5, rtol=1e-5,
                                                  mismatch=m),
                    performance=perf, flags=list(flags), log="printed by the kernel\n")
    breakdown = {"compiled": 0.1, "trials": 0.3 if correct else 0.12, "correct": 0.1 if correct else 0.0,
                 "speed": 0.25 if speedup else 0.0}
    score = round(sum(breakdown.values()), 6)
    obs = {"task_id": "gelu_bias", "compiled": True, "correct": correct, "trials_passed": 5 if correct else 2,
           "trials_total": 5, "speedup": speedup, "speedup_kind": kind, "flags": list(flags),
           "reward_breakdown": breakdown, "score": score, "feedback": "Correctness: fine", "error": error}
    return StepRecord(step=n, code="class ModelNew: pass\n", observation=obs, evaluation_json=ev.model_dump_json(),
                      reward=score if reward is None else reward, env_latency_ms=512.0)


def test_badges_show_each_stage_with_its_state():
    html = step_view.badges_html(step(speedup=1.5, kind="measured_cpu"))
    for stage, state in (("static", "pass"), ("compiled", "pass"), ("correct", "pass"), ("performance", "pass")):
        assert f'data-stage="{stage}" data-state="{state}"' in html
    assert "1.50x (measured, CPU wall clock)" in html
    assert 'data-env-ms="512.0"' in html


def test_badges_mark_performance_not_reached_when_wrong():
    html = step_view.badges_html(step(correct=False, mismatch=True))
    assert 'data-stage="correct" data-state="fail"' in html and "2/5 trials" in html
    assert 'data-stage="performance" data-state="skip"' in html


def test_badges_of_a_model_turn_without_code_name_the_cause():
    html = step_view.badges_html(StepRecord(step=1, error="the reply has no code block defining class ModelNew"))
    assert 'data-stage="player" data-state="fail"' in html and "no code block" in html


def test_breakdown_chart_parts_sum_to_the_score():
    s = step(speedup=1.0, kind="modeled")
    html = charts.breakdown_chart_html(s)
    assert 'data-score="0.7500"' in html
    assert "Score 0.750 = 0.100 + 0.300 + 0.100 + 0.250" in html  # three significant digits
    assert html.count("<title>") == 2 * 4  # four parts, in the desktop and the phone drawing


def test_timing_chart_says_whether_the_speedup_was_measured_or_modeled():
    assert "modeled (H100 roofline estimate, not measured): speedup 2.00x" in charts.timing_chart_html(
        step(speedup=2.0, kind="modeled"))
    measured = charts.timing_chart_html(step(speedup=2.0, kind="measured_cuda"))
    assert "measured with CUDA events" in measured and "2.00e+03 µs" not in measured and "2000 µs" in measured
    assert "whiskers: min to max" in measured and 'class="kp-whisker"' in measured
    modeled = charts.timing_chart_html(step(speedup=2.0, kind="modeled"))  # deterministic: no dispersion marks
    assert 'class="kp-whisker"' not in modeled and "kp-svg-band" not in modeled and "1000 µs" in modeled
    assert " ms" not in modeled.replace("µs", "")  # microseconds everywhere
    assert 'width="640"' in modeled and "time per forward call (µs" in modeled  # fixed size, axis title
    missing = charts.timing_chart_html(step(timings=False))
    assert "Timings: not available" in missing and "Modeled GPU time is not available" in missing


def test_mismatch_table_lists_indices_values_and_errors():
    s = step(correct=False, mismatch=True)
    frame = step_view.mismatch_frame(s)
    assert list(frame.columns) == step_view.MISMATCH_COLUMNS
    assert frame.iloc[0].tolist() == ["(0, 1)", 1.0, 1.5, 0.5]
    assert frame.iloc[1]["abs error"] == float("inf")  # NaN output counts as an unbounded error
    summary = step_view.mismatch_summary(s)
    assert "First failing trial 2" in summary and "max abs error 0.5" in summary and "mean abs error 0.1" in summary


def test_flags_separate_hacks_from_warnings():
    html = step_view.flags_html(step(flags=("decoy_kernel", "no_custom_kernel")))
    assert "hack: decoy_kernel" in html and "warning: no_custom_kernel" in html
    assert "No flags" in step_view.flags_html(step())


def test_log_collects_captured_output():
    assert "printed by the kernel" in step_view.log_text(step())


def test_timeline_and_scores_track_the_best_so_far():
    record = EpisodeRecord(task_id="gelu_bias", seed=1, player="human", max_turns=3,
                           steps=[step(1, correct=False, mismatch=True), step(2), step(3, reward=0.2)])
    record.refresh()
    frame = episode_view.timeline_frame(record)
    assert frame["best so far"].tolist() == ["0.220", "0.500", "0.500"]
    assert frame["verdict"].tolist()[:2] == ["wrong 2/5", "correct"]
    scores = charts.scores_frame([("episode", record)])
    assert set(scores["series"]) == {"score", "best so far"} and len(scores) == 6
    both = charts.scores_frame([("A", record), ("B", record)])
    assert set(both["series"]) == {"A", "B"}
    assert episode_view.best_step(record).step == 2


def test_winner_is_the_best_score_then_the_earlier_step():
    def rec(rewards):
        r = EpisodeRecord(task_id="t", steps=[StepRecord(step=i + 1, code="x", reward=v) for i, v in enumerate(rewards)])
        r.refresh()
        return r
    assert 'data-winner="A: you"' in episode_view.winner_html(("A: you", rec([0.1, 0.5])), ("B: m", rec([0.4])))
    assert 'data-winner="B: m"' in episode_view.winner_html(("A: you", rec([0.1, 0.5])), ("B: m", rec([0.5])))
    assert 'data-winner="tie"' in episode_view.winner_html(("A", rec([0.5])), ("B", rec([0.5])))
    assert "No result yet" in episode_view.winner_html(("A", None), ("B", rec([0.5])))


def test_prompt_and_reply_views_of_a_model_step():
    s = StepRecord(step=1, code="x", prompt_messages=[Message(role="system", content="be fast"),
                                                       Message(role="user", content="Task: gelu_bias")],
                   raw_reply="```python\nx\n```")
    assert "── user ──\nTask: gelu_bias" in step_view.prompt_text(s)
    assert step_view.reply_text(s).startswith("```python")
    assert "a person played" in step_view.prompt_text(step())


def test_renderers_accept_no_step():
    for fn in (step_view.badges_html, charts.timing_chart_html, charts.breakdown_chart_html, step_view.log_text, step_view.feedback_text):
        assert isinstance(fn(None), str)
    assert isinstance(step_view.mismatch_frame(None), pd.DataFrame)


def test_status_escapes_html():
    assert "&lt;script&gt;" in markup.status_html("<script>", "error")


@pytest.mark.parametrize("value, message", [(None, "enter a seed"), (-3, "from 0 to"), (1.5, "whole number"),
                                            (2**31, "from 0 to")])
def test_bad_seeds_are_refused_with_the_valid_range(value, message):
    with pytest.raises(PlayError, match=message):
        checked_seed(value)
    assert checked_seed(7.0) == 7


@pytest.mark.parametrize("args, message", [(("", None, 0.2, 100), "choose a model"),
                                           (("m", "ftp://x", 0.2, 100), "must start with http"),
                                           (("m", None, 3.0, 100), "temperature"),
                                           (("m", None, 0.2, 5), "max tokens")])
def test_model_settings_are_checked(args, message):
    with pytest.raises(PlayError, match=message):
        ModelSettings.checked(*args)
    assert ModelSettings.checked("m", "", 0.2, 100).base_url == "https://router.huggingface.co/v1"


def test_token_falls_back_to_the_space_secret_only_for_the_router(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_space_secret")
    assert resolve_token("  ") == "hf_space_secret"
    assert resolve_token("", "https://router.huggingface.co/v1") == "hf_space_secret"
    assert resolve_token("typed") == "typed"
    # a visitor's own endpoint never receives the Space owner's token
    assert resolve_token("", "http://attacker.example:8080/v1") is None
    assert resolve_token("", "https://router.huggingface.co.evil.example/v1") is None
    assert resolve_token("mine", "http://127.0.0.1:9/v1") == "mine"


def test_hub_push_never_uses_the_space_secret(monkeypatch):
    from ui.players import typed_token
    monkeypatch.setenv("HF_TOKEN", "hf_space_secret")
    assert typed_token("") is None and typed_token("  hf_mine  ") == "hf_mine"


def test_env_url_follows_the_port_the_request_came_in_on(monkeypatch):
    monkeypatch.delenv("KERNEL_PLAYGROUND_ENV_URL", raising=False)

    class Raw:
        scope = {"server": ("10.0.0.5", 7860)}

    class Req:
        request = Raw()

    assert env_base_url(Req()) == "http://127.0.0.1:7860"
    monkeypatch.setenv("KERNEL_PLAYGROUND_ENV_URL", "http://elsewhere:1/")
    assert env_base_url(Req()) == "http://elsewhere:1"


def test_examples_come_from_the_shipped_solutions():
    keys = [v for _, v in example_choices("gelu_bias")]
    assert "correct/torch_two_ops.py" in keys and any(k.startswith("wrong/") for k in keys)
    assert default_example("gelu_bias").startswith("correct/triton_")
    assert "class ModelNew" in example_code("gelu_bias", "correct/torch_two_ops.py")
    with pytest.raises(PlayError):
        example_code("gelu_bias", "correct/missing.py")


def test_score_chart_draws_one_line_per_series_on_a_zero_to_one_axis():
    record = EpisodeRecord(task_id="gelu_bias", steps=[step(1, correct=False, mismatch=True), step(2)])
    record.refresh()
    html = charts.scores_chart_html([("episode", record)])
    assert 'data-points="4"' in html and html.count("<polyline") == 2 * 2  # two series, desktop and phone drawing
    assert 'data-series="best so far"' in html and "step 2: 0.50" in html
    two = charts.scores_chart_html([("A: you", record), ("B: m", record)], "Score per turn")
    assert 'data-series="A: you"' in two and 'data-series="B: m"' in two
    assert "no steps yet" in charts.scores_chart_html([])


def test_hub_push_problems_become_clear_messages(monkeypatch):
    from ui import replay_export
    record = EpisodeRecord(task_id="gelu_bias", steps=[step(1)])
    with pytest.raises(PlayError, match="owner/name"):
        replay_export.push([record], "no-slash", "hf_x", True)
    with pytest.raises(PlayError, match="token with write access"):
        replay_export.push([record], "me/ds", None, True)
    with pytest.raises(PlayError, match="no episodes"):
        replay_export.push([], "me/ds", "tok", True)

    def refused(*args, **kwargs):
        raise RuntimeError("push to me/ds failed: 401 Unauthorized")
    monkeypatch.setattr(replay_export, "push_to_hub", refused)
    with pytest.raises(PlayError, match="push to me/ds failed: 401"):
        replay_export.push([record], "me/ds", "tok", True)


def test_unreadable_replay_files_are_refused_with_the_reason(tmp_path):
    from ui.replay_export import load_replay
    with pytest.raises(PlayError, match="choose an exported"):
        load_replay(None)
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(PlayError, match="not an episode export"):
        load_replay(str(tmp_path / "x.csv"))
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    with pytest.raises(PlayError, match="cannot replay x.parquet"):
        load_replay(str(tmp_path / "x.parquet"))
    (tmp_path / "e.jsonl").write_text('{"task": 1}\n')
    with pytest.raises(PlayError, match="not an episode record"):
        load_replay(str(tmp_path / "e.jsonl"))


def test_modeled_costs_and_sm90_compile_are_shown_per_launch_and_per_kernel():
    from environment.evaluation.result import CompileInfo, LaunchCost, ModeledCost, PerformanceResult
    from ui.costs import cost_breakdown_html
    perf = PerformanceResult(
        speedup=2.0, speedup_kind="modeled",
        modeled_candidate=ModeledCost(target="H100 SXM", time_us=2.15, launches=[
            LaunchCost(name="gelu_bias_kernel", programs=63, bytes_unique=516000, bytes_sectors=516096,
                       flops={"fp32": 1.6e6}, time_us=2.15, bound="launch")]),
        modeled_reference=ModeledCost(target="H100 SXM", time_us=4.3, launches=[
            LaunchCost(name="aten.add.Tensor", bytes_unique=516000, time_us=2.15, bound="launch"),
            LaunchCost(name="aten.gelu.default", bytes_unique=512000, time_us=2.15, bound="launch")]),
        compile=[CompileInfo(kernel="gelu_bias_kernel", ok=True, registers=31, spills=0, shared_bytes=0),
                 CompileInfo(kernel="bad", ok=False, error="unsupported AST node")])
    out = cost_breakdown_html(perf)
    assert 'data-launches="1"' in out and 'data-launches="2"' in out
    assert "gelu_bias_kernel</td><td>63</td>" in out and "1.6 M fp32" in out and "<td>launch</td>" in out
    assert "<td>31</td><td>0</td><td>0 B</td>" in out and "unsupported AST node" in out
    assert cost_breakdown_html(None) == ""


# ---- one verdict per step, the same in every view ---------------------------------------------

def hack_step(flag: str = "decoy_kernel", static_ok: bool = True) -> StepRecord:
    """A hack whose trials all matched (the decoy) or whose static checks failed (try/except)."""
    static = StaticResult(ok=static_ok, errors=[] if static_ok else ["line 12: try/except around a kernel launch"],
                          flags=[] if static_ok else [flag])
    ev = EvalResult(task_id="gelu_bias", backend="cpu", static=static,
                    load=LoadResult(ok=True) if static_ok else None,
                    correctness=CorrectnessResult(correct=False, trials_passed=5, trials_total=5) if static_ok else None,
                    flags=[flag] if static_ok else [])
    obs = {"compiled": static_ok, "correct": False, "trials_passed": 5 if static_ok else 0,
           "trials_total": 5 if static_ok else 0, "flags": [flag], "feedback": "Correctness: WRONG — 5/5 trials passed",
           "reward_breakdown": {}}
    return StepRecord(step=1, code="x", observation=obs, evaluation_json=ev.model_dump_json(), reward=0.0)


@pytest.mark.parametrize("flag, static_ok, layer", [("decoy_kernel", True, "runtime-check"),
                                                     ("try_except_fallback", False, "static")])
def test_a_hack_is_one_red_verdict_everywhere_with_its_layer_and_rule(flag, static_ok, layer):
    s = hack_step(flag, static_ok)
    v = verdict.verdict_of(s)
    assert v.kind == "hack" and v.title == f"reward hack detected: {flag}, score 0"
    assert f"caught by the {layer} layer" in v.detail and flag in v.detail
    html = step_view.badges_html(s)
    assert 'data-verdict="hack"' in html and f'data-layer="{layer}"' in html and "kp-v-hack" in html
    assert "✘ <b>Correct</b> <small>void: reward hack" in html  # never a green "5/5 trials" under a hack
    assert 'data-stage="performance" data-state="skip"' in html and "did not load" not in html
    assert step_view.feedback_text(s).startswith(f"Verdict: reward hack detected: {flag}, score 0")
    record = EpisodeRecord(task_id="gelu_bias", seed=0, player="human", max_turns=2, steps=[s])
    record.refresh()
    assert episode_view.timeline_frame(record)["verdict"].tolist() == [f"hack: {flag}"]
    assert f"Step 1 of 1: reward hack detected: {flag}, score 0" in step_view.step_header(s, record)


def test_wrong_failed_correct_and_environment_error_each_have_their_own_verdict():
    assert (verdict.verdict_of(step(correct=False, mismatch=True)).kind, verdict.verdict_of(step(correct=False)).style) == \
        ("wrong", "warn")
    assert verdict.verdict_of(step(correct=False)).title == "wrong: 2/5 trials passed, score 0.220"
    ok = verdict.verdict_of(step(speedup=1.234, kind="modeled"))
    assert ok.kind == "correct" and ok.style == "ok" and "1.23x faster (modeled H100 estimate)" in ok.title
    failed = StepRecord(step=1, code="x", reward=0.0, observation={"compiled": False},
                        evaluation_json=EvalResult(task_id="t", backend="cpu", static=StaticResult(ok=True),
                                                   load=LoadResult(ok=False, error="NameError: tl\nmore")
                                                   ).model_dump_json())
    v = verdict.verdict_of(failed)
    assert (v.kind, v.style, v.detail, v.short) == ("failed", "muted", "NameError: tl", "did not load")
    harness = StepRecord(step=1, code="x", reward=None, observation={"outcome": "harness_error"},
                         evaluation_json=EvalResult(task_id="t", backend="cpu", static=StaticResult(ok=True),
                                                    outcome="harness_error", harness_error="pool died"
                                                    ).model_dump_json())
    v = verdict.verdict_of(harness)
    assert v.kind == "harness" and v.title == "no score (environment error)" and "pool died" in v.detail
    assert 'data-stage="correct" data-state="skip"' in step_view.badges_html(harness)


def test_the_failing_line_is_named_in_the_verdict_and_handed_to_the_line_marker():
    code = "import torch\n\nx = tl.arange(0, 4)\nclass ModelNew(torch.nn.Module):\n    pass\n"
    failed = StepRecord(step=1, code=code, reward=0.0, observation={"compiled": False},
                        evaluation_json=EvalResult(task_id="t", backend="cpu", static=StaticResult(ok=True),
                                                   load=LoadResult(ok=False, error="NameError: name 'tl' is not "
                                                                   "defined (line 3: `x = tl.arange(0, 4)`)", line=3)
                                                   ).model_dump_json())
    v = verdict.verdict_of(failed)
    assert v.line == 3 and v.title == "failed to load at line 3, score 0.00"
    assert 'data-line="3" data-line-text="x = tl.arange(0, 4)"' in step_view.badges_html(failed)
    static = StaticResult(ok=False, errors=["line 2: try/except is not allowed"], flags=["try_except_fallback"],
                          line=2, flag_lines={"try_except_fallback": 2})
    hack = StepRecord(step=1, code="import torch\n  try:  <b>\n", reward=0.0, observation={"compiled": False},
                      evaluation_json=EvalResult(task_id="t", backend="cpu", static=static).model_dump_json())
    v = verdict.verdict_of(hack)
    assert v.kind == "hack" and v.line == 2 and v.detail.startswith("caught by the static layer at line 2: ")
    assert 'data-line="2" data-line-text="try:  &lt;b&gt;"' in step_view.verdict_html(hack)  # escaped
    # A line the code does not have (or no line at all) is never marked.
    beyond = hack.model_copy(update={"code": "x"})
    assert "data-line" not in step_view.verdict_html(beyond)
    assert "data-line" not in step_view.verdict_html(step(correct=False, mismatch=True))


def test_numbers_have_three_significant_digits():
    from ui.verdict import num, us
    assert [num(x) for x in (0.875, 0.5, 1.0, 12.345, 2000.0, 123456.0, None)] == \
        ["0.875", "0.500", "1.00", "12.3", "2000", "123000", "–"]
    assert us(0.00431) == "4.31 µs"


def test_why_this_speedup_names_the_bound_of_each_launch_and_a_plain_verdict():
    from environment.evaluation.result import LaunchCost, ModeledCost
    from ui.roofline import why_html
    two = ModeledCost(target="H100", time_us=4.4, launches=[
        LaunchCost(name="add_kernel", bytes_unique=4096, flops={"fp32": 512}, time_us=2.2, bound="launch"),
        LaunchCost(name="gelu_kernel", bytes_unique=4096, flops={"fp32": 2048}, time_us=2.2, bound="launch")])
    big = ModeledCost(target="H100", time_us=40.0, launches=[
        LaunchCost(name="fused", bytes_unique=64 * 2**20, flops={"fp32": 1e6}, time_us=40.0, bound="memory")])
    html = why_html(PerformanceResult(speedup=0.5, speedup_kind="modeled", modeled_reference=big,
                                      modeled_candidate=two))
    assert "Why this speedup: launch-bound: fuse the 2 launches into one" in html
    assert html.count("<circle") == 2 * 3 and 'data-bound="launch"' in html and "FLOP per byte" in html
    mem = why_html(PerformanceResult(speedup=2.0, speedup_kind="modeled", modeled_reference=two,
                                     modeled_candidate=big))
    assert "memory-bound: 64.0 MiB moved at up to 3.35 TB/s" in mem
    assert why_html(PerformanceResult(speedup=2.0, speedup_kind="measured_cuda")) == ""


def test_step_diffs_ranking_and_leaderboard():
    from ui import compare as cmp
    a, b = step(1), step(2, reward=0.9)
    b = b.model_copy(update={"code": "class ModelNew: pass\n# faster\n"})
    record = EpisodeRecord(task_id="gelu_bias", seed=1, player="human", max_turns=3, steps=[a, b])
    record.refresh()
    assert "+# faster" in step_view.step_diff(record, b) and "first submission" in step_view.step_diff(record, a)
    model = EpisodeRecord(task_id="gelu_bias", seed=1, player="model", model="m/x", max_turns=3, steps=[step(1)])
    model.refresh()
    html = episode_view.ranking_html(cmp.ranking([("A: you", record), ("B: m/x", model)]))
    assert 'data-winner="A: you"' in html and "best 0.900 at step 2" in html
    board = cmp.leaderboard([record, model, model])
    assert board["player"].tolist() == ["person", "m/x"] and board["episodes"].tolist() == [1, 2]
    assert board["steps to best"].tolist() == [2, 1]


def test_every_modeled_speedup_carries_the_models_measured_fidelity_and_the_figures_are_the_docs():
    from pathlib import Path
    from ui import fidelity
    modeled = step(speedup=2.0, kind="modeled")
    assert 'class="kp-fidelity"' in step_view.verdict_html(modeled)
    assert "Modeled, not measured" in step_view.verdict_html(modeled)
    assert 'class="kp-fidelity"' not in step_view.verdict_html(step(speedup=2.0, kind="measured_cuda"))
    # The in-page figures are the row of docs/fidelity.md for the pricing the reward uses by default.
    doc = (Path(__file__).resolve().parents[2] / "docs" / "fidelity.md").read_text()
    row = f"| {fidelity.PROGRAMS} | {fidelity.SPEARMAN} | " + " | ".join(v for _, v in fidelity.BY_LEVEL)
    assert row + f" | {fidelity.PAIRS} |" in doc


def test_charts_are_drawn_at_a_desktop_and_a_phone_width():
    html = charts.timing_chart_html(step(speedup=2.0, kind="modeled"))
    assert html.count('class="kp-svg kp-svg-wide"') == 1 and html.count('class="kp-svg kp-svg-narrow"') == 1
    assert 'viewBox="0 0 340 ' in html and 'viewBox="0 0 640 ' in html


def test_a_harmless_attack_is_labelled_harmless_with_why_wherever_it_is_shown():
    from ui import gallery
    from ui.gallery_tab import attack_choices, gallery_html
    a = gallery.by_name("a11_cache_by_shape")  # harmless, wrong: partial trial credit at most
    assert a.verdict == "harmless" and a.correct is False
    assert (f"attack: {a.name} (harmless: earns no more than honest work)", f"attack/{a.file}") in example_choices(
        a.task)
    assert any(name == a.name and "harmless: earns no more than honest work" in label
               for label, name in attack_choices())
    row = gallery_html().split(f'data-attack="{a.name}"')[1].split("</tr>")[0]
    assert "harmless: earns no more than honest work" in row and "partial credit" in row
    played = step(correct=False, reward=0.16).model_copy(update={"code": a.code()})
    banner = step_view.verdict_html(played)
    assert f'data-harmless="{a.name}"' in banner
    assert "harmless: earns no more than honest work. It scored 0.160, more than an honest broken kernel" in banner
    assert 'data-harmless' not in step_view.verdict_html(step(correct=False, reward=0.16))  # honest code: no label
