"""A tiny causal LM with random weights and a tokenizer trained here, for CPU smoke runs without any download.

The tokenizer is a byte-level BPE learned from the project's own text (prompts, references, shipped
solutions) with the Qwen2.5 chat template TRL ships (it renders tool calls, and TRL knows how to
parse its ``<tool_call>`` replies). The model is a 2-layer Qwen2 of a few hundred thousand
parameters: its replies are noise, which is the point: the plumbing is tested, not the policy.

>>> path = make_tiny_model("/tmp/tiny-kernel-lm")   # a folder from_pretrained() reads
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]


def _corpus() -> Iterator[str]:
    from environment.agent import SYSTEM_PROMPT
    from environment.tasks import list_tasks
    from environment.training.trl_env import TOOL_INSTRUCTIONS

    yield SYSTEM_PROMPT + TOOL_INSTRUCTIONS
    problems = Path(__file__).resolve().parents[1] / "tasks" / "problems"
    for task in list_tasks():
        yield task.reference_code
    for path in sorted(problems.glob("*/solutions/correct/*.py")):
        yield path.read_text()
    yield '{"name": "submit_kernel", "arguments": {"code": "import torch"}}'


def make_tokenizer(vocab_size: int = 2000):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, chat_template=qwen2_5_chat_template,
                                   additional_special_tokens=["<|im_start|>", "<tool_call>", "</tool_call>"])


def make_tiny_model(path: str | Path, *, seed: int = 0, hidden_size: int = 64, layers: int = 2) -> Path:
    """Write a random-weight Qwen2 model and its tokenizer to ``path`` (from_pretrained-ready)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    path = Path(path)
    tokenizer = make_tokenizer()
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=8192, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id, do_sample=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path



def tool_call_reply(name: str, **arguments: str) -> str:
    """An assistant reply calling one tool, as the Qwen2.5 template writes it."""
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call><|im_end|>"


def imprint(path: str | Path, examples: list[tuple[list[dict[str, str]], str]], tools: list, *, steps: int = 300,
            lr: float = 1e-2, target_loss: float = 0.01) -> float:
    """Teach the model at ``path`` to answer each prompt (rendered with ``tools``) with its completion, by
    teacher forcing until the mean per-token loss is under ``target_loss``: a scripted policy that still
    goes through TRL's generation, tool-call parsing and loss (sample it at a low temperature, e.g. 0.3).
    Keep prompts short: the cost grows with their length. Returns the final loss."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    batches = []
    for prompt, completion in examples:
        prefix = tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=False)
        prompt_ids = tokenizer(prefix, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt_ids + tokenizer(completion, add_special_tokens=False)["input_ids"]])
        labels = ids.clone()
        labels[0, :len(prompt_ids)] = -100
        batches.append((ids, labels))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    loss = float("inf")
    for _ in range(steps):
        total = sum(model(input_ids=ids, labels=labels).loss for ids, labels in batches) / len(batches)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        loss = float(total.item())
        if loss < target_loss:
            break
    model.save_pretrained(path)
    return loss
