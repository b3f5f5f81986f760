"""Launches whose run order matters. On a GPU a launch's programs run in an order nobody chooses; the sampled replay
runs its sample first, so the sampled programs take an atomic counter's first tickets and see none of the flags the
other programs would have set. Two ways that order could be used, each closed here:

- a launch that marks which programs ran first, for a later launch to redo only the compared rows (red team a257):
  a launch the replay completes whole is run again from the start, every program in an order drawn from the secret;
- programs whose values depend on the order (helper-71, helper-73): the value an atomic returns (a ticket, a lock's
  old value, the count telling the last program to finish), read from the trusted rebuild's source, or a load of
  bytes an earlier program of the launch stored, plainly or atomically (a counter read back, flags summed: the
  launch's byte runs, modeled/byte_runs.py). A row computed only under a ticket below 256, or while fewer than 40
  flags were set, was right in every sampled and compared row and wrong in most rows on a GPU. Such a launch is run
  whole, in the secret's order, where its grid allows (sampled.COMPLETE_PROGRAMS); past that it is the model's
  limit, named (no speed credit: the sample stands for no program). Atomics that are statements of their own
  (split-K partial sums, a loss added into a scalar) and loads of inputs are sampled as before."""
from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from typing import Any

import numpy as np

from environment.evaluation.child import gpu_numerics
from environment.evaluation.modeled.triton_launch import TritonLaunch

ATOMICS = frozenset({"atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and",
                     "atomic_or", "atomic_xor"})
LIMIT = "order-dependent values"   # names the construct in the limit's message


def values_used(fn: Any) -> bool:
    """Whether the kernel `fn` (the interpreter's function, or a JIT wrapper of it), or a @triton.jit function it
    calls by name, uses the value an atomic call returns: any atomic call that is not a statement of its own
    (`t = tl.atomic_add(...)`, `if tl.atomic_cas(...) == 0:`, a helper's `return tl.atomic_add(...)`). Read from
    the trusted rebuild's source (the replayer loads it from a file)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction
    seen: set[int] = set()

    def uses(f: Any) -> bool:
        python = getattr(f, "fn", f)
        if id(python) in seen:
            return False
        seen.add(id(python))
        tree = ast.parse(textwrap.dedent(inspect.getsource(python)))
        alone = {id(s.value) for s in ast.walk(tree) if isinstance(s, ast.Expr)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ATOMICS and id(node) not in alone:
                return True
            callee = python.__globals__.get(name) if isinstance(node.func, ast.Name) else None
            if isinstance(callee, (JITFunction, InterpretedFunction)) and uses(callee):
                return True
        return False
    return uses(fn)


def rest(grid: tuple, chosen: list, completable: bool, name: str, limit: str) -> list:
    """((x, y, z), "complete") of every program of the launch not in `chosen`, for an order-dependent launch to run
    whole in the secret's order; past the grid the replay completes (`completable` False) a RuntimeError
    naming the model's `limit`."""
    if not completable:
        programs = int(np.prod(grid))
        raise RuntimeError(f"{limit} ({LIMIT}): what programs of {name} read (an atomic's value, what another "
                           f"program stored) depends on the order its {programs} programs run in on a GPU, which a "
                           "sample run first cannot stand for")
    run = {p for p, _ in chosen}
    return [(q, "complete") for q in itertools.product(*map(range, grid)) if q not in run]


def whole_in_secret_order(sink, run, programs: list, seed: int, name: str, grid: tuple):
    """Run a launch with atomics that its completion runs whole again from the start, every program in an order
    drawn from the secret (the sample's stores and atomics undone, its counts dropped). Run first, the sampled
    programs were the first to take an atomic counter's tickets: a launch could mark which programs were sampled,
    and a later launch redo the compared rows only (red team a257). Returns the programs in their run order and
    the new run's store record."""
    import triton.runtime.interpreter as interp
    for ptrs, old, mask in reversed(sink.launch.undo):
        interp._interpreter._native.store(ptrs, old, mask)
    first = sink.launch
    sink.launch = TritonLaunch(first.name, first.signature, first.addresses)
    sink.launch.access_budget = first.access_budget
    order = [programs[k] for k in np.random.default_rng([seed, 0x0DE2]).permutation(len(programs))]
    with gpu_numerics.stores_recorded(name, grid) as stored:
        run(order)
    return order, stored
