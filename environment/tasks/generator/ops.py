"""The op vocabulary of generated problems and the KernelBench-format source built from a draw.

A draw is a chain of ops on a running tensor ``t``; binary ops each consume a fresh input, so every
input is read by construction (the validation checks it on real values too). The difficulty level
(1-5) sets how many ops, which classes of op, whether sizes are irregular and the dtype.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

FAMILIES = ("elementwise", "reduction", "normalization", "matmul_epilogue", "attention")
LEVELS = (1, 2, 3, 4, 5)

SIMPLE = ["torch.relu({t})", "{t} * {c}", "{t} + {c}", "torch.abs({t})", "{t} - {c}"]
TRANSCENDENTAL = ["torch.tanh({t})", "torch.sigmoid({t})", "F.gelu({t})", "F.silu({t})", "F.softplus({t})",
                  "torch.exp(-torch.abs({t}))", "torch.clamp({t}, -{c}, {c})", "F.leaky_relu({t}, 0.1)"]
BINARY = ["{t} * {y}", "{t} + {y}", "{t} - {y}", "torch.maximum({t}, {y})"]
ROW = ["{t} + {b}", "{t} * {b}"]            # a vector input broadcast over the last dimension
REDUCE = ["{t}.sum(dim=-1)", "{t}.mean(dim=-1)", "{t}.amax(dim=-1)", "torch.logsumexp({t}, dim=-1)",
          "{t}.pow(2).sum(dim=-1).sqrt()"]
NORMS = {
    "layernorm": "F.layer_norm({t}, ({t}.shape[-1],), {w}, {b}, eps=1e-5)",
    "rmsnorm": "{t} * torch.rsqrt({t}.pow(2).mean(-1, keepdim=True) + 1e-6) * {w}",
    "softmax": "torch.softmax({t}, dim=-1)",
    "l2norm": "F.normalize({t}, dim=-1) * {w}",
}
CONSTANTS = (0.5, 1.5, 2.0, 3.0)


@dataclass
class Draw:
    family: str
    level: int
    inputs: list[tuple[str, str]] = field(default_factory=list)   # (name, shape expression over the size globals)
    lines: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)                  # short names, for the description
    sizes: dict[str, int] = field(default_factory=dict)
    dtype: str = "float32"

    def add_input(self, shape: str, prefix: str = "y") -> str:
        name = f"{prefix}{len(self.inputs)}"
        self.inputs.append((name, shape))
        return name

    def op(self, template: str, **names: str) -> None:
        self.lines.append("t = " + template.format(t="t", **names))
        self.ops.append(op_name(template))


def op_name(template: str) -> str:
    """A short name for the description: the function, or the operator and what it combines with."""
    call = re.match(r"(?:torch\.|F\.)?(\w+)\(", template) or re.match(r"\{t\}\.(\w+)\(", template)
    if call:
        return call.group(1)
    symbol = next((w for s, w in (("*", "multiply"), ("+", "add"), ("-", "subtract"), ("@", "matmul")) if s in template),
                  "op")
    other = "an input" if "{y}" in template else "a row vector" if "{b}" in template else "a constant"
    return f"{symbol} {other}"


def _size(rng: random.Random, low: int, high: int, irregular: bool) -> int:
    value = rng.randint(low, high)
    if irregular:
        return value | 1                                  # odd: never a multiple of a block size
    return max(16, value - value % 16)


def _chain(draw: Draw, rng: random.Random, n: int, row_shape: str, full_shape: str) -> None:
    classes = SIMPLE + (TRANSCENDENTAL if draw.level >= 2 else [])
    for i in range(n):
        kind = rng.random()
        if kind < 0.3 and draw.level >= 1:
            draw.op(rng.choice(BINARY), y=draw.add_input(full_shape))
        elif kind < 0.45 and draw.level >= 3:
            draw.op(rng.choice(ROW), b=draw.add_input(row_shape, "b"))
        else:
            draw.op(rng.choice(classes), c=str(rng.choice(CONSTANTS)))


def draw(family: str, level: int, rng: random.Random) -> Draw:
    d = Draw(family=family, level=level, dtype="float16" if level >= 5 and family != "attention" else "float32")
    irregular = level >= 2
    n_ops = level + 1
    if family in ("elementwise", "reduction", "normalization"):
        d.sizes = {"M": _size(rng, 8, 64, irregular), "N": _size(rng, 64, 384, irregular)}
        x = d.add_input("M, N", "x")
        d.lines.append(f"t = {x}")
        if family == "elementwise":
            _chain(d, rng, n_ops, "N", "M, N")
        elif family == "reduction":
            _chain(d, rng, max(1, n_ops - 1), "N", "M, N")
            d.op(rng.choice(REDUCE))
            if level >= 3:
                d.op(rng.choice(TRANSCENDENTAL), c=str(rng.choice(CONSTANTS)))
        else:
            _chain(d, rng, max(0, n_ops - 2), "N", "M, N")
            name = rng.choice(sorted(NORMS) if level >= 2 else ["softmax", "rmsnorm"])
            d.op(NORMS[name], w=d.add_input("N", "w") if "{w}" in NORMS[name] else "",
                 b=d.add_input("N", "b") if "{b}" in NORMS[name] else "")
            d.ops[-1] = name
            _chain(d, rng, 1 if level >= 3 else 0, "N", "M, N")
    elif family == "matmul_epilogue":
        d.sizes = {"M": _size(rng, 16, 96, irregular), "K": _size(rng, 32, 160, irregular),
                   "N": _size(rng, 32, 160, irregular)}
        x, w = d.add_input("M, K", "x"), d.add_input("K, N", "w")
        d.lines.append(f"t = {x} @ {w}")
        d.ops.append("matmul")
        d.op(rng.choice(ROW), b=d.add_input("N", "b"))
        _chain(d, rng, max(1, n_ops - 1), "N", "M, N")
    elif family == "attention":
        d.sizes = {"B": rng.randint(1, 2), "H": rng.randint(1, 3), "S": _size(rng, 16, 64, irregular),
                   "D": rng.choice((16, 32))}
        q, k, v = (d.add_input("B, H, S, D", p) for p in ("q", "k", "v"))
        d.lines.append(f"s = ({q} @ {k}.transpose(-2, -1)) * (1.0 / math.sqrt({q}.shape[-1]))")
        d.ops.append("q @ k^T")
        if level >= 3:
            d.lines.append("s = s.masked_fill(torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool, "
                           "device=s.device).triu(1), float('-inf'))")
            d.ops.append("causal mask")
        d.lines.append(f"t = torch.softmax(s, dim=-1) @ {v}")
        d.ops += ["softmax", "@ v"]
        _chain(d, rng, max(0, level - 2), "D", "B, H, S, D")
    else:
        raise ValueError(f"unknown family {family!r}; families: {', '.join(FAMILIES)}")
    return d


def source(d: Draw, doc: str) -> str:
    args = ", ".join(name for name, _ in d.inputs)
    body = "".join(f"        {line}\n" for line in d.lines)
    sizes = "".join(f"{k} = {v}\n" for k, v in d.sizes.items())
    dtype = "" if d.dtype == "float32" else f", dtype=torch.{d.dtype}"
    builders = ", ".join(f"torch.randn({shape}{dtype})" for _, shape in d.inputs)
    return (f'import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n'
            f'class Model(nn.Module):\n    """{doc}"""\n\n    def __init__(self):\n        super().__init__()\n\n'
            f'    def forward(self, {args}):\n{body}        return t\n\n\n{sizes}\n\n'
            f'def get_inputs():\n    return [{builders}]\n\n\ndef get_init_inputs():\n    return []\n')
