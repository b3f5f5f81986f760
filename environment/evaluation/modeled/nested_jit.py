"""Calls of @triton.jit helpers from a kernel under the interpreter, without re-patching the language.

Every call of a jit helper from a kernel body (InterpretedFunction.__call__: tl.sum, tl.max and the
rest of triton.language.standard are such helpers) runs `_patch_lang` again: an
`inspect.getmembers` scan of four modules, about half a millisecond a call, most of the
interpreter's time in a kernel that reduces a block per loop iteration. The scan changes nothing
when every patch it would install is already in force:
- the class-level ones (tensor methods, dtype.to_ir, ...) while a launch-level patch (GridExecutor,
  the sampled replay) is in force: every launch-level patch installs them, and restores them at
  its end;
- the module-level ones of each language module the helper's globals hold (tl, tl.core): in force
  when a launch-level patch in force covers that module, or when an earlier helper call patched it
  while none did (a helper's patch is never restored: it stays for the process; a launch-level
  patch that covers the module later restores it to those patched values).
Then the call skips the scan: the same patched builtins run (stateless functions), so what runs and
what is counted is the same, only sooner. Launch-level patches always run.
"""
from __future__ import annotations

import functools
import inspect

_IN_FORCE: list[frozenset] = []   # per launch-level patch not yet restored, the language modules it covers
_LEAKED: set = set()              # language modules a helper's (never restored) patch left patched
_NESTED: list = []                # the helper whose call is about to patch (consumed by that call)
_INSTALLED = False


def _langs(interp, fn) -> frozenset:
    """The language modules _patch_lang patches for fn (those its globals hold)."""
    return frozenset(id(v) for v in fn.__globals__.values()
                     if inspect.ismodule(v) and v in (interp.tl, interp.tl.core))


def install(interp) -> None:
    """Wrap the interpreter's _patch_lang and InterpretedFunction.__call__ (once per process)."""
    global _INSTALLED
    if _INSTALLED:
        return
    _INSTALLED = True
    original_patch = interp._patch_lang
    original_call = interp.InterpretedFunction.__call__

    @functools.wraps(original_patch)
    def patch_lang(fn):
        if _NESTED and _NESTED[-1] is fn:  # a helper's call: skipped when everything it patches is patched
            _NESTED.pop()
            langs = _langs(interp, fn)
            covered = frozenset().union(*_IN_FORCE) if _IN_FORCE else None
            if covered is not None and langs <= covered | _LEAKED:
                return None  # the nested call ignores what _patch_lang returns
            if covered is not None:
                _LEAKED.update(langs - covered)
            return original_patch(fn)
        scope = original_patch(fn)
        _IN_FORCE.append(_langs(interp, fn))
        restore = scope.restore

        def restore_and_pop() -> None:
            restore()
            _IN_FORCE.pop()
        scope.restore = restore_and_pop
        return scope

    @functools.wraps(original_call)
    def call(self, *args, **kwargs):
        _NESTED.append(self.fn)
        try:
            return original_call(self, *args, **kwargs)
        finally:
            if _NESTED and _NESTED[-1] is self.fn:  # not consumed (the call failed before patching)
                _NESTED.pop()

    interp._patch_lang = patch_lang
    interp.InterpretedFunction.__call__ = call
