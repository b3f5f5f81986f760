"""`@triton.autotune` on CPU hosts: each config is benchmarked by its modeled time.

The interpreter cannot time a config (Triton's benchmarker needs a GPU driver), and interpreter
time rewards the opposite of GPU tuning. Instead each config's launch is counted in a nested
CostCounter and modeled on the target GPU; the Autotuner keeps the lowest (first on ties).
Install once in the candidate child, before the candidate runs.
"""
from __future__ import annotations

from environment.evaluation.modeled import triton_hooks
from environment.evaluation.modeled.counting import CostCounter
from environment.evaluation.modeled.model import load_spec, model_cost
from environment.evaluation.replay import recorder
# imported here, not where it runs: a sampled launch runs inside a sandbox that reads no source files
from environment.evaluation.replay.sampled import run_sampled


def modeled_bench(spec: dict, tolerance: dict | None = None):
    """A do_bench replacement: (kernel_call, quantiles) -> [ms, ms, ms] of modeled time."""

    def bench(kernel_call, quantiles=None, **_):
        outer = triton_hooks.current()
        # a sample of the programs: at the GPU shape a whole launch is minutes
        counter = CostCounter(sample_seed=0, sampler=run_sampled)
        with recorder.paused(), counter:  # tuning is not part of the traced call
            kernel_call()
        records = counter.launch_records()
        ms = model_cost(records, spec, tolerance).time_us / 1000.0
        if isinstance(outer, CostCounter) and records:
            outer.autotune.append({"kernel": records[0]["name"], "constexprs": records[0]["constexprs"],
                                   "options": records[0]["options"], "modeled_us": ms * 1000.0})
        return [ms, ms, ms] if quantiles else ms

    return bench


def install(spec: dict | None = None, tolerance: dict | None = None) -> None:
    """Make every Autotuner benchmark configs by modeled time (idempotent)."""
    from triton.runtime.autotuner import Autotuner

    bench = modeled_bench(spec or load_spec(), tolerance)
    Autotuner.do_bench = property(lambda self: bench)
