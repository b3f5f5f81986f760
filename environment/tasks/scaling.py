"""Problem sizes of a KernelBench file: found in its module-level globals, scaled to CPU trial sizes.

A KernelBench file states its sizes as top-level assignments (``batch_size = 128``,
``N = 2048 * 2``, ``height = width = 128``, ``input_shape = (32768,)``) and derives others from
them (``bias_shape = (out_channels, 1, 1)``). Here:

- a *leaf* is a top-level integer (any case, any constant expression) or one element of a tuple
  of integers (named ``<name>__<i>``, the tuple rebuilt from its elements);
- a *derived* global is an assignment whose right side reads a leaf; it is re-run whenever a leaf
  changes (``Derived``), so setting ``out_channels`` also resizes ``bias_shape``;
- a leaf is *scalable* when it is a size (>= MIN_SCALABLE, not a kernel/stride/padding/group/...
  parameter) and the model's own code does not read it (the children run the unmodified file).

``choose_cpu_shape`` halves the largest scalable leaf until the problem fits a memory and FLOP
budget (measured on the meta device: nothing is allocated), then prefers odd sizes (sizes that are
not multiples of any block size expose unmasked tails) and keeps the first variant the reference
runs on, for real, within the time budget.
"""
from __future__ import annotations

import ast
import re
import symtable
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
from torch.utils.flop_counter import FlopCounterMode

MIN_SCALABLE = 16
# Names of parameters that are not sizes: changing them changes the problem, not its scale.
STRUCTURAL = re.compile(r"kernel|stride|pad|dilat|group|pool|eps|drop|clamp|min|max|slope|divisor|axis|head|"
                        r"factor|scale|value|^p$|return|bias|constant", re.IGNORECASE)
SPATIAL = re.compile(r"height|width|depth|length|seq|_in$|^l$|^h$|^w$|^d$", re.IGNORECASE)


@dataclass(frozen=True)
class Budget:
    """What one CPU trial may cost: bytes of inputs, parameters and outputs; counted FLOPs
    (matmuls, convolutions); seconds of one real reference forward at load."""
    max_bytes: int = 16 << 20
    max_flops: float = 2e8
    max_seconds: float = 0.5


class ScalingError(ValueError):
    """A problem that cannot be brought to CPU trial size; the message is the reason."""


@dataclass(frozen=True)
class Sizes:
    leaves: dict[str, int]          # every integer leaf at the file's own value
    scalable: tuple[str, ...]       # the leaves that are sizes and may be changed
    derived: str                    # source re-run after a leaf changes ('' when nothing is derived)


def _const_int(node: ast.AST) -> Optional[int]:
    """The value of an integer constant expression (no names), else None."""
    if any(isinstance(n, (ast.Name, ast.Call, ast.Attribute)) for n in ast.walk(node)):
        return None
    try:
        value = eval(compile(ast.Expression(node), "<size>", "eval"), {"__builtins__": {}})  # constants only
    except Exception:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _model_reads(source: str) -> set[str]:
    """Module globals read by the model's code (classes, and functions other than the input
    builders): parameters and locals of those functions are not globals."""
    names: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        names.update(s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global())
        for child in table.get_children():
            walk(child)

    for table in symtable.symtable(source, "<reference>", "exec").get_children():
        if table.get_name() not in ("get_inputs", "get_init_inputs"):
            walk(table)
    return names


def find_sizes(source: str) -> Sizes:
    tree = ast.parse(source)
    leaves: dict[str, int] = {}
    derived: list[str] = []
    depends: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        unpack = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(unpack, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                len(unpack.elts) == len(node.value.elts) and all(isinstance(t, ast.Name) for t in unpack.elts):
            values = [_const_int(e) for e in node.value.elts]   # depth, height, width = 16, 32, 32
            leaves.update({t.id: v for t, v in zip(unpack.elts, values) if v is not None})
            continue
        if not all(isinstance(t, ast.Name) for t in node.targets):
            continue
        names = [t.id for t in node.targets]
        value = _const_int(node.value)
        if value is not None:
            leaves.update({n: value for n in names})
            continue
        if isinstance(node.value, ast.Tuple) and node.value.elts:
            elements = [_const_int(e) for e in node.value.elts]
            if all(e is not None for e in elements):
                for name in names:
                    parts = [f"{name}__{i}" for i in range(len(elements))]
                    leaves.update(zip(parts, elements))
                    derived.append(f"{name} = ({', '.join(parts)},)")
                    depends.add(name)
                continue
        reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if reads & (set(leaves) | depends):
            derived.append(ast.unparse(node))
            depends.update(names)
    model_reads = _model_reads(source)
    scalable = tuple(name for name, value in leaves.items()
                     if value >= MIN_SCALABLE and not STRUCTURAL.search(name.split("__")[0]) and name != "k"
                     and name not in model_reads and name.split("__")[0] not in model_reads)
    return Sizes(leaves=leaves, scalable=scalable, derived="\n".join(derived))


def apply(module: types.ModuleType, sizes: dict[str, int], derived: str) -> None:
    """Set leaves and re-run the derived assignments (each on its own: a name not set yet is skipped)."""
    module.__dict__.update(sizes)
    for line in filter(None, derived.splitlines()):
        try:
            exec(line, module.__dict__)  # the file's own top-level statements, already run at import
        except NameError:
            pass


@dataclass(frozen=True)
class Cost:
    bytes: int
    flops: float


def _tensors(value: Any) -> list[torch.Tensor]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return [t for t in items if isinstance(t, torch.Tensor)]


def meta_cost(module: types.ModuleType) -> Cost:
    """Bytes and FLOPs of one forward at the module's current sizes, on the meta device."""
    with torch.device("meta"):
        init = list(module.get_init_inputs())
        inputs = list(module.get_inputs())
        model = module.Model(*init)
        held = sum(t.numel() * t.element_size() for t in _tensors(inputs))
        if isinstance(model, torch.nn.Module):
            held += sum(t.numel() * t.element_size() for t in [*model.parameters(), *model.buffers()])
        try:
            counter = FlopCounterMode(display=False)
            with torch.no_grad(), counter:
                out = model(*inputs)
            held += sum(t.numel() * t.element_size() for t in _tensors(out))
            flops = float(counter.get_total_flops())
        except Exception:  # an op without a meta kernel: the real run at load bounds it instead
            flops = 0.0
    return Cost(bytes=held, flops=flops)


DIVISOR = re.compile(r"group|head", re.IGNORECASE)


def _halved(sizes: dict[str, int], sizes0: Sizes) -> Optional[dict[str, int]]:
    """Halve the scalable size furthest above its floor. Sizes equal in the file are halved
    together (a square stays square, a batch that must match a feature count still does); a size
    divisible by a group or head count stays a multiple of it (batch sizes excepted)."""
    scalable, original = sizes0.scalable, sizes0.leaves
    divisors = [v for n, v in original.items() if n not in scalable and v > 1 and DIVISOR.search(n.split("__")[0])]
    floor = {n: min(sizes[n], 8 if SPATIAL.search(n) else 4) for n in scalable}

    def half(n: str) -> int:
        new = max(floor[n], (sizes[n] + 1) // 2)
        for g in divisors:
            if original[n] % g == 0 and "batch" not in n.lower():
                new = max(g, new - new % g)
        return min(new, sizes[n])

    candidates = [n for n in scalable if half(n) < sizes[n]]
    if not candidates:
        return None
    name = max(candidates, key=lambda n: (sizes[n] / max(floor[n], 1), n))
    together = [n for n in candidates if original[n] == original[name] and sizes[n] == sizes[name]]
    return dict(sizes, **{n: half(n) for n in together})


def _odd(sizes: dict[str, int], sizes0: Sizes) -> dict[str, int]:
    """Each shrunk size made odd (one less), so no size is a multiple of a block size; sizes equal
    in the file stay equal."""
    return {n: (v - 1 if n in sizes0.scalable and v != sizes0.leaves[n] and v % 2 == 0 and v > 2 else v)
            for n, v in sizes.items()}


def choose_cpu_shape(module: types.ModuleType, sizes: Sizes, budget: Budget,
                     run: Callable[[types.ModuleType], float]) -> dict[str, int]:
    """Every leaf at CPU trial size (the scalable ones shrunk as needed, the rest at the file's
    values). `run` runs the reference for real at the module's current sizes and returns its
    seconds (raising when the reference cannot run there)."""
    current = dict(sizes.leaves)
    while True:
        current = _within_memory(module, current, sizes, budget)
        errors, slow = [], None
        for attempt in (_odd(current, sizes), current):
            apply(module, attempt, sizes.derived)
            try:
                seconds = run(module)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                continue
            if seconds <= budget.max_seconds:
                return attempt
            slow = seconds
            break
        if slow is None:
            raise ScalingError(f"the reference does not run at the scaled sizes {_text(current, sizes.scalable)}: "
                               + "; ".join(dict.fromkeys(errors)))
        smaller = _halved(current, sizes)
        if smaller is None:
            raise ScalingError(f"one reference forward takes {slow:.2f} s at the smallest sizes it can be scaled to, "
                               f"over the {budget.max_seconds} s CPU budget")
        current = smaller


def _within_memory(module: types.ModuleType, current: dict[str, int], sizes: Sizes, budget: Budget) -> dict[str, int]:
    while True:
        apply(module, current, sizes.derived)
        cost = meta_cost(module)
        if cost.bytes <= budget.max_bytes and cost.flops <= budget.max_flops:
            return current
        smaller = _halved(current, sizes)
        if smaller is None and not sizes.scalable:
            raise ScalingError(f"one forward needs {cost.bytes / 2**20:.1f} MiB and {cost.flops:.2g} FLOPs, over the "
                               f"CPU budget ({budget.max_bytes / 2**20:.0f} MiB, {budget.max_flops:.0g} FLOPs), and "
                               "no size is a module-level global the harness could set (write sizes as globals, "
                               "e.g. `N = 8192`, used by get_inputs/get_init_inputs)")
        if smaller is None:
            raise ScalingError(f"at the smallest sizes it can be scaled to ({_text(current, sizes.scalable)}) one "
                               f"forward still needs {cost.bytes / 2**20:.1f} MiB and {cost.flops:.2g} FLOPs, over "
                               f"the CPU budget ({budget.max_bytes / 2**20:.0f} MiB, {budget.max_flops:.0g} FLOPs); sizes "
                               "written as literals inside get_inputs or the model cannot be scaled")
        current = smaller


def _text(values: dict[str, int], names: tuple[str, ...]) -> str:
    return ", ".join(f"{n}={values[n]}" for n in names) or "no scalable size"


class Derived(types.ModuleType):
    """A reference module whose derived globals follow its sizes: setting a leaf re-runs them."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name != "__derived__" and self.__dict__.get("__derived__"):
            apply(self, {}, self.__dict__["__derived__"])
