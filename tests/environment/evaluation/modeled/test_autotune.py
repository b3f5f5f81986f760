import torch

import modeled_kernels as kernels
from environment.evaluation.child import autotune
from modeled_helpers import count


def test_autotune_runs_on_cpu_and_keeps_the_config_with_the_lowest_modeled_time():
    autotune.install()
    x, y = torch.randn(1 << 14), torch.randn(1 << 14)
    out, report = count(kernels.tuned_add, x, y)
    assert torch.equal(out, x + y)
    timings = {entry["constexprs"]["BLOCK"]: entry["modeled_us"] for entry in report["autotune"]}
    assert sorted(timings) == [128, 1024, 16384]
    assert min(timings, key=timings.get) == 128
    assert kernels.tuned_add_kernel.best_config.kwargs == {"BLOCK": 128}
    # Only the chosen config's launch counts toward the forward call.
    assert [(r["name"], r["constexprs"]) for r in report["launches"]] == [("tuned_add_kernel", {"BLOCK": 128})]


def test_the_reset_triton_runs_after_benchmarking_is_tuning_and_not_counted_with_the_call():
    autotune.install()
    x = torch.randn(1 << 14)
    out, report = count(kernels.tuned_split_sum, x)
    # the benchmark runs added into `out` as well: only the reset after them makes this one sum
    assert torch.allclose(out, x.sum().reshape(1), rtol=1e-4, atol=1e-3)
    assert len(report["autotune"]) == 2
    # the call is its allocation and the chosen config's launch; no zero_ between them
    assert [r["name"] for r in report["launches"]] == ["aten.zeros.default", "tuned_split_sum_kernel"]


def test_a_benchmark_ranks_configs_on_the_sample_alone():
    # the GPU-shape replay runs a small, cheap line grid whole (line_grid.rest_of_line) and an atomic launch's split
    # columns complete; a config benchmark only ranks configs, and ran past the child's CPU limit (an honest 6-config
    # autotune) or the replay's deadline (split-K) doing so: its sample stands
    from environment.evaluation.modeled.counting import CostCounter
    from environment.evaluation.modeled.model import load_spec
    from environment.evaluation.replay.sampled import run_sampled

    def replayed(call):
        with CostCounter(sample_seed=0, sampler=run_sampled):
            call()

    def marked(run) -> int:
        out = torch.full((64,), -1.0)
        run(lambda: kernels.mark_pid_kernel[(64,)](out))
        return int((out >= 0).sum())

    def added(run) -> set:   # programs of each of 64 rows that ran, of its 8 splits adding into it
        out = torch.zeros(64)
        run(lambda: kernels.count_split_kernel[(64, 8)](out))
        return set(out.tolist())

    bench = autotune.modeled_bench(load_spec())
    assert marked(replayed) == 64 and 0 < marked(bench) < 64
    assert added(replayed) == {0.0, 8.0} and 8.0 not in added(bench) and 1.0 in added(bench)
