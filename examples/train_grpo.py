"""GRPO training against kernel_env with TRL (``pip install -e ".[trl]"``).

The environment owns the reward: TRL's ``environment_factory`` gives the model one tool,
``submit_kernel(code)``, and scores each rollout with the environment's ``get_reward`` (best step;
see environment/training). One trainer keeps every rollout's evaluation in flight at once
(environment/training/trainer.py). Every rollout is written in the playground's episode format; the
starting weights go to <output-dir>/initial, checkpoints to <output-dir>/checkpoint-N, the trained
weights to <output-dir>/final.

    # CPU run that learns (a tiny model built here and taught to submit; a server started here)
    python examples/train_grpo.py --preset cpu --output-dir runs/cpu
    # a coder model on one GPU with vLLM, against a Space or `python app.py` (docs/training.md)
    python examples/train_grpo.py --preset gpu --env-url https://<owner>-<space>.hf.space --output-dir runs/qwen

The server must accept as many concurrent sessions as rollouts per generation batch
(``KERNEL_ENV_MAX_SESSIONS``, default 64).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
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
# Defaults per preset; flags given on the command line win.
PRESETS: dict[str, dict[str, Any]] = {
    # Groups with reward variance: 4 samples at temperature 1.0 of a policy taught to submit, so some submit
    # and some do not; the loss and gradients are non-zero and every weight tensor moves.
    "cpu": dict(model=TINY, scripted=True, temperature=1.0, num_generations=4, batch_size=4, seeds=2, max_steps=2,
                max_completion_length=160, learning_rate=1e-4),
    # Qwen2.5-Coder-1.5B-Instruct on one 80 GB GPU, vLLM colocated (docs/training.md).
    "gpu": dict(model="Qwen/Qwen2.5-Coder-1.5B-Instruct", tasks="gelu_bias,rmsnorm,softmax,silu_mul", seeds=16,
                num_generations=8, batch_size=8, gradient_accumulation_steps=4, max_turns=2,
                max_completion_length=3072, learning_rate=1e-6, beta=0.0, temperature=1.0, max_steps=200,
                save_steps=25, use_vllm=True, vllm_mode="colocate"),
}


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), help="defaults for a run (explicit flags win): "
                   + "; ".join(f"{k}: {', '.join(f'{a}={b}' for a, b in v.items())}" for k, v in PRESETS.items()))
    p.add_argument("--env-url", default=None, help="a running kernel_env server; default: start one on loopback")
    p.add_argument("--model", default=TINY, help="'tiny' (random weights, built here, CPU) or a model id / path")
    p.add_argument("--tasks", default="gelu_bias", help="comma-separated task ids")
    p.add_argument("--curriculum", default=None, help="a server-side curriculum name (rows then carry no task)")
    p.add_argument("--seeds", type=int, default=2, help="seeds per task (dataset rows = tasks x seeds)")
    p.add_argument("--max-turns", type=int, default=2, help="submissions per episode")
    p.add_argument("--feedback", choices=("terse", "full"), default="terse",
                   help="what submit_kernel returns: terse (result line + hints, <= 600 chars) or the full report")
    p.add_argument("--parallel", type=int, default=64,
                   help="evaluations one trainer keeps in flight (1: TRL's serial tool loop)")
    p.add_argument("--scripted", action="store_true",
                   help="the tiny model first taught to submit each task's shortest shipped correct solution\n"
                        "(so non-zero rewards flow; sample it at temperature 1.0 for reward variance)")
    p.add_argument("--cpu", action="store_true", help="force CPU (the tiny model always runs on CPU)")
    p.add_argument("--output-dir", default=None, help="default: a temporary folder")
    p.add_argument("--episodes", default=None, help="rollouts as JSONL (default: <output-dir>/rollouts.jsonl)")
    p.add_argument("--save-steps", type=int, default=0, help="checkpoint every N steps (0: only the final save)")
    p.add_argument("--resume", nargs="?", const=True, default=None,
                   help="resume from the last checkpoint in --output-dir, or from the checkpoint folder given")
    p.add_argument("--lora-r", type=int, default=0, help="train a LoRA adapter of this rank (needs peft); 0: all weights")
    g = p.add_argument_group("passed to GRPOConfig as they are")
    g.add_argument("--num-generations", type=int, default=2, help="rollouts per prompt (the GRPO group)")
    g.add_argument("--batch-size", type=int, default=2, help="per_device_train_batch_size (rollouts per step)")
    g.add_argument("--gradient-accumulation-steps", type=int, default=1)
    g.add_argument("--max-steps", type=int, default=2)
    g.add_argument("--max-completion-length", type=int, default=48,
                   help="tokens for all turns of a rollout: code, tool results and replies")
    g.add_argument("--learning-rate", type=float, default=1e-5)
    g.add_argument("--beta", type=float, default=0.0, help="KL coefficient (0: no reference model)")
    g.add_argument("--temperature", type=float, default=1.0)
    g.add_argument("--use-vllm", action="store_true", help="generate with vLLM (needs vllm)")
    g.add_argument("--vllm-mode", choices=("colocate", "server"), default="colocate")
    g.add_argument("--vllm-server-base-url", default=None, help="with --vllm-mode server (`trl vllm-serve`)")
    g.add_argument("--report-to", default="none", help="none, trackio (pip install trackio), wandb, tensorboard")
    g.add_argument("--grpo", action="append", default=[], metavar="FIELD=VALUE",
                   help="any other GRPOConfig field, e.g. --grpo vllm_gpu_memory_utilization=0.4 (JSON values)")
    first, _ = p.parse_known_args(argv)
    if first.preset:
        p.set_defaults(**PRESETS[first.preset])
    return p.parse_args(argv)


def grpo_config_kwargs(args: argparse.Namespace, output_dir: Path, use_cpu: bool) -> dict[str, Any]:
    """GRPOConfig's keyword arguments for a run: the flags, then ``--grpo FIELD=VALUE`` (checked against
    GRPOConfig's fields)."""
    from trl import GRPOConfig

    kwargs: dict[str, Any] = dict(
        output_dir=str(output_dir), max_steps=args.max_steps, per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps, num_generations=args.num_generations,
        max_completion_length=args.max_completion_length, learning_rate=args.learning_rate, beta=args.beta,
        temperature=args.temperature, use_vllm=args.use_vllm, vllm_mode=args.vllm_mode,
        logging_steps=1, report_to=args.report_to, use_cpu=use_cpu, bf16=not use_cpu,
        save_strategy="steps" if args.save_steps > 0 else "no", save_steps=max(args.save_steps, 1),
        max_tool_calling_iterations=args.max_turns, seed=0, dataloader_num_workers=0)
    if args.vllm_server_base_url:
        kwargs["vllm_server_base_url"] = args.vllm_server_base_url
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    for item in args.grpo:
        name, sep, raw = item.partition("=")
        if not sep or name not in fields:
            raise SystemExit(f"--grpo {item!r}: expected FIELD=VALUE with FIELD a GRPOConfig field "
                             f"(e.g. vllm_gpu_memory_utilization=0.4)")
        try:
            kwargs[name] = json.loads(raw)
        except json.JSONDecodeError:
            kwargs[name] = raw
    return kwargs


def check_installed(args: argparse.Namespace) -> None:
    """Fail before any work when an option needs a package that is missing."""
    import importlib.util
    needs = [("peft", args.lora_r > 0, "--lora-r"), ("vllm", args.use_vllm, "--use-vllm")]
    needs += [(name, name in str(args.report_to).split(","), f"--report-to {name}") for name in ("trackio", "wandb")]
    for module, wanted, flag in needs:
        if wanted and importlib.util.find_spec(module) is None:
            raise SystemExit(f"{flag} needs {module}: pip install {module} (or leave {flag.split()[0]} out)")


def lora_config(rank: int):
    from peft import LoraConfig
    return LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules="all-linear",
                      task_type="CAUSAL_LM")


@contextlib.contextmanager
def environment(url: Optional[str]) -> Iterator[str]:
    if url:
        yield url.rstrip("/")
        return
    from environment.local_server import LocalServer
    with LocalServer(start_timeout_s=240) as server:
        print(f"started a local kernel_env server at {server.url}", flush=True)
        yield server.url


def shipped_solution(task_id: str) -> str:
    """The shortest shipped correct solution of a task."""
    from environment.tasks import get_task
    files = get_task(task_id).solutions.get("correct") or ()
    if not files:
        raise ValueError(f"task {task_id!r} ships no correct solution to script")
    return min((f.read_text() for f in files), key=len)


def scripted_prompts(tasks: list[str]) -> dict[str, list[dict[str, str]]]:
    return {t: [{"role": "system", "content": SCRIPTED_SYSTEM}, {"role": "user", "content": f"Task: {t}"}]
            for t in tasks}


def teach_to_submit(model_path: str, tasks: list[str], url: str) -> None:
    """Teach the tiny model at ``model_path`` to answer each scripted prompt with a submit_kernel call carrying
    the task's shipped solution (a policy that sometimes submits when sampled at temperature 1.0)."""
    from environment.training.tiny_model import imprint, tool_call_reply
    from environment.training.trl_env import KernelToolEnv

    prompts = scripted_prompts(tasks)
    examples = [(prompts[t], tool_call_reply("submit_kernel", code=shipped_solution(t))) for t in tasks]
    loss = imprint(model_path, examples, tools=[KernelToolEnv(url).submit_kernel])
    print(f"scripted policy: the tiny model now submits the shipped solution of {', '.join(tasks)} "
          f"(imprint loss {loss:.4f})", flush=True)


def scripted_rows(tasks: list[str], seeds: range, max_turns: int) -> list[dict[str, Any]]:
    prompts = scripted_prompts(tasks)
    return [{"prompt": prompts[t], "task_id": t, "seed": s, "max_turns": max_turns} for t in tasks for s in seeds]


def starting_model(args: argparse.Namespace, output_dir: Path, url: str, tasks: list[str]) -> str:
    """The model to train: an id / path as given, or the tiny model built (and taught, with --scripted) in
    <output-dir>/tiny-model, reused when it is there already (a resumed run)."""
    if args.model != TINY:
        if args.scripted:
            raise SystemExit("--scripted works with the tiny model only (drop --model, or --preset cpu)")
        return args.model
    path = output_dir / "tiny-model"
    if not (path / "config.json").exists():
        from environment.training.tiny_model import make_tiny_model
        make_tiny_model(path)
        if args.scripted:
            teach_to_submit(str(path), tasks, url)
    return str(path)


def train(args: argparse.Namespace) -> dict[str, Any]:
    from datasets import Dataset
    from trl import GRPOConfig

    from environment.training.trainer import kernel_grpo_trainer_class
    from environment.training.trl_env import EpisodeRecorder, KernelEnvFactory, build_dataset

    check_installed(args)
    output_dir = Path(args.output_dir or tempfile.mkdtemp(prefix="kernel_grpo_"))
    output_dir.mkdir(parents=True, exist_ok=True)
    episodes = Path(args.episodes or output_dir / "rollouts.jsonl")
    use_cpu = args.cpu or args.model == TINY
    config = GRPOConfig(**grpo_config_kwargs(args, output_dir, use_cpu))
    with environment(args.env_url) as url:
        tasks = [t for t in args.tasks.split(",") if t] if not args.curriculum else []
        model = starting_model(args, output_dir, url, tasks)
        if args.scripted:
            dataset = Dataset.from_list(scripted_rows(tasks, range(args.seeds), args.max_turns))
        else:
            dataset = build_dataset(url, tasks, seeds=range(args.seeds), max_turns=args.max_turns,
                                    curriculum=args.curriculum)
        factory = KernelEnvFactory(url, recorder=EpisodeRecorder(episodes), model=args.model,
                                   feedback=args.feedback, parallel=args.parallel)
        trainer = kernel_grpo_trainer_class()(model=model, args=config, train_dataset=dataset,
                                              environment_factory=factory,
                                              peft_config=lora_config(args.lora_r) if args.lora_r else None)
        if not (output_dir / "initial").exists():
            trainer.save_model(str(output_dir / "initial"))
        try:
            trainer.train(resume_from_checkpoint=args.resume)
        finally:
            factory.close()
        trainer.save_model(str(output_dir / "final"))
    history = trainer.state.log_history
    losses = [h["loss"] for h in history if "loss" in h]
    grad_norms = [h["grad_norm"] for h in history if "grad_norm" in h]
    ledger = getattr(trainer, "reward_ledger", [])
    summary = {"env_url": url, "steps": trainer.state.global_step, "losses": losses, "grad_norms": grad_norms,
               "ledger": ledger, "stats": dict(factory.stats), "episodes_file": str(episodes),
               "episodes": len(factory.recorder.records), "output_dir": str(output_dir)}
    print(f"\ntrained {summary['steps']} steps; loss per step: {', '.join(f'{x:.4g}' for x in losses)}; "
          f"grad norm per step: {', '.join(f'{x:.4g}' for x in grad_norms)}")
    scored = [r["reward"] for r in ledger if r["reward"] is not None]
    print(f"rollouts: {len(ledger)}, scored: {len(scored)}, rewards: {[round(x, 3) for x in scored]}, "
          f"environment stats: {summary['stats']}")
    print(f"weights: {output_dir / 'initial'} (start), {output_dir / 'final'} (trained)")
    print(f"episodes ({summary['episodes']}) in {episodes}: open them in the playground's Replay tab")
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    train(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
