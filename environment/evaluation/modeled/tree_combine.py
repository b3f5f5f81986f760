"""`tl.reduce` and `tl.associative_scan` with a custom combine function, vectorised in the interpreter.

The interpreter runs a custom combine (a Welford merge, an online-softmax (max, sum) pair, any
user-written `@triton.jit` combine) once per *element*, each call wrapping scalars in tensors: a
4096-wide row costs ~4096 Python calls, and an honest kernel that reduces with one timed out at the
GPU shape (scored 0.1 as too slow, where an H100 runs it in microseconds). Here the combine is called
on whole slices (flat, padded to a power of two), as the GPU's tree does:
- reduce: adjacent pairs `combine(x[0::2], x[1::2])` until one element is left (an odd tail is carried
  to the next round), so log2(n) calls; the left operand is always the earlier one, so an associative
  combine that is not commutative gives the same result;
- scan: Hillis-Steele, `combine(x[i - d], x[i])` for d = 1, 2, 4, ...: log2(n) calls, earlier operand
  left.
Only the order of floating-point rounding can differ from the interpreter's left fold (a GPU's tree
differs from it too). A combine that cannot run on slices (it raises) falls back to the interpreter's
element-by-element path. Speed only: the modeled counters charge a reduction or scan once per input
element at its entry and suppress the combine's own arithmetic (triton_hooks._reduce_entry), so what
is charged does not change; loads, stores and dots a combine issues are charged per call, and run
here on slices, so the same elements are charged (a combine ignoring its operands runs fewer times,
and does correspondingly less work).
"""
from __future__ import annotations

import functools

import numpy as np

_INSTALLED = False


def _call(op, left: list, right: list, dtypes: list) -> list:
    """combine(left..., right...) on slices; results as arrays of the inputs' dtypes and shape. The slices go in
    flat, padded to a power of two (a block's shape must be) with copies of their last element; the padding's
    results are dropped."""
    shape, size = left[0].shape, left[0].size
    width = 1 << max(0, size - 1).bit_length()
    args = [op.to_tensor(_padded(np.ravel(a), width), d) for a, d in zip(left + right, dtypes + dtypes)]
    out = op.combine_fn.fn(*args)
    out = out if isinstance(out, tuple) else (out,)
    if len(out) != len(left):
        raise ValueError("the combine returned a different number of values than it reduces")
    result = []
    for value, like in zip(out, left):
        data = np.asarray(value.handle.data if hasattr(value, "handle") else getattr(value, "value", value))
        if data.size == width:
            data = np.ravel(data)[:size].reshape(shape)
        elif data.size != 1:
            raise ValueError("the combine did not return one value per element")
        result.append(np.broadcast_to(data, shape).astype(like.dtype))
    return result


def _padded(flat: np.ndarray, width: int) -> np.ndarray:
    """`flat` padded to `width` with copies of its last element (np.pad(mode="edge") costs ~65 us a call even when
    there is nothing to pad: a third of a custom-combine reduction's time)."""
    if flat.size == width:
        return flat
    if not flat.size:
        raise ValueError("an empty slice")   # as np.pad raised: the interpreter's own path then
    return np.concatenate((flat, np.repeat(flat[-1:], width - flat.size)))


def _tree_reduce(op, input) -> list:
    original_axis = op.axis
    input, axis = op.unravel(input, op.axis)
    dtypes = [arg.dtype for arg in input]
    arrays = [np.moveaxis(arg.handle.data, axis, -1) for arg in input]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("operands of different shapes")
    while arrays[0].shape[-1] > 1:
        n = arrays[0].shape[-1]
        even = n - n % 2
        merged = _call(op, [a[..., 0:even:2] for a in arrays], [a[..., 1:even:2] for a in arrays], dtypes)
        arrays = [np.concatenate([m, a[..., even:]], axis=-1) for m, a in zip(merged, arrays)]
    ret = []
    for array, dtype in zip(arrays, dtypes):
        data = array[..., 0]
        if op.keep_dims:
            data = np.expand_dims(data, axis) if original_axis is not None else data.reshape((1,) * array.ndim)
        elif original_axis is None:
            data = data.item()
        ret.append(op.to_tensor(data, dtype))
    return ret


def _tree_scan(op, input) -> list:
    dtypes = [arg.dtype for arg in input]
    arrays = [np.moveaxis(arg.handle.data, op.axis, -1) for arg in input]
    n, step = arrays[0].shape[-1], 1
    while step < n:
        later = _call(op, [a[..., :-step] for a in arrays], [a[..., step:] for a in arrays], dtypes)
        arrays = [np.concatenate([a[..., :step], m], axis=-1) for a, m in zip(arrays, later)]
        step *= 2
    return [op.to_tensor(np.ascontiguousarray(np.moveaxis(a, -1, op.axis)), d) for a, d in zip(arrays, dtypes)]


def _with_fallback(vectorised, original):
    @functools.wraps(original)
    def run(self, input):
        try:
            return vectorised(self, input)
        except Exception:  # noqa: BLE001 - a combine that only works on scalars: the interpreter's own path
            return original(self, input)
    return run


def install(interp) -> None:
    """Replace ReduceOps.generic_reduce and ScanOps.generic_scan (once per process)."""
    global _INSTALLED
    if _INSTALLED:
        return
    _INSTALLED = True
    interp.ReduceOps.generic_reduce = _with_fallback(_tree_reduce, interp.ReduceOps.generic_reduce)
    interp.ScanOps.generic_scan = _with_fallback(_tree_scan, interp.ScanOps.generic_scan)
