"""Prompt building and reply parsing for model players (environment/agent.py)."""
from environment.agent import (MAX_CODE_CHARS, SYSTEM_PROMPT, build_messages, feedback_message, parse_reply,
                               summarize_action)
from environment.models import KernelObservation

MODULE = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, bias):\n        return x + bias\n"


def reset_observation(**fields):
    base = dict(task_id="gelu_bias", difficulty="easy", prompt="Fuse a bias add and GELU.",
                reference_code="class Model(torch.nn.Module):\n    pass", turn=0, max_turns=3)
    base.update(fields)
    return KernelObservation(**base)


def step_observation(**fields):
    base = dict(turn=1, compiled=True, correct=False, trials_passed=2, trials_total=5, score=0.15,
                feedback="Trial 3 mismatched at [0, 5]: expected 1.0, got 0.0. Mask the tail.")
    base.update(fields)
    return reset_observation(**base)


# ---- build_messages ----------------------------------------------------------------------------

def test_first_prompt_has_the_system_rules_the_task_line_the_task_text_and_the_reference():
    messages = build_messages(reset_observation())
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM_PROMPT
    for rule in ("ModelNew", "same", "device", "Triton", "```python"):
        assert rule in SYSTEM_PROMPT
    user = messages[1]["content"]
    assert user.splitlines()[0] == "Task: gelu_bias"
    assert "submission 1 of 3" in user
    assert "Fuse a bias add and GELU." in user
    assert "```python\nclass Model(torch.nn.Module):\n    pass\n```" in user
    assert "Feedback" not in user and "best submission" not in user


def test_reference_already_inside_the_task_text_is_not_repeated():
    obs = reset_observation(prompt="Task text.\n\nclass Model(torch.nn.Module):\n    pass\n")
    assert build_messages(obs)[1]["content"].count("class Model(") == 1


def test_later_prompt_carries_the_feedback_the_best_code_and_the_last_code_when_they_differ():
    best = MODULE.replace("x + bias", "x * 1 + bias")
    user = build_messages(step_observation(turn=2), best_code=best, best_score=0.4, last_code=MODULE,
                          history=[step_observation(turn=1, score=0.4, correct=True, speedup=1.5,
                                                    speedup_kind="modeled")])[1]["content"]
    assert "submission 3 of 3" in user
    assert "- turn 1: score 0.40, correct, speedup 1.50x (modeled)" in user
    assert "Result: turn 2: score 0.15, incorrect (2/5 trials)" in user
    assert "Mask the tail." in user
    assert "Your best submission so far (score 0.40):\n```python\n" + best in user
    assert "Your last submission:\n```python\n" + MODULE in user


def test_prompt_explains_why_the_last_reply_was_unusable():
    user = build_messages(reset_observation(), last_error="the reply has no code block defining class ModelNew")
    assert "Your last reply could not be used: the reply has no code block defining class ModelNew" in user[1]["content"]


def test_prompt_accepts_the_dict_form_of_an_observation():
    obs = step_observation()
    assert build_messages(obs.model_dump(), best_code=MODULE) == build_messages(obs, best_code=MODULE)


def test_huge_best_code_is_clipped_with_an_omission_marker():
    user = build_messages(step_observation(), best_code="x = 1\n" * 10000)[1]["content"]
    assert f"[... {60000 - MAX_CODE_CHARS} characters omitted]" in user
    assert len(user) < MAX_CODE_CHARS + 5000


def test_feedback_message_names_the_error_and_the_flags():
    text = feedback_message(step_observation(error="SyntaxError: invalid syntax (line 3)\nsecond line",
                                             flags=["forbidden_import"], score=0.0))
    assert text.startswith("Result: turn 1: score 0.00, error: SyntaxError: invalid syntax (line 3) second line, "
                           "flags: forbidden_import\n\n")


# ---- parse_reply -------------------------------------------------------------------------------

def test_a_single_fenced_block_is_the_code():
    parsed = parse_reply(f"Here you go:\n```python\n{MODULE}```\nIt fuses the ops.")
    assert (parsed.code, parsed.error, parsed.origin) == (MODULE, None, "fenced block 1 of 1")


def test_the_last_block_defining_modelnew_wins_over_earlier_drafts_and_later_usage_examples():
    draft = MODULE.replace("x + bias", "x")
    reply = (f"Draft:\n```python\n{draft}```\nBetter:\n```py\n{MODULE}```\n"
             "Usage:\n```python\nm = ModelNew()\nprint(m(x, b))\n```\n")
    parsed = parse_reply(reply)
    assert parsed.code == MODULE
    assert parsed.origin == "fenced block 2 of 3"


def test_a_block_that_parses_is_preferred_over_a_later_one_that_does_not():
    reply = f"```python\n{MODULE}```\nor\n```python\nclass ModelNew(torch.nn.Module:\n    pass\n```"
    assert parse_reply(reply).code == MODULE


def test_a_reply_without_fences_that_defines_modelnew_is_used_without_its_prose():
    parsed = parse_reply("Sure, here is the code.\n" + MODULE + "\nThis avoids a second pass over memory.")
    assert (parsed.code, parsed.origin) == (MODULE, "whole reply")


def test_think_sections_are_ignored_even_when_they_contain_code():
    reply = f"<think>\nMaybe:\n```python\nclass ModelNew: pass\n```\n</think>\n```python\n{MODULE}```"
    assert parse_reply(reply).code == MODULE


def test_reasoning_whose_opening_tag_was_eaten_is_dropped_up_to_the_closing_tag():
    reply = f"I think\n```python\nclass ModelNew: pass\n```\n</think>\n\n```python\n{MODULE}```"
    assert parse_reply(reply).code == MODULE


def test_a_reply_cut_off_inside_thinking_explains_the_likely_fix():
    parsed = parse_reply("<think>\nLet me consider the memory traffic of")
    assert parsed == parse_reply("<think>\nLet me consider the memory traffic of")
    assert (parsed.code, parsed.error) == (None, "the reply ended inside a <think> section (raise max_tokens)")


def test_windows_line_endings_become_unix_ones():
    parsed = parse_reply(("Code:\n```python\n" + MODULE + "```\n").replace("\n", "\r\n"))
    assert parsed.code == MODULE
    assert "\r" not in parsed.code


def test_a_block_cut_off_by_the_token_limit_is_still_taken():
    assert parse_reply("```python\n" + MODULE).code == MODULE


def test_tilde_fences_and_untagged_fences_are_recognised():
    assert parse_reply(f"~~~\n{MODULE}~~~").code == MODULE
    assert parse_reply(f"```\n{MODULE}```").code == MODULE


def test_prose_without_code_is_an_error_not_code():
    parsed = parse_reply("I would fuse the two kernels and mask the tail.")
    assert (parsed.code, parsed.error) == (None, "the reply has no code block defining class ModelNew")


def test_code_blocks_without_modelnew_are_reported_as_such():
    parsed = parse_reply("```python\nclass Model(torch.nn.Module):\n    pass\n```\n```bash\npip install triton\n```")
    assert (parsed.code, parsed.error) == (None, "none of the 2 code blocks defines class ModelNew")


def test_empty_and_missing_replies_are_errors():
    assert parse_reply(None).error == "the reply was empty"
    assert parse_reply("  \n").error == "the reply was empty"


# ---- summarize_action --------------------------------------------------------------------------

def test_action_summary_is_a_short_hash_the_size_and_the_line_count():
    assert summarize_action("print('hi')\n") == "sha=caf026f2 bytes=12 lines=1"
    assert summarize_action(MODULE) == summarize_action(MODULE)
    assert "\n" not in summarize_action(MODULE)
    assert summarize_action(None) == "none"
