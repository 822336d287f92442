"""Kernels written into a given array, for compiled plans on ``cpu`` (``core/compiler/buffers.py``).

A plan's replay may let a kernel write its result into an array it names (``out=``): an input
that dies at that kernel (``Add`` into the ``MatMul`` result it adds a bias to) or an array the plan
keeps from one replay to the next. ``into_kernel`` gives, for a step, the function that does it
(called as the kernel is, plus ``out=``; it returns what the kernel returns) and the inputs whose
array it may be; the values are the kernel's own, bit for bit (the same numpy calls, or calls whose
results are the same: ``np.copyto(out, 0, where=y <= 0)`` for ReLU's gradient selects exactly as
the kernel's ``where``). ``fresh_outputs`` says which kernels always return new arrays, shared with
nothing (so a plan may write over them once nothing reads them any more).

>>> import numpy as np
>>> from webgrad.dtypes import float32
>>> fn, inplace, _ = into_kernel("Add", {}, [((2,), float32), ((2,), float32)], ((2,), float32))
>>> a = np.ones(2, np.float32)
>>> fn(a, a, out=a) is a, a.tolist(), inplace
(True, [2.0, 2.0], (0, 1))
"""
from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np

from webgrad import kernel_names as K

from .backend_dtypes import np_dtype
from .elementwise import _SAME_WIDTH_INT, _ZERO
from .fused import UFUNCS, fused_kernel, fusible, scratch_count
from .losses import softmax_cross_entropy_joint

_GRAD = "Grad"   # a native VJP's step is named for its kernel: "ReluGrad" (core/compiler/tracer.py)
FRESH = frozenset(UFUNCS) | {K.RELU, K.MATMUL, K.SUM, K.SOFTMAX_CROSS_ENTROPY, K.MATMUL + _GRAD, K.RELU + _GRAD,
                              K.SOFTMAX_CROSS_ENTROPY + _GRAD}
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def never_raises(name: str) -> bool:
    """Whether plan step ``name`` cannot raise (a ufunc kernel or chain, under the replay's quiet
    numpy state; a Fill): a plan donates a place's data only where no step after can raise."""
    return name in UFUNCS or name == K.FILL or name.startswith("Fused[")


def fresh_outputs(name: str) -> bool:
    """Whether kernel (or plan step) ``name`` always returns arrays of its own, sharing memory with
    no input and with nothing else (a fused chain's ``Fused[...]`` allocates its result too; a joint
    step ``A+AGrad`` when both are fresh).

    >>> fresh_outputs("MatMul"), fresh_outputs("Reshape")
    (True, False)
    """
    return name.startswith("Fused[") or all(part in FRESH for part in name.split("+"))


JOINT = {K.SOFTMAX_CROSS_ENTROPY: softmax_cross_entropy_joint}


def joint_kernel(name: str):
    """The kernel computing kernel ``name`` and its native VJP at once (``core/compiler/joint.py``):
    ``fn(*inputs, dy, **attrs) -> (*outputs, *input gradients)``; None where there is none."""
    return JOINT.get(name)


class Form(NamedTuple):
    """A step written into a given array: ``fn(*inputs, out=array, **attrs)`` (and ``scratch=`` the
    arrays of ``scratch``'s (shape, dtype) where there are any); ``out`` may be the array of the
    inputs at positions ``inplace``."""
    fn: object
    inplace: tuple
    scratch: tuple = ()


def _relu(x, *, out):
    return np.maximum(x, _ZERO[x.dtype], out=out)


def _relu_grad(dy, y, *, out):
    """ReLU's native VJP (``vjps._relu``: +0 where y <= 0, dy elsewhere, so dy passes at NaN) into
    ``out``: dy's bits times the kept mask, as the VJP's own select does on large arrays (a masked
    ``np.copyto`` is ~10x slower)."""
    it = _SAME_WIDTH_INT[dy.dtype.itemsize]
    keep = np.logical_not(np.less_equal(y, _ZERO[dy.dtype]))
    np.multiply(dy.view(it), keep, out=out.view(it), dtype=it)
    return (out,)


def _matmul(a, b, *, out, transpose_a=False, transpose_b=False):
    """The 2-d ``MatMul`` kernel (linalg.matmul's plain case: one BLAS call) into ``out``."""
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b, out=out)


def _same_float(metas, out_meta) -> bool:
    dtype = out_meta[1]
    return dtype.is_floating and all(m[1] is dtype and m[0] == out_meta[0] for m in metas)


def _elementwise(name, attrs, metas, out_meta):
    """A ufunc kernel (no attrs, one float dtype): the ufunc itself; ``out`` may be any input of the
    result's shape (numpy computes elementwise over identical memory exactly)."""
    if not fusible(name, attrs, [m[1] for m in metas]) or out_meta[1] is not metas[0][1]:
        return None
    return Form(UFUNCS[name], tuple(k for k, m in enumerate(metas) if m[0] == out_meta[0]))


def _relu_into(name, attrs, metas, out_meta):
    return Form(_relu, (0,)) if _same_float(metas, out_meta) else None


def _relu_grad_into(name, attrs, metas, out_meta):
    """Into dy's array (not y's: it is read after dy is written); numpy floats only (bfloat16's
    ml_dtypes type has no same-width integer view here)."""
    if not _same_float(metas, out_meta) or np_dtype(out_meta[1]).kind != "f":
        return None
    return Form(_relu_grad, (0,))


def _matmul_into(name, attrs, metas, out_meta):
    """Two matrices of one BLAS float dtype, summing over more than one element (the kernel's
    product over one element is a broadcast multiply instead); never in place (BLAS reads its
    inputs while it writes)."""
    (sa, da), (sb, db) = metas
    inner = sa[0] if attrs.get("transpose_a") else sa[-1]
    if len(sa) != 2 or len(sb) != 2 or inner <= 1 or not (da is db and db is out_meta[1]):
        return None
    return Form(_matmul, ()) if np_dtype(da) in _BLAS_DTYPES else None


def _fused_into(ops, metas, out_meta):
    """A fused chain (``fused.fused_source(into=True)``): its last op writes into ``out``, which may be
    any input of the result's shape; its other ops into scratch arrays (of one block's rows where the
    chain runs in row blocks: ``fused.block_rows``)."""
    shape, dtype = out_meta
    fn = fused_kernel(ops, shape, dtype, into=True, in_shapes=[m[0] for m in metas])
    scratch = out_meta if fn.rows is None else ((fn.rows, *shape[1:]), dtype)
    return Form(fn, tuple(k for k, m in enumerate(metas) if m == out_meta), (scratch,) * scratch_count(ops))


_INTO = {K.RELU: _relu_into, K.RELU + _GRAD: _relu_grad_into, K.MATMUL: _matmul_into}


def into_kernel(name: str, attrs: dict, metas: list, out_meta: tuple, fn=None) -> Form | None:
    """The ``Form`` of plan step ``name`` (its kernel function ``fn``) with ``attrs``, its inputs'
    ``(shape, dtype)`` ``metas`` and its (first) output's ``out_meta``; None where it has none."""
    if None in metas:
        return None
    if getattr(fn, "ops", None) is not None:   # a fused chain (fused.fused_kernel)
        return _fused_into(fn.ops, metas, out_meta)
    make = _INTO.get(name, _elementwise if name in UFUNCS else None)
    return None if make is None else make(name, attrs, metas, out_meta)


def _refs_when_alone():
    """What ``sys.getrefcount(s)`` reads in a plan's generated steps (``s = T[i]._data``, the call
    ``donated(s)``) when only the tensor holds its data; None where there are no refcounts or
    where other threads run at once (a free-threaded build): then nothing is donated."""
    if not hasattr(sys, "getrefcount") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None

    class Holder:
        __slots__ = ("_data",)
    namespace = {"count": lambda a: sys.getrefcount(a)}
    exec("def steps(T):\n    s0 = T[0]._data\n    return count(s0)", namespace)
    t = Holder()
    t._data = np.empty(1)
    return namespace["steps"]([t])


_ALONE = _refs_when_alone()


def donated(a):
    """``a`` (the data of a place the plan gives new data) when nothing but its tensor holds it (no
    view, saved value, other tensor or user reference) and it owns writable memory: the step may
    write into it, as an eager in-place op writes into data it is given (core/ops/binary.py
    ``_donation``). Else None: the step makes a new array."""
    if _ALONE is None or sys.getrefcount(a) != _ALONE or type(a) is not np.ndarray:
        return None
    flags = a.flags
    return a if flags.owndata and flags.writeable else None


def empty(shape: tuple, dtype):
    """A new array for a plan to hold (its contents are written before they are read)."""
    return np.empty(shape, np_dtype(dtype))


__all__ = ["into_kernel", "joint_kernel", "fresh_outputs", "never_raises", "donated", "empty", "Form", "FRESH"]
