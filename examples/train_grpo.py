"""GRPO training against kernel_env with TRL (``pip install -e ".[trl]"``).

The environment owns the reward: TRL's ``environment_factory`` gives the model one tool,
``submit_kernel(code)``, and scores each rollout with the environment's ``get_reward`` (best step;
see environment/training). Every rollout is written in the playground's episode format.

    # CPU smoke run: a tiny random-weight model built here, a server started here
    python examples/train_grpo.py --max-steps 2
    # a real model on a GPU, against a running server (a Space or `python app.py`)
    python examples/train_grpo.py --env-url https://<owner>-<space>.hf.space \
        --model Qwen/Qwen3-0.6B --tasks gelu_bias,softmax --seeds 16 --num-generations 8 --max-steps 100

The server must accept as many concurrent sessions as rollouts per generation batch
(``KERNEL_ENV_MAX_SESSIONS``, default 64).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is marked experimental in TRL 1.16

TINY = "tiny"
SCRIPTED_SYSTEM = "Submit ModelNew with the submit_kernel tool."


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--env-url", default=None, help="a running kernel_env server; default: start one on loopback")
    p.add_argument("--model", default=TINY, help="'tiny' (random weights, built here, CPU) or a model id / path")
    p.add_argument("--tasks", default="gelu_bias", help="comma-separated task ids")
    p.add_argument("--curriculum", default=None, help="a server-side curriculum name (rows then carry no task)")
    p.add_argument("--seeds", type=int, default=2, help="seeds per task (dataset rows = tasks x seeds)")
    p.add_argument("--max-turns", type=int, default=2, help="submissions per episode")
    p.add_argument("--num-generations", type=int, default=2, help="rollouts per prompt (the GRPO group)")
    p.add_argument("--batch-size", type=int, default=2, help="per-device train batch size (rollouts per step)")
    p.add_argument("--max-steps", type=int, default=2)
    p.add_argument("--max-completion-length", type=int, default=48)
    p.add_argument("--learning-rate", type=float, default=1e-5)
    p.add_argument("--output-dir", default=None, help="default: a temporary folder")
    p.add_argument("--episodes", default=None, help="rollouts as JSONL (default: <output-dir>/rollouts.jsonl)")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature (default 1.0; 0.3 scripted)")
    p.add_argument("--scripted", action="store_true",
                   help="smoke-test the reward path: short prompts, and the tiny model first taught to\n"
                        "submit each task's shortest shipped correct solution (so non-zero rewards flow)")
    p.add_argument("--cpu", action="store_true", help="force CPU (the tiny model always runs on CPU)")
    return p.parse_args(argv)


@contextlib.contextmanager
def environment(url: Optional[str]) -> Iterator[str]:
    if url:
        yield url.rstrip("/")
        return
    from inference import LocalServer
    with LocalServer(start_timeout_s=240) as server:
        print(f"started a local kernel_env server at {server.url}", flush=True)
        yield server.url


def recording_trainer_class():
    """GRPOTrainer that also keeps, per rollout, the reward it trained on next to the episode id
    (``reward_ledger``: what the test compares with the server's records)."""
    from trl import GRPOTrainer

    class RecordingGRPOTrainer(GRPOTrainer):
        reward_ledger: list[dict[str, Any]]

        def _calculate_rewards(self, inputs, *args, **kwargs):  # TRL 1.16: one row per rollout, one column per source
            rewards = super()._calculate_rewards(inputs, *args, **kwargs)
            ledger = self.__dict__.setdefault("reward_ledger", [])
            for env, row, used in zip(self.environments or [], inputs, rewards[:, -1].tolist()):
                ledger.append({"episode_id": env.episode_id, "task_id": row.get("task_id"), "seed": row.get("seed"),
                               "reward": None if math.isnan(used) else used})
            return rewards

    return RecordingGRPOTrainer


def shipped_solution(task_id: str) -> str:
    """The shortest shipped correct solution of a task."""
    from environment.tasks import get_task
    files = get_task(task_id).solutions.get("correct") or ()
    if not files:
        raise ValueError(f"task {task_id!r} ships no correct solution to script")
    return min((f.read_text() for f in files), key=len)


def scripted_rows(model_path: str, tasks: list[str], seeds: range, max_turns: int, url: str) -> list[dict[str, Any]]:
    """Rows with a one-line task prompt, and the tiny model at ``model_path`` taught to answer each
    with a submit_kernel call carrying the task's shipped solution."""
    from environment.training.tiny_model import imprint, tool_call_reply
    from environment.training.trl_env import KernelToolEnv

    prompts = {t: [{"role": "system", "content": SCRIPTED_SYSTEM}, {"role": "user", "content": f"Task: {t}"}]
               for t in tasks}
    examples = [(prompts[t], tool_call_reply("submit_kernel", code=shipped_solution(t))) for t in tasks]
    loss = imprint(model_path, examples, tools=[KernelToolEnv(url).submit_kernel])
    print(f"scripted policy: the tiny model now submits the shipped solution of {', '.join(tasks)} "
          f"(imprint loss {loss:.4f})", flush=True)
    return [{"prompt": prompts[t], "task_id": t, "seed": s, "max_turns": max_turns} for t in tasks for s in seeds]


def train(args: argparse.Namespace) -> dict[str, Any]:
    from datasets import Dataset
    from trl import GRPOConfig

    from environment.training.trl_env import EpisodeRecorder, KernelEnvFactory, build_dataset

    output_dir = Path(args.output_dir or tempfile.mkdtemp(prefix="kernel_grpo_"))
    episodes = Path(args.episodes or output_dir / "rollouts.jsonl")
    model = args.model
    if model == TINY:
        from environment.training.tiny_model import make_tiny_model
        model = str(make_tiny_model(output_dir / "tiny-model"))
    elif args.scripted:
        raise SystemExit("--scripted works with the tiny model only (drop --model)")
    use_cpu = args.cpu or args.model == TINY
    temperature = args.temperature if args.temperature is not None else (0.3 if args.scripted else 1.0)
    with environment(args.env_url) as url:
        tasks = [t for t in args.tasks.split(",") if t] if not args.curriculum else []
        if args.scripted:
            dataset = Dataset.from_list(scripted_rows(model, tasks, range(args.seeds), args.max_turns, url))
        else:
            dataset = build_dataset(url, tasks, seeds=range(args.seeds), max_turns=args.max_turns,
                                    curriculum=args.curriculum)
        factory = KernelEnvFactory(url, recorder=EpisodeRecorder(episodes), model=args.model)
        config = GRPOConfig(
            output_dir=str(output_dir), max_steps=args.max_steps, per_device_train_batch_size=args.batch_size,
            num_generations=args.num_generations, max_completion_length=args.max_completion_length,
            learning_rate=args.learning_rate, logging_steps=1, save_strategy="no", report_to="none",
            use_cpu=use_cpu, bf16=not use_cpu, max_tool_calling_iterations=args.max_turns, seed=0,
            temperature=temperature,
            dataloader_num_workers=0)
        trainer = recording_trainer_class()(model=model, args=config, train_dataset=dataset,
                                            environment_factory=factory)
        try:
            trainer.train()
        finally:
            factory.close()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    ledger = getattr(trainer, "reward_ledger", [])
    summary = {"env_url": url, "steps": trainer.state.global_step, "losses": losses, "ledger": ledger,
               "stats": dict(factory.stats), "episodes_file": str(episodes), "episodes": len(factory.recorder.records)}
    print(f"\ntrained {summary['steps']} steps; loss per step: {', '.join(f'{x:.4g}' for x in losses)}")
    scored = [r["reward"] for r in ledger if r["reward"] is not None]
    print(f"rollouts: {len(ledger)}, scored: {len(scored)}, mean reward: "
          f"{(sum(scored) / len(scored)) if scored else float('nan'):.3f}, environment stats: {summary['stats']}")
    print(f"episodes ({summary['episodes']}) in {episodes}: open them in the playground's Replay tab")
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    train(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
