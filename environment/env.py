"""KernelEnvironment: episode bookkeeping only. Evaluation is the harness's, scoring the reward's."""
from __future__ import annotations

import random
import time
import uuid
from typing import Any, Optional

from fastapi import HTTPException
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from environment import curriculum as curricula
from environment import feedback
from environment import signals as independent_signals
from environment.monitor import MONITOR
from environment.config import ServerConfig
from environment.evaluation import harness
from environment.evaluation.result import SPEEDUP_LABELS, EvalResult
from environment.evaluation.transport.sandbox import probe_layers
from environment.models import KernelAction, KernelObservation, KernelState, Timings
from environment.prompt import task_prompt
from environment.rubric import KernelRubric
from environment.tasks import GRADED_TASKS, get_task, list_tasks
from environment.tasks.task import DIFFICULTIES
from environment.wire import salt_base, without_clocks


class KernelEnvError(HTTPException, ValueError):
    """API misuse: a 400 on HTTP, an error frame on WebSocket, with the fix in the message."""

    def __init__(self, message: str):
        super().__init__(status_code=400, detail=message)

    def __str__(self) -> str:
        return str(self.detail)


class KernelEnvironment(Environment[KernelAction, KernelObservation, KernelState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__(rubric=KernelRubric())  # the reward: obs.reward is the rubric root's score
        self._config = ServerConfig()
        self._state = KernelState(episode_id=None, step_count=0)
        self._task = None
        self._done = True
        self._curriculum: Optional[str] = None   # the curriculum this episode was drawn from
        self._solved = False
        self._salt = ""  # what the trial seeds are salted with (environment/wire.py)

    # -- OpenEnv API ----------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, task_id: Optional[str] = None,
              difficulty: Optional[str] = None, max_turns: Optional[int] = None, curriculum: Optional[str] = None,
              **kwargs: Any) -> KernelObservation:
        if kwargs:
            raise KernelEnvError(f"unknown reset argument(s) {sorted(kwargs)}; accepted: seed, episode_id, task_id, "
                                 "difficulty, max_turns, curriculum")
        if curriculum is not None:
            if task_id is not None or difficulty is not None:
                raise KernelEnvError("curriculum picks the task: drop task_id and difficulty, or drop curriculum")
            try:
                curricula.check_name(curriculum)
            except ValueError as exc:
                raise KernelEnvError(str(exc)) from None
        if seed is not None and (not isinstance(seed, int) or seed < 0):
            raise KernelEnvError(f"seed must be a non-negative integer, got {seed!r}")
        if max_turns is not None and (not isinstance(max_turns, int) or not 1 <= max_turns <= 50):
            raise KernelEnvError(f"max_turns must be an integer from 1 to 50, got {max_turns!r}")
        if difficulty is not None and difficulty not in DIFFICULTIES:
            raise KernelEnvError(f"unknown difficulty {difficulty!r}; valid: {', '.join(DIFFICULTIES)}")
        self._close_curriculum()  # an episode left before its end counts with what it reached
        episode_id = episode_id or str(uuid.uuid4())
        if curriculum is not None:
            task_id = curricula.draw(curriculum, episode_id, seed)
        salt = salt_base(episode_id, seed is not None, seed or 0)
        seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        rng = random.Random(seed)
        if task_id is not None:
            try:
                task = get_task(task_id)
            except KeyError as exc:
                raise KernelEnvError(exc.args[0]) from None
            if difficulty is not None and task.difficulty != difficulty:
                raise KernelEnvError(f"task {task_id!r} is {task.difficulty}, not {difficulty}; drop one of the two")
        else:
            pool = [t for t in list_tasks(difficulty) if t.graded] or list_tasks(difficulty)
            task = pool[rng.randrange(len(pool))] if difficulty else get_task(GRADED_TASKS[rng.randrange(3)])
        self._task = task
        self._done = False
        self._curriculum, self._solved, self._salt = curriculum, False, salt
        turns = max_turns or self._config.max_turns
        self._reset_rubric()
        self._state = KernelState(episode_id=episode_id, step_count=0, task_id=task.id,
                                  seed=seed, turn=0, max_turns=turns, best_score=0.0, history=[], done=False)
        return MONITOR.on_reset(self._state, self._observation(reward_value=0.0))

    def step(self, action: KernelAction, timeout_s: Optional[float] = None, **kwargs: Any) -> KernelObservation:
        if self._task is None:
            raise KernelEnvError("call reset() before step(): no episode is running. Over HTTP each request gets a "
                                 "fresh environment, so play episodes over the WebSocket /ws (KernelEnv client)")
        if self._done:
            raise KernelEnvError("the episode is over (max_turns reached or finish sent); call reset() to start "
                                 "a new one")
        st, t0 = self._state, time.monotonic()
        result = without_clocks(harness.evaluate(self._task, action.code, seed=st.seed or 0,
                                                 salt=f"{self._salt}:{st.turn}:{st.step_count}",
                                                 session=st.episode_id or "anonymous"), st.episode_id)
        if result.outcome == "harness_error":
            # the environment failed: no reward, no turn consumed, the same submission may be sent again
            self._state = st.model_copy(update={"step_count": st.step_count + 1})
            obs = self._observation(result=result, score=0.0, breakdown={}, reward_value=None, done=False)
            return MONITOR.on_step(st.episode_id, action.code, obs, t0)
        result = independent_signals.attach(self._task, action.code, result)
        # the rubric reads the evaluation record; the observation built below carries the same record
        value = self._apply_rubric(action, KernelObservation(task_id=self._task.id, evaluation=result))
        breakdown = self.rubric.breakdown()
        history = st.history + [value]
        turn = st.turn + 1
        done = bool(action.finish) or turn >= st.max_turns
        self._done = done
        self._solved |= bool(result.correct)
        self._state = st.model_copy(update={"step_count": st.step_count + 1, "turn": turn, "history": history,
                                            "best_score": max(st.best_score, value), "done": done})
        if done:
            self._close_curriculum()
        obs = self._observation(result=result, score=value, breakdown=breakdown, reward_value=value, done=done)
        return MONITOR.on_step(st.episode_id, action.code, obs, t0)

    def _close_curriculum(self) -> None:
        """Tell the episode's curriculum how it went (once; a no-op outside curricula)."""
        if self._curriculum is not None and self._state.episode_id:
            curricula.record(self._curriculum, self._state.episode_id, self._solved, self._state.best_score)
        self._curriculum = None

    @property
    def state(self) -> KernelState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        layers = probe_layers()
        active = ", ".join(
            [f"Landlock ABI {layers['landlock_abi']}"] * bool(layers["landlock"]) + ["seccomp"] * bool(layers["seccomp"])
            + ["rlimits", "audit-hook tripwire"])
        return EnvironmentMetadata(
            name="kernel_env",
            description="GPU kernel optimization: submit ModelNew (Triton or PyTorch) for a PyTorch reference; "
                        "sandboxed correctness over secret-seeded trials, measured (CUDA) or modeled (CPU) speedup, "
                        f"reward-hack detection, reward breakdown. Backend: {harness.backend()}. "
                        f"Sandbox layers on this host: {active} (details: GET /sandbox).",
            version="0.1.0",
        )

    # -- observation ----------------------------------------------------------------------
    def _observation(self, result: Optional[EvalResult] = None, score: float = 0.0,
                     breakdown: Optional[dict[str, float]] = None, reward_value: Optional[float] = None,
                     done: bool = False) -> KernelObservation:
        task, st = self._task, self._state
        backend = harness.backend()
        fields: dict[str, Any] = dict(
            task_id=task.id, difficulty=task.difficulty, prompt=task_prompt(task, backend, st.max_turns),
            reference_code=task.reference_code, turn=st.turn, max_turns=st.max_turns, backend=backend,
            best_score=st.best_score, done=done, reward=reward_value, score=score,
        )
        if result is None:
            fields["feedback"] = (f"New episode on {task.id} ({task.difficulty}). Submit ModelNew; you have "
                                  f"{st.max_turns} turns.")
            return KernelObservation(**fields)
        perf = result.performance
        c = result.correctness
        fields["outcome"] = result.outcome
        fields.update(
            compiled=result.compiled, correct=result.correct,
            trials_passed=c.trials_passed if c else 0, trials_total=c.trials_total if c else 0,
            max_abs_error=c.max_abs_error if c else None,
            speedup=perf.speedup if perf else None, speedup_kind=perf.speedup_kind if perf else None,
            timings=_timings(result), flags=list(result.flags), reward_breakdown=breakdown or {},
            feedback=feedback.render(result, score, breakdown or {}), error=feedback.one_line_error(result),
            evaluation=result,
        )
        return KernelObservation(**fields)


def _timings(result: EvalResult) -> Optional[Timings]:
    p = result.performance
    if p is None or (p.reference is None and p.candidate is None):
        return None
    source = SPEEDUP_LABELS.get(p.speedup_kind or "", "unknown")
    if p.speedup_kind == "modeled" and p.modeled_reference:
        source += f" ({p.modeled_reference.target})"
    return Timings(source=source, reference=p.reference, candidate=p.candidate)
