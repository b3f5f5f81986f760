"""`@triton.autotune` on CPU hosts: each config is benchmarked by its modeled time.

The interpreter cannot time a config (Triton's benchmarker needs a GPU driver), and interpreter
time rewards the opposite of GPU tuning. Instead each config's launch is counted in a nested
CostCounter and modeled on the target GPU; the Autotuner keeps the lowest (first on ties).
Install once in the candidate child, before the candidate runs.
"""
from __future__ import annotations

import functools

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
        # a sample of the programs: at the GPU shape a whole launch is minutes; ranking configs, not pricing the
        # launch, its sample stands (an honest 6-config autotune ran past the child's CPU limit running small grids
        # whole, and a split-K one past the replay's deadline completing its split columns)
        counter = CostCounter(sample_seed=0, sampler=functools.partial(run_sampled, exact=False))
        with recorder.paused(), counter:  # tuning is not part of the traced call
            kernel_call()
        records = counter.launch_records()
        ms = model_cost(records, spec, tolerance).time_us / 1000.0
        launches = [r for r in records if "constexprs" in r]  # not a config pre-hook's aten ops
        if isinstance(outer, CostCounter) and launches:
            outer.autotune.append({"kernel": launches[0]["name"], "constexprs": launches[0]["constexprs"],
                                   "options": launches[0]["options"], "modeled_us": ms * 1000.0})
        return [ms, ms, ms] if quantiles else ms

    return bench


def _tuning_reset(hook):
    """An Autotuner pre-hook whose `reset_only=True` call, made once after benchmarking to undo what the
    benchmark runs wrote into `reset_to_zero` arguments, is tuning too: not part of the traced call
    (a warmed call on the GPU never runs it), so neither counted nor recorded, like the benchmark."""

    def pre_hook(kwargs, reset_only=False):
        if not reset_only:
            return hook(kwargs)
        with recorder.paused(), CostCounter():
            return hook(kwargs, reset_only=True)

    pre_hook.tuning_reset_of = hook
    return pre_hook


def _pre_hook_property():
    def get(self):
        if "_pre_hook" not in self.__dict__:  # an Autotuner made before install()
            set_(self, self.__dict__["pre_hook"])
        return self.__dict__["_pre_hook"]

    def set_(self, hook):
        self.__dict__["_pre_hook"] = hook if hasattr(hook, "tuning_reset_of") else _tuning_reset(hook)

    return property(get, set_)


def install(spec: dict | None = None, tolerance: dict | None = None) -> None:
    """Make every Autotuner benchmark configs by modeled time, its post-benchmark reset uncounted
    (idempotent; before the candidate's decorators run)."""
    from triton.runtime.autotuner import Autotuner

    bench = modeled_bench(spec or load_spec(), tolerance)
    Autotuner.do_bench = property(lambda self: bench)
    Autotuner.pre_hook = _pre_hook_property()
