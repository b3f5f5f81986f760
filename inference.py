"""Baseline agent for kernel_env: a chat model writes kernels for each graded task, turn by turn.

    HF_TOKEN=hf_... python inference.py [--tasks gelu_bias,rmsnorm] [--turns 3] [--output episodes.jsonl]

Environment variables (read once, in ``Config.from_env``):
  API_BASE_URL      OpenAI-compatible endpoint (default: the Hugging Face router)
  MODEL_NAME        model id (default: Qwen/Qwen2.5-72B-Instruct)
  HF_TOKEN          API key (falls back to API_KEY)
  LOCAL_IMAGE_NAME  run the environment from this Docker image (or IMAGE_NAME)
  ENV_URL           use an environment server already running at this URL
  BENCHMARK         name in the [START] lines (default: kernel_env)
Without LOCAL_IMAGE_NAME or ENV_URL the environment server is started on a free loopback port and
stopped at the end.

stdout carries only the [START]/[STEP]/[END] lines of SUBMISSION.md, one block per task; every
diagnostic goes to stderr. Only submissions are steps: one [STEP] line per environment step,
numbered like the environment counts them (a harness error is such a step, reward 0.00, and uses
no turn). The player's errors (model unreachable or timed out, HTTP errors, replies without code,
code over the size limit) are no step and use no turn: they go to stderr, the next prompt tells the
model what was wrong, and after ``--retries`` + 1 of them in a row the episode ends with its [END]
line (success=false when nothing scored). The run always finishes within ``--time-budget``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TextIO

from openai import (APIConnectionError, APIStatusError, APITimeoutError, InternalServerError, OpenAI,
                    RateLimitError)

from environment import KernelAction
from environment.agent import summarize_action
from environment.driver import PLAYER_RETRIES, EpisodeMemory, submission_of
from environment.local_server import EnvSource
from environment.trajectory import (EpisodeRecord, configured_secrets, env_version, scrub, step_record,
                                    write_episodes)

DEFAULT_API_BASE_URL = "https://router.huggingface.co/v1"
DEFAULT_MODEL = "Qwen/Qwen2.5-72B-Instruct"
DEFAULT_TASKS = ("gelu_bias", "rmsnorm", "causal_attention")
MIN_CALL_S = 5.0  # a model call with less time than this left is not started


def diag(message: str) -> None:
    print(f"[inference] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Config:
    api_base_url: str
    model: str
    api_key: Optional[str]
    image: Optional[str]
    env_url: Optional[str]
    benchmark: str
    tasks: tuple[str, ...]
    turns: int
    seed: int
    temperature: float
    max_tokens: int
    llm_timeout_s: float
    retries: int
    env_timeout_s: float
    server_start_timeout_s: float
    time_budget_s: float
    output: Optional[Path]

    @classmethod
    def from_env(cls, args: argparse.Namespace) -> "Config":
        return cls(
            api_base_url=os.getenv("API_BASE_URL") or DEFAULT_API_BASE_URL,
            model=os.getenv("MODEL_NAME") or DEFAULT_MODEL,
            api_key=os.getenv("HF_TOKEN") or os.getenv("API_KEY"),
            image=os.getenv("LOCAL_IMAGE_NAME") or os.getenv("IMAGE_NAME"),
            env_url=args.env_url or os.getenv("ENV_URL"),
            benchmark=os.getenv("BENCHMARK") or "kernel_env",
            tasks=tuple(t.strip() for t in args.tasks.split(",") if t.strip()),
            turns=args.turns,
            seed=args.seed,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            llm_timeout_s=args.llm_timeout,
            retries=args.retries,
            env_timeout_s=args.env_timeout,
            server_start_timeout_s=args.server_start_timeout,
            time_budget_s=args.time_budget,
            output=Path(args.output) if args.output else None,
        )


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", default=",".join(DEFAULT_TASKS), help="comma-separated task ids")
    p.add_argument("--turns", type=int, default=3, help="submissions per episode")
    p.add_argument("--seed", type=int, default=0, help="episode seed (same inputs for the same seed)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=2048, help="cap on each model reply")
    p.add_argument("--llm-timeout", type=float, default=60.0, help="seconds per model call")
    p.add_argument("--retries", type=int, default=PLAYER_RETRIES,
                   help="player errors (failed model calls, replies without code) retried in a row before an "
                        "episode ends; also environment errors in a row. Neither uses a turn or prints a [STEP]")
    p.add_argument("--env-timeout", type=float, default=180.0,
                   help="seconds to wait for one environment step (the harness gives up after 120 s)")
    p.add_argument("--server-start-timeout", type=float, default=180.0)
    p.add_argument("--time-budget", type=float, default=1020.0,
                   help="seconds for the whole run; no model call starts or runs past it (an evaluation "
                        "already submitted may finish later), leaving room under the 20-minute limit")
    p.add_argument("--env-url", default=None, help="a running environment server (default: start one)")
    p.add_argument("--output", default=None, help="write the episodes here (*.jsonl or *.parquet)")
    args = p.parse_args(argv)
    if args.turns < 1 or args.retries < 0 or args.max_tokens < 1:
        p.error("--turns and --max-tokens must be >= 1 and --retries >= 0")
    return args


# ---- the log on stdout -------------------------------------------------------------------------

def one_line(value: Any) -> str:
    return " ".join(str(value).split())


class EpisodeLog:
    """Writes the [START]/[STEP]/[END] lines, and nothing else, to ``out``."""

    def __init__(self, out: TextIO, secrets: list[str]):
        self.out = out
        self.secrets = secrets

    def _emit(self, line: str) -> None:
        self.out.write(scrub(line, self.secrets) + "\n")
        self.out.flush()

    def start(self, task: str, benchmark: str, model: str) -> None:
        self._emit(f"[START] task={one_line(task)} env={one_line(benchmark)} model={one_line(model)}")

    def step(self, n: int, action: str, reward: float, done: bool, error: Optional[str]) -> None:
        err = one_line(error) if error else "null"
        self._emit(f"[STEP] step={n} action={one_line(action)} reward={reward:.2f} "
                   f"done={str(bool(done)).lower()} error={err}")

    def end(self, success: bool, steps: int, score: float, rewards: list[float]) -> None:
        self._emit(f"[END] success={str(bool(success)).lower()} steps={steps} score={score:.2f} "
                   f"rewards={','.join(f'{r:.2f}' for r in rewards)}")


# ---- the model ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reply:
    text: Optional[str]
    error: Optional[str]
    latency_ms: float
    transient: bool = False  # a timeout, a lost connection, HTTP 429 or 5xx: worth asking again after a pause


class ModelPlayer:
    """Chat completions with a per-call timeout; a failed call is a player error, retried by the
    episode loop (environment.driver's rule), never here."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.client = OpenAI(base_url=cfg.api_base_url, api_key=cfg.api_key or "missing-token",
                             timeout=cfg.llm_timeout_s, max_retries=0)

    def complete(self, messages: list[dict[str, str]], deadline: float) -> Reply:
        t0 = time.monotonic()
        left = deadline - time.monotonic()
        if left < MIN_CALL_S:
            return Reply(None, "time budget spent before the model answered", 0.0)
        try:
            response = self.client.chat.completions.create(
                model=self.cfg.model, messages=messages, temperature=self.cfg.temperature,
                max_tokens=self.cfg.max_tokens, timeout=min(self.cfg.llm_timeout_s, left))
        except (APITimeoutError, APIConnectionError, RateLimitError, InternalServerError) as e:
            return Reply(None, f"model call failed: {_describe(e)}", _ms(t0), transient=True)
        except Exception as e:  # 4xx, malformed responses
            return Reply(None, f"model call failed: {_describe(e)}", _ms(t0))
        choice = response.choices[0] if response.choices else None
        text = choice.message.content if choice is not None else None
        if not text:
            reason = choice.finish_reason if choice is not None else "no choices"
            return Reply(None, f"the model returned an empty reply (finish_reason={reason})", _ms(t0))
        return Reply(text, None, _ms(t0))


def _describe(e: Exception) -> str:
    if isinstance(e, APITimeoutError):
        return "timed out"
    if isinstance(e, APIStatusError):
        message = str(e.message).removeprefix(f"Error code: {e.status_code} - ")
        return f"HTTP {e.status_code}: {one_line(message)[:300]}"
    return f"{type(e).__name__}: {one_line(e)[:300]}"


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000.0, 1)


# ---- one episode -------------------------------------------------------------------------------

def play_task(task_id: str, cfg: Config, source: EnvSource, player: ModelPlayer, log: EpisodeLog,
              deadline: float) -> Optional[EpisodeRecord]:
    """Play one episode and log its block; the [END] line is printed whatever happens.

    A [STEP] line is printed for each environment step and only for those, numbered from 1 like the
    environment counts them; a harness error is such a step (reward 0.00 here, null in the record;
    no turn used). The player's errors (environment.driver: no reply, HTTP errors, no code, oversized
    code) are no step: they go to stderr, the next prompt says what was wrong, and after --retries + 1
    of them in a row the episode ends."""
    rewards: list[float] = []  # one per [STEP] line
    record: Optional[EpisodeRecord] = None
    log.start(task_id, cfg.benchmark, cfg.model)
    try:
        with source.session() as env:
            obs = env.reset(task_id=task_id, seed=cfg.seed, max_turns=cfg.turns).observation
            record = EpisodeRecord.start(obs, seed=cfg.seed, player="model", model=cfg.model,
                                         temperature=cfg.temperature, env_version=env_version())
            memory = EpisodeMemory(obs)  # best code, history, last error, player errors: the playground's rules
            env_errors = 0
            while True:
                if deadline - time.monotonic() < MIN_CALL_S:
                    diag(f"{task_id}: time budget spent after {len(rewards)} step(s)")
                    break
                messages = memory.messages()
                reply = player.complete(messages, deadline)
                code, error = submission_of(reply.text, reply.error)
                if code is None:
                    memory.player_failed(error)
                    diag(f"{task_id}: player error {memory.player_errors} of at most {cfg.retries + 1} in a row "
                         f"(no step, no turn used): {one_line(error)[:500]}")
                    if memory.gave_up(cfg.retries):
                        diag(f"{task_id}: the player failed {memory.player_errors} times in a row: episode ends")
                        break
                    if reply.transient:  # a rate limit or an overloaded server: back off before asking again
                        time.sleep(min(2.0 ** (memory.player_errors - 1),
                                       max(0.0, deadline - time.monotonic() - MIN_CALL_S)))
                    continue
                n = len(rewards) + 1
                summary = summarize_action(code)
                t0 = time.monotonic()
                try:
                    result = env.step(KernelAction(code=code))
                except Exception as e:  # the connection or the server failed: end this episode
                    error = f"environment step failed: {one_line(e)[:500]}"
                    record.add_step(step_record(n, code, action_summary=summary, error=error, done=True,
                                                latency_ms=reply.latency_ms, env_latency_ms=_ms(t0),
                                                prompt_messages=messages, raw_reply=reply.text))
                    rewards.append(0.0)
                    log.step(n, summary, 0.0, True, error)
                    break
                obs = result.observation
                if obs.outcome == "harness_error":  # the environment's failure: no reward, no turn used up
                    env_errors += 1
                    diag(f"{task_id}: environment error on step {n}: {one_line(obs.error or '')[:500]}")
                    record.add_step(step_record(n, code, obs, action_summary=summary, reward=None, done=False,
                                                latency_ms=reply.latency_ms, env_latency_ms=_ms(t0),
                                                prompt_messages=messages, raw_reply=reply.text))
                    rewards.append(0.0)
                    log.step(n, summary, 0.0, False, obs.error)
                    memory.environment_failed(code, obs.error)
                    if env_errors > cfg.retries:
                        diag(f"{task_id}: {env_errors} environment errors in a row: episode ends")
                        break
                    continue
                env_errors = 0
                reward = float(result.reward if result.reward is not None else obs.score)
                record.add_step(step_record(n, code, obs, action_summary=summary, reward=reward, done=result.done,
                                            latency_ms=reply.latency_ms, env_latency_ms=_ms(t0),
                                            prompt_messages=messages, raw_reply=reply.text))
                rewards.append(reward)
                log.step(n, summary, reward, result.done, obs.error)
                memory.scored(code, obs)
                if result.done:
                    break
    except Exception as e:
        diag(f"{task_id}: episode ended early: {type(e).__name__}: {one_line(e)[:500]}")
    finally:
        score = min(1.0, max([0.0] + rewards))
        log.end(record.success if record else False, len(rewards), score, rewards)
    return record


def main(argv: Optional[list[str]] = None) -> int:
    cfg = Config.from_env(parse_args(argv))
    out, sys.stdout = sys.stdout, sys.stderr  # anything a library prints lands on stderr
    secrets = configured_secrets([cfg.api_key])
    log = EpisodeLog(out, secrets)
    deadline = time.monotonic() + cfg.time_budget_s
    if not cfg.api_key:
        diag("neither HF_TOKEN nor API_KEY is set: model calls will likely be refused")
    diag(f"model {cfg.model} at {cfg.api_base_url}; tasks {','.join(cfg.tasks)}; {cfg.turns} turns; seed {cfg.seed}")
    source = EnvSource(image=cfg.image, env_url=cfg.env_url, start_timeout_s=cfg.server_start_timeout_s,
                       step_timeout_s=cfg.env_timeout_s, say=diag)
    player = ModelPlayer(cfg)
    records: list[EpisodeRecord] = []
    try:
        for task_id in cfg.tasks:
            record = play_task(task_id, cfg, source, player, log, deadline)
            if record is not None:
                records.append(record)
                if cfg.output:
                    try:
                        write_episodes(records, cfg.output, secrets=secrets)
                    except Exception as e:
                        diag(f"could not write {cfg.output}: {one_line(e)}")
    finally:
        source.close()
        sys.stdout = out
    diag("scores: " + ", ".join(f"{r.task_id}={r.score:.2f}" for r in records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
