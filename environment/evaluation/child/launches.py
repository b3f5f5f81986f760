"""Count real Triton launches (compiled or interpreted): a kernel defined but never launched is a decoy."""
from __future__ import annotations

from collections import Counter


class LaunchCounter:
    """Wraps the launch entry points of triton's JIT and interpreter for the duration of a call."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._saved: list[tuple[type, object]] = []

    def __enter__(self) -> "LaunchCounter":
        import triton.runtime.jit as jit

        classes = [jit.JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction
            classes.append(InterpretedFunction)
        except ImportError:
            pass
        for cls in classes:
            original = cls.run
            self._saved.append((cls, original))
            cls.run = self._wrap(original)
        return self

    def _wrap(self, original):
        counts = self.counts

        def run(fn_self, *args, grid, warmup, **kwargs):
            if not warmup:
                counts[getattr(getattr(fn_self, "fn", None), "__name__", "kernel")] += 1
            return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)

        return run

    def __exit__(self, *exc) -> None:
        for cls, original in reversed(self._saved):
            cls.run = original
        self._saved.clear()

    @property
    def total(self) -> int:
        return sum(self.counts.values())
