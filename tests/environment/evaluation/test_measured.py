"""Measured speed (the CUDA host's signal, and KERNEL_ENV_CPU_SPEED=measured on a CPU host): the
evaluator's clock is the record, and work cannot be moved out of the timed call."""
import math
from dataclasses import replace

from environment import reward
from environment.config import harness_config
from environment.evaluation import flags as F
from environment.evaluation.harness import evaluate
from environment.tasks import get_task

MEASURED = replace(harness_config(), cpu_speed="measured")
GELU = get_task("gelu_bias")
TWO_OPS = next(p for p in GELU.solutions["correct"] if p.name.startswith("torch")).read_text()

DEFER_TO_FETCH = '''"""Times nothing: placeholder outputs in the timed call, the real work when the output is fetched."""
import sys
import torch
import torch.nn as nn

child = sys.modules["environment.evaluation.child.commands"]
real_time = child.cmd_time


def lazy_time(model, staged, device, skip_model=False):
    outs, _ = real_time(model, staged[:0], device, skip_model)
    return [[torch.zeros(args[0].shape)] for args in staged], 0.0


child.cmd_time = lazy_time


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias)
'''


def test_a_measured_speedup_of_the_reference_ops_is_reported_with_its_samples():
    # no range on the value: a wall-clock ratio on a shared 2-core host says nothing a test can pin
    r = evaluate(GELU, TWO_OPS, MEASURED, seed=1)
    p = r.performance
    assert r.correct and p.speedup_kind == "measured_cpu" and math.isfinite(p.speedup) and p.speedup > 0
    assert p.reference.samples == p.candidate.samples == MEASURED.timing_rounds
    assert "wall clock" in p.note


def test_skipping_the_work_in_the_timed_call_is_caught():
    r = evaluate(GELU, DEFER_TO_FETCH, MEASURED, seed=1, static_checks=False)
    assert not r.correct or F.PROTOCOL_VIOLATION in r.flags
    assert reward.score(r)[1]["speed"] == 0.0


ORDER_PROBE = '''"""Prints, in its own process, the order in which the child times, replies and hashes the outputs."""
import sys
import torch
import torch.nn as nn

child = sys.modules["environment.evaluation.child.commands"]
serve = sys.modules["environment.evaluation.child.serve"]
real_time, real_digest, real_reply = child.cmd_time, child.digest, serve.send_reply


def timed(*args, **kwargs):
    out = real_time(*args, **kwargs)
    print("event: timed call done", flush=True)
    return out


def digest(tensors):
    print("event: outputs hashed", flush=True)
    return real_digest(tensors)


def reply(fd, head, *rest):
    print(f"event: reply {head.kind}", flush=True)
    return real_reply(fd, head, *rest)


child.cmd_time, child.digest, serve.send_reply = timed, digest, reply


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias)
'''


def test_the_timed_call_ends_before_its_outputs_are_hashed():
    """The evaluator's clock runs from the Time command to the Timed reply: hashing the outputs there put
    the host's hashing speed on the clock (1.7 s a round for 256 MiB outputs on an H100 host, against a
    0.5 ms kernel: every measured speedup came out near 1). The digests are asked right after, off the clock."""
    r = evaluate(GELU, ORDER_PROBE, MEASURED, seed=1, static_checks=False)
    assert r.correct and r.performance.speedup_kind == "measured_cpu", (r.flags, r.log)
    events = [line.split("event: ", 1)[1] for line in r.log.splitlines() if line.startswith("event: ")]
    rounds = [i for i, e in enumerate(events) if e == "timed call done"]
    assert len(rounds) >= MEASURED.timing_rounds, events
    for i in rounds:   # each timed call (the model's and the loop without it) is answered before any hashing
        assert events[i + 1] == "reply timed", events[i:i + 3]
    assert "outputs hashed" in events and "reply digested" in events


LOOP_PROBE = '''"""Prints, in its own process, each Time command's skip_model (the loop without the model)."""
import sys
import torch
import torch.nn as nn

child = sys.modules["environment.evaluation.child.commands"]
real_time = child.cmd_time


def timed(model, staged, device, skip_model=False):
    print(f"event: time skip_model={skip_model}", flush=True)
    return real_time(model, staged, device, skip_model)


child.cmd_time = timed


class ModelNew(nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias)
'''


def test_the_loop_cost_subtracted_is_timed_in_the_reference_child_only():
    """The loop without the model ran in the candidate's process too, where the submission's own clock could stall
    it (red team a156: the cost subtracted from its calls inflated, they measured 2-5x faster) or raise there (a155:
    a harness error). The reference's child times it for both sides; the candidate only runs timed calls."""
    r = evaluate(GELU, LOOP_PROBE, MEASURED, seed=1, static_checks=False)
    assert r.correct and r.performance.speedup_kind == "measured_cpu", (r.flags, r.log)
    events = [line.split("event: ", 1)[1] for line in r.log.splitlines() if line.startswith("event: ")]
    assert events.count("time skip_model=False") == MEASURED.timing_rounds, events
    assert "time skip_model=True" not in events, events
