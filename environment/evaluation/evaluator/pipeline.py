"""The trusted side of one evaluation (stages 2-5), run in a process forked from the zygote.

It forks the candidate child and the reference child before it makes any input, so neither child
ever holds a trial input it was not sent nor any reference output; it compares outputs itself and
its clock is the timing of record.
"""
from __future__ import annotations

import os
import tempfile
import time
import traceback
from typing import Any, Optional

import torch


from environment.config import HarnessConfig
from environment.evaluation.child import fallback_guard
from environment.evaluation import flags as F
from environment.evaluation.transport.children import ChildDied, ChildHandle
from environment.evaluation.transport.sandbox import landlock_abi as sandbox_landlock_abi
from environment.evaluation.evaluator.compare import compare
from environment.evaluation.transport.protocol import Job, Limits, Loaded, Ran, Run
from environment.evaluation.transport.frames import FrameError
from environment.evaluation.evaluator.inputs import SeedPlan, init_args, json_init, make_inputs, plan_trials
from environment.evaluation.evaluator.modeled_speed import modeled_performance
from environment.evaluation.child.outputs import wrong_output_message
from environment.evaluation.evaluator.outcome import StageContext
from environment.evaluation.faults import HarnessFault
from environment.evaluation.evaluator.performance import measure
from environment.evaluation.result import (CorrectnessResult, EvalResult, KernelLaunches, LoadResult,
                                           PerformanceResult, StaticResult)
from environment.tasks.task import Task


def _read_log(path: str, cap: int) -> tuple[str, bool]:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            data = fh.read(cap)
    except OSError:
        return "", False
    text = data.decode("utf-8", errors="replace")
    if size > cap:
        text += f"\n[... {size - cap} more bytes of output omitted ...]"
    return text, size > cap


def _out_of_memory(error: str) -> bool:
    return any(m in error for m in ("MemoryError", "can't allocate memory", "Cannot allocate memory", "out of memory"))


def _job(task: Task, source: str, class_name: str, config: HarnessConfig, backend: str, init: list[Any],
         init_seed: int, workdir: str) -> tuple[Job, list[torch.Tensor]]:
    """The job record and the constructor arguments that are tensors (they travel beside it)."""
    tensors = [a for a in init if isinstance(a, torch.Tensor)]
    k = iter(range(len(tensors)))
    args = [{"__tensor__": next(k)} if isinstance(a, torch.Tensor) else a for a in init]
    job = Job(tmpdir=tempfile.mkdtemp(prefix=class_name + "-", dir=workdir), source=source, class_name=class_name,
              init_args=args, init_seed=init_seed, backend=backend, device="cuda" if backend == "cuda" else "cpu",
              tolerance={"atol": task.atol, "rtol": task.rtol, "tf32_admissible": task.tf32_admissible}, limits=Limits.of(config),
              train_mode=task.train_mode)
    return job, tensors


class Evaluation:
    def __init__(self, task: Task, source: str, static: StaticResult, seeds: SeedPlan, config: HarnessConfig,
                 backend: str, workdir: str, children: tuple[ChildHandle, ...]):
        """workdir: a private directory the caller deletes after the evaluation's processes are gone.
        children: (candidate, reference, replayer, sampler), forked before this process read its request."""
        self.workdir, self.children = workdir, children
        self.task, self.source, self.static, self.seeds = task, source, static, seeds
        self.config, self.backend = config, backend
        self.flags: list[str] = []
        self.load: Optional[LoadResult] = None
        self.correctness: Optional[CorrectnessResult] = None
        self.launches: Optional[KernelLaunches] = None
        self.performance: Optional[PerformanceResult] = None
        self.compute_s = 0.0
        self.stage_s: dict[str, float] = {}
        self._mark = time.monotonic()

    def run(self) -> EvalResult:
        started = time.monotonic()
        self._mark = started
        reference = self.task.load_reference()
        shapes = self.task.shapes(self.backend)
        for name, value in (shapes[0] if shapes else {}).items():
            setattr(reference, name, value)  # get_init_inputs may read the dimensions
        init = init_args(reference)
        init_seed = self.seeds.init
        cand_job = _job(self.task, self.source, "ModelNew", self.config, self.backend, init, init_seed, self.workdir)
        ref_job = _job(self.task, self.task.reference_code, "Model", self.config, self.backend, init, init_seed,
                       self.workdir)
        cand, ref, self.replayer, self.sampler = self.children
        log, truncated, fault = "", False, None
        try:
            try:
                cand.start(*cand_job, self.config.timeout_s)
                ref.start(*ref_job, self.config.timeout_s)
            except ChildDied as died:  # no submission code has run yet: a child died under us
                raise HarnessFault(f"the {died.role} child died before it got its job ({died.reason})") from None
            self._lap("fork")
            self._stages(reference, cand, ref)
        except HarnessFault as exc:
            fault = str(exc)
        except Exception as exc:  # a failure of trusted code is the environment's, never the submission's
            fault = f"the evaluator failed: {type(exc).__name__}: {exc}"
            traceback.print_exc()
        finally:
            # No graceful shutdown: the zygote kills this whole process group once the result is out.
            for child in self.children:
                child.kill()
            log, truncated = _read_log(os.path.join(cand_job[0].tmpdir, "output.log"), self.config.log_cap_bytes)
            self._lap("cleanup")
        if truncated:
            self.flags.append(F.OUTPUT_TRUNCATED)
        if fault is not None:
            return EvalResult(task_id=self.task.id, backend=self.backend, static=self.static, outcome="harness_error",
                              harness_error=fault[:2000], wall_s=time.monotonic() - started, stage_s=self.stage_s)
        outcome = "ok" if self.load is not None and self.load.ok else "submission_failed"
        return EvalResult(task_id=self.task.id, backend=self.backend, static=self.static, outcome=outcome,
                          load=self.load,
                          correctness=self.correctness, launches=self.launches, performance=self.performance,
                          flags=sorted(set(self.flags)), log=log, wall_s=time.monotonic() - started,
                          compute_s=self.compute_s, stage_s=self.stage_s)

    def _check_layers(self, layers: dict) -> None:
        """Flag a requested layer the child could not apply (the host refused it)."""
        if self.config.landlock and sandbox_landlock_abi() and not layers.get("landlock"):
            self.flags.append(f"{F.SANDBOX_DEGRADED}:landlock")
        if self.config.seccomp and not layers.get("seccomp"):
            self.flags.append(f"{F.SANDBOX_DEGRADED}:seccomp")

    def _lap(self, stage: str) -> None:
        now = time.monotonic()
        self.stage_s[stage] = round(now - self._mark, 6)
        self._mark = now

    def _fail_load(self, died: ChildDied) -> None:
        self.load = LoadResult(ok=False, error=f"The submission did not finish loading: {died.reason}.",
                               exit_reason=died.reason)
        if died.sandbox_kill:
            self.flags.append(F.SANDBOX_VIOLATION)
        if died.timeout:
            self.flags.append(F.TIMEOUT)

    def _stages(self, reference: Any, cand: ChildHandle, ref: ChildHandle) -> None:
        timeout = self.config.timeout_s
        try:
            ref_header, _ = ref.receive(Loaded, timeout)
        except ChildDied as died:
            raise HarnessFault(f"task {self.task.id}: the reference failed to load ({died.reason})") from None
        if not ref_header.ok:
            raise HarnessFault(f"task {self.task.id}: the reference failed to load: {ref_header.error}")
        try:
            header, _ = cand.receive(Loaded, timeout)
        except ChildDied as died:
            return self._fail_load(died)
        except FrameError as exc:  # bytes forged onto the result channel at import time
            self.flags.append(F.PROTOCOL_VIOLATION)
            self.load = LoadResult(ok=False, error=f"The result channel violated the protocol while loading: {exc}.")
            return
        if not header.ok:
            error = str(header.error)
            if _out_of_memory(error):
                self.flags.append(F.MEMORY_LIMIT)
            self.load = LoadResult(ok=False, error=f"Loading ModelNew failed: {error}", line=header.line)
            return
        self.load = LoadResult(ok=True)
        self._check_layers(header.layers)
        self._lap("load")
        if self.backend == "cpu" and self.config.cpu_speed != "measured" and self.config.gpu_shape_pricing:
            from environment.evaluation.evaluator.gpu_shape import prefetch
            prefetch(self.task, self.config, self.seeds.heldout, self.sampler)  # made while the trials run
        try:
            self._correctness(reference, cand, ref)
            self._lap("correctness")
            if self.correctness and self.correctness.correct and not any(F.is_hack(f) for f in self.flags):
                self.performance = self._performance(reference, cand, ref)
                self._lap("performance")
        except ChildDied as died:
            if died.role != "candidate":
                raise HarnessFault(f"the {died.role} child stopped: {died.reason}") from None
            if died.sandbox_kill:
                self.flags.append(F.SANDBOX_VIOLATION)
            if died.timeout:
                self.flags.append(F.TIMEOUT)
            if self.correctness is None:
                self.correctness = CorrectnessResult(correct=False, trials_total=self.config.trials,
                                                     atol=self.task.atol, rtol=self.task.rtol,
                                                     error=f"The submission stopped while running: {died.reason}.")
            elif self.performance is None:
                self.performance = PerformanceResult(note=f"Timing stopped: {died.reason}.")
        except FrameError as exc:  # a forged or broken channel
            self.flags.append(F.PROTOCOL_VIOLATION)
            self.correctness = self.correctness or CorrectnessResult(
                correct=False, trials_total=self.config.trials, error=f"Result channel violated the protocol: {exc}")

    def _oracle(self, ref: ChildHandle, init: Any, inputs: list, n_out: int) -> Optional[list]:
        """The reference run in float64 on the same inputs; None where it is not defined (an op
        without float64 support, a different number of outputs). Asked for only when the candidate
        disagrees with the fp32 reference: an element that matches it needs no arbiter."""
        if not self.config.fp64_oracle:
            return None
        head, out = ref.request(Run(init=init, float64=True), Ran, inputs, self.config.timeout_s)
        self.compute_s += head.compute_s
        return out if head.ok and len(out) == n_out else None

    def _judge(self, trial: Any, expected: list, actual: list, oracle: Optional[list]) -> list:
        task = self.task
        return [compare(e, a, task.atol, task.rtol, trial.index, trial.distribution, trial.shape,
                        oracle=oracle[k] if oracle else None, slack=self.config.oracle_slack, hidden=trial.hidden)
                for k, (e, a) in enumerate(zip(expected, actual))]

    def _correctness(self, reference: Any, cand: ChildHandle, ref: ChildHandle) -> None:
        task, cfg, timeout = self.task, self.config, self.config.timeout_s
        trials = plan_trials(task, self.backend, list(self.seeds.trials), cfg.hidden_trials, cfg.shuffled_trials)
        passed, max_err, error, mismatch = 0, 0.0, None, None
        mutated, deterministic, launches, races, swallowed = False, True, None, [], []
        for trial in trials:
            inputs = make_inputs(reference, trial.shape, trial.distribution, trial.seed, task.extreme,
                                 cap_bytes=cfg.input_cap_bytes)
            init = json_init(reference)
            repeat = 2 if trial.index == 0 else 1
            where = "a hidden shape" if trial.hidden else f"shape {trial.shape}"
            # candidate first, on its own copies; the reference after, in another process
            c_head, c_out = cand.request(Run(repeat=repeat, init=init, order_seed=trial.order_seed), Ran, inputs,
                                         timeout)
            r_head, r_out = ref.request(Run(init=init), Ran, inputs, timeout)
            if not r_head.ok:
                raise HarnessFault(f"task {task.id}: the reference failed on trial {trial.index}: {r_head.error}")
            self.compute_s += r_head.compute_s + c_head.compute_s
            for event in c_head.audit:
                self.flags.append(f"{F.AUDIT_EVENT}:{event}")
            if not c_head.ok:
                error = error or f"trial {trial.index} ({where}) raised {c_head.error}"
                if _out_of_memory(str(c_head.error)):
                    self.flags.append(F.MEMORY_LIMIT)
                continue
            if c_head.swallowed:  # the child's reports are its text: capped before they reach feedback
                swallowed += [str(e)[:300] for e in c_head.swallowed[:5]]
            if not c_head.plain and c_head.returned:  # a number, numpy array or list: a wrong answer, never read;
                error = error or wrong_output_message(c_head.returned)  # the other trials still run and are checked
                continue  # like a wrong tensor's (a175: ending them hid a fallback the later trials would show)
            if not c_head.plain:
                self.flags.append(F.OUTPUT_NOT_TENSOR)
                error = error or "forward must return a plain torch.Tensor with real storage (not a subclass or lazy object)"
                break
            if launches is None:
                launches = c_head.launches
            n_ref, n_out = r_head.outputs, c_head.outputs
            if n_out != n_ref or len(c_out) != n_out * repeat:
                error = error or (f"forward returned {n_out} tensor(s), the reference returns {n_ref}: return the "
                                  "same number of outputs")
                continue
            mutated |= c_head.mutated
            verdicts = self._judge(trial, r_out, c_out[:n_ref], None)
            if any(err for err, _, _ in verdicts):  # who is right, the kernel or the fp32 reference?
                oracle = self._oracle(ref, init, inputs, n_ref)
                if oracle is not None:
                    verdicts = self._judge(trial, r_out, c_out[:n_ref], oracle)
            ok = True
            for err, m_abs, mm in verdicts:
                max_err = max(max_err, m_abs)
                if err:
                    ok = False
                    error, mismatch = error or err, mismatch or mm
            if ok and repeat == 2:
                for k in range(n_ref):
                    err, _, _ = compare(c_out[k], c_out[n_out + k], task.atol, task.rtol, trial.index,
                                        trial.distribution, trial.shape)
                    if err:
                        deterministic = False
            if c_head.races:
                races += [str(e)[:600] for e in c_head.races[:5]]
                ok = False
            passed += ok
        if races:  # the cause of whatever mismatch the shuffled order produced
            self.flags.append(F.WRITE_RACE)
            error = f"a write-write race between programs: {races[0]}"
        if swallowed:
            self.flags.append(F.TRY_EXCEPT_FALLBACK)
            error = fallback_guard.swallowed_message(swallowed)
        if mutated:
            self.flags.append(F.INPUT_MUTATION)
            error = error or "forward wrote into its input tensors; inputs must be left untouched"
        if not deterministic:
            self.flags.append(F.NONDETERMINISTIC)
            error = error or ("two runs on identical inputs gave different results (reading uninitialised memory, "
                              "or a race): make the kernel deterministic")
        self.launches = KernelLaunches(triton_launches=sum((launches or {}).values()),
                                       kernels_launched=sorted(launches or {}))
        if self.static.uses_triton and self.launches.triton_launches == 0 and passed:
            self.flags.append(F.DECOY_KERNEL)
            error = error or ("a Triton kernel is defined but never launched; the result came from other code. "
                              "Launch your kernel in forward")
        if not self.static.uses_triton:
            self.flags.append(F.NO_CUSTOM_KERNEL)
        correct = passed == len(trials) and not mutated and deterministic and not races and not swallowed \
            and error is None
        self.correctness = CorrectnessResult(
            correct=correct, trials_passed=passed, trials_total=len(trials),
            max_abs_error=max_err if passed or mismatch else None, atol=task.atol, rtol=task.rtol,
            error=None if correct else error, mismatch=mismatch, inputs_mutated=mutated, deterministic=deterministic)

    def _performance(self, reference: Any, cand: ChildHandle, ref: ChildHandle) -> PerformanceResult:
        ctx = StageContext(task=self.task, source=self.source, static=self.static, seeds=self.seeds,
                           config=self.config, backend=self.backend, workdir=self.workdir, replayer=self.replayer,
                           sampler=self.sampler)
        stage = modeled_performance if self.backend == "cpu" and self.config.cpu_speed != "measured" else measure
        outcome = stage(ctx, reference, cand, ref)
        self.flags.extend(outcome.flags)
        self.compute_s += outcome.compute_s
        self.stage_s.update({f"performance.{k}": round(v, 6) for k, v in outcome.stage_s.items()})
        if outcome.wrong:
            self.correctness = self.correctness.model_copy(update={"correct": False, "error": outcome.wrong})
        if outcome.triton_launches is not None and self.launches is not None:
            self.launches = self.launches.model_copy(update={"triton_launches": outcome.triton_launches})
        return outcome.performance
