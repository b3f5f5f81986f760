"""CostCounter: counts one forward call (Triton launches and aten ops) for the modeled time.

Used inside the candidate child:

    counter = CostCounter()
    with counter:
        out = model(*inputs)
    report = counter.report(outputs=[out])   # JSON-serialisable, sent to the evaluator

The report's `launches` feed model.model_cost; the rest feeds gates.modeled_gates and the AOT
compile (aot.compile_kernels takes `kernels`).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable

import torch
from torch.utils._pytree import tree_leaves

from environment.evaluation.modeled import triton_hooks
from environment.evaluation.modeled.memory import (SECTOR, ProvenanceLedger, intervals_of, one_interval, overlap,
                                                   tensor_interval)
from environment.evaluation.modeled.torch_counting import AtenCounter, aten_records, classify
from environment.evaluation.modeled.triton_launch import TritonLaunch, launch_signature

REPORT_VERSION = 1
# (executor, args, kwargs, counter, seed) -> the (addresses, itemsize) of every store the sampled programs made
Sampler = Callable[[Any, tuple, dict, "CostCounter", int], list]
AtenReads = Callable[["CostCounter", str, Any], None]


class CostCounter:
    def __init__(self, lifts_are_copies: bool = False, sample_seed: int | None = None,
                 sampler: Sampler | None = None, aten_reads: AtenReads | None = None) -> None:
        """lifts_are_copies: charge `torch.tensor(...)`-style lifts as copies (the replay, where a
        lift copies a constant of the trace; never free data movement). sample_seed and sampler, given
        together: run a sample of each launch's programs and scale its counts to the grid (the sampler
        is replay/sampled.py's run_sampled; the GPU-shape replay and autotune benchmarks), keeping no
        per-element load addresses (no cross-program race check) and every store's addresses in `stores`.
        aten_reads: called with (this counter, op name, sectors read) before an aten op counts (the sampled replay's
        check that no aten op reads what a sampled launch it cannot follow stores: replay/sampled.py)."""
        if (sample_seed is None) != (sampler is None):
            raise ValueError("a sampled CostCounter needs both sample_seed and sampler "
                             "(replay/sampled.py's run_sampled); a full count needs neither")
        self.lifts_are_copies = lifts_are_copies
        self.sample_seed = sample_seed
        self.sampler = sampler
        self.aten_reads = aten_reads
        self.addresses = sample_seed is None
        self.stores: list = []
        self.store_order: list[int] = []   # per store, the order (in sampled_launches) of the launch it is of
        self.sampled_launches: list = []   # per sampled launch, its coverage.SampledStores
        self.producers: list = []          # sampled launches with unrun programs (replay/closure.py)
        self.output_coverage: list[float] = []   # per output, set by the sampled replay (replay/sampled.py)
        self.output_meta: list[list] = []        # per output, [shape, dtype] of what the sampled replay returns
        self.launch: TritonLaunch | None = None   # the Triton launch running now
        self.finished: TritonLaunch | None = None  # the last one that ended (a sampled replay scales it)
        self._outer: list[TritonLaunch | None] = []
        self.records: list[dict] = []
        self.kernels: dict[str, dict] = {}        # distinct launch signatures, by canonical key
        self.aten_in_kernel: list[str] = []
        self.races: list[dict] = []
        self.write_races: list[str] = []          # set by the sampled replay (replay/sampled.py): gpu_numerics' words
        self.autotune: list[dict] = []
        self.ledger = ProvenanceLedger()
        self._mode = AtenCounter(self)
        self._paused = 0

    @contextmanager
    def paused(self):
        """Ops inside are harness bookkeeping (a replay building its arguments), not the call's work."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def __enter__(self) -> "CostCounter":
        triton_hooks.push(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        triton_hooks.pop(self)

    # --- Triton side (called by triton_hooks) -------------------------------------------------
    def run_launch(self, executor, args, kwargs, call):
        """One Triton launch (`call` is the interpreter's own): a launch from host code runs a sample of
        its programs when this counter samples; any other runs and is counted whole."""
        if self.sampler is not None and self.launch is None:
            log = self.sampler(executor, args, kwargs, self, self.sample_seed)
            self.stores.extend(log)   # the sampler listed the launch among sampled_launches: its order is the last
            self.store_order.extend([len(self.sampled_launches) - 1] * len(log))
            return None
        self.launch_begin(executor, args, kwargs)
        try:
            return call(executor, *args, **kwargs)
        finally:
            self.launch_end()

    def launch_begin(self, executor, args, kwargs) -> None:
        signature = launch_signature(executor, args, kwargs)
        key = repr(sorted((k, repr(v)) for k, v in signature.items()))
        self.kernels.setdefault(key, signature)
        if self.launch is not None:  # launched from a program body or grid function: host code in a kernel
            self.aten_in_kernel.append(f"triton launch {signature['name']} in {self.launch.name}")
        self._outer.append(self.launch)
        self.launch = TritonLaunch(signature["name"], signature, self.addresses)

    def launch_end(self) -> None:
        launch, self.launch = self.launch, self._outer.pop()
        self.finished = launch
        record, reads, writes = launch.finish()
        launch.reads, launch.writes = reads, writes
        record["dirty_read_bytes"] = self.ledger.launch(record["name"], intervals_of(reads), intervals_of(writes))
        self.records.append(record)
        race = launch.cross_program_raw(reads, writes)
        if race is not None:
            self.races.append(race)

    # --- PyTorch side (called by AtenCounter) -------------------------------------------------
    def on_aten(self, func, args, kwargs, out) -> None:
        if self._paused or triton_hooks.current() is not self:
            return  # harness bookkeeping, or a nested counter (autotune benchmark) owns this op
        if self.launch is not None:
            if self.launch.phase != "bookkeeping":
                self.aten_in_kernel.append(f"{func} in {self.launch.name}")
            return
        kind = classify(func)
        if kind == "host" and self.lifts_are_copies:
            kind = "launch"
        if kind in ("allocation", "host"):
            for t in [o for o in (out if isinstance(out, (list, tuple)) else [out]) if isinstance(o, torch.Tensor)]:
                self.ledger.host_data(tensor_interval(t))
        elif kind == "launch":
            records, reads, writes = aten_records(func, args, kwargs, out)
            if self.aten_reads is not None:
                self.aten_reads(self, records[0]["name"], reads)
            dirty = self.ledger.launch(records[0]["name"], reads, writes)
            # a sampled launch whose memory an aten op then writes is never completed later: a launch reading what
            # its unsampled programs write is then the model's limit (replay/closure.py). Dropped silently, it let a
            # later launch read a slot list only the sampled programs had filled (red team a262)
            for p in self.producers:
                if not p.overwritten and any(overlap(one_interval(a, b), writes) for a, b in p.spans):
                    p.overwritten = records[0]["name"]
            for i, record in enumerate(records):
                record["dirty_read_bytes"] = dirty if i == 0 else 0
            self.records.extend(records)

    # --- results ------------------------------------------------------------------------------
    def launch_records(self) -> list[dict]:
        return list(self.records)

    def report(self, outputs) -> dict:
        """Everything the evaluator needs, as plain JSON types."""
        outputs = [o for o in tree_leaves(list(outputs)) if isinstance(o, torch.Tensor)]
        covered = total = 0
        for out in outputs:
            c, t = self.ledger.covered(out)
            covered, total = covered + c, total + t
        return {
            "version": REPORT_VERSION,
            "launches": self.launch_records(),
            "triton_launches": sum(1 for r in self.records if r["kind"] == "triton"),
            "output_bytes": total * SECTOR,
            "output_bytes_counted": covered * SECTOR,
            "provenance": covered / total if total else 0.0,
            "tainted_launches": list(self.ledger.tainted_launches),
            "aten_in_kernel": list(self.aten_in_kernel),
            "cross_program_raw": list(self.races),
            **({"write_races": list(self.write_races)} if self.write_races else {}),
            "kernels": list(self.kernels.values()),
            "autotune": list(self.autotune),
            **({"output_coverage": list(self.output_coverage)} if self.output_coverage else {}),
            **({"output_meta": list(self.output_meta)} if self.output_meta else {}),
        }
