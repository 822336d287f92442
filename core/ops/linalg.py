"""Linear-algebra ops: matmul (and ``@``), dot, mm, bmm, outer, einsum.

All of them end in the one MatMul kernel (batch dims broadcast, optional transposed
operands). Operands of different dtypes are promoted; bool is refused, as in PyTorch.
"""
from __future__ import annotations

from collections import Counter

from .. import kernel_names as K
from ..amp import lower_precision
from ..amp import state as autocast
from ..dtypes import promote
from ..engine import run_kernel
from ..shapes import ShapeError, broadcast_shapes, numel
from ..tensor import Tensor
from .common import check_tensor, reshape_to


def _operands(op, a, b):
    check_tensor(op, a, "first argument")
    check_tensor(op, b, "second argument")
    dt = promote(a._dtype, b._dtype)
    if dt.kind == "b":
        raise TypeError(f"{op}: bool tensors cannot be multiplied; convert them with .int() or .float()")
    return (a if a._dtype is dt else run_kernel(K.CAST, a, dtype=dt),
            b if b._dtype is dt else run_kernel(K.CAST, b, dtype=dt))


def matmul(a, b):
    """Matrix product with PyTorch's rules: 1-D operands act as a row (left) or column (right)
    vector and that dim is dropped; leading batch dims broadcast.

    >>> import webgrad as wg
    >>> (wg.ones(2, 3) @ wg.ones(3, 4)).shape
    (2, 4)
    >>> (wg.ones(5, 1, 2, 3) @ wg.ones(4, 3, 6)).shape
    (5, 4, 2, 6)
    >>> wg.matmul(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    """
    if autocast.dtypes:
        a, b = lower_precision(a, b)
    if type(a) is Tensor and type(b) is Tensor and a._dtype is b._dtype and a._dtype.is_floating:
        sa, sb = a._data.shape, b._data.shape   # the fast path: [m, k] @ [k, n], one float dtype
        if len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]:
            return run_kernel(K.MATMUL, a, b, transpose_a=False, transpose_b=False)
    a, b = _operands("matmul", a, b)
    if not a.ndim or not b.ndim:
        raise ShapeError(f"matmul: both arguments need to be at least 1D, but they are {a.ndim}D and "
                         f"{b.ndim}D")
    a2 = reshape_to(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape_to(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                         f"({a2.shape[-1]} != {b2.shape[-2]})")
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2], op="matmul")
    out = run_kernel(K.MATMUL, a2, b2, transpose_a=False, transpose_b=False)
    shape = batch + ((a.shape[-2],) if a.ndim > 1 else ()) + ((b.shape[-1],) if b.ndim > 1 else ())
    return reshape_to(out, shape)


def rmatmul(b, a):
    """``a @ b`` when ``a`` is not a webgrad Tensor (``Tensor.__rmatmul__``)."""
    from ..tensor import tensor
    return matmul(tensor(a, backend=b._backend), b)


def _check_ndim(op, want, a, b):
    if a.ndim != want or b.ndim != want:
        raise ShapeError(f"{op}: expected two {want}D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")


def dot(a, b):
    """Dot product of two 1-D tensors of one size.

    >>> import webgrad as wg
    >>> wg.dot(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    """
    _check_ndim("dot", 1, check_tensor("dot", a), check_tensor("dot", b))
    if a.shape != b.shape:
        raise ShapeError(f"dot: inconsistent sizes, shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def mm(a, b):
    """Product of two 2-D matrices (no broadcasting).

    >>> import webgrad as wg
    >>> wg.mm(wg.ones(2, 3), wg.ones(3, 1)).tolist()
    [[3.0], [3.0]]
    """
    _check_ndim("mm", 2, check_tensor("mm", a), check_tensor("mm", b))
    return matmul(a, b)


def bmm(a, b):
    """Batched product of 3-D tensors with one batch size (no broadcasting).

    >>> import webgrad as wg
    >>> wg.bmm(wg.ones(4, 2, 3), wg.ones(4, 3, 5)).shape
    (4, 2, 5)
    """
    _check_ndim("bmm", 3, check_tensor("bmm", a), check_tensor("bmm", b))
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ, shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def outer(a, b):
    """Outer product of two 1-D tensors: ``out[i, j] = a[i] * b[j]``.

    >>> import webgrad as wg
    >>> wg.outer(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    _check_ndim("outer", 1, check_tensor("outer", a), check_tensor("outer", b))
    return matmul(reshape_to(a, a.shape + (1,)), reshape_to(b, (1,) + b.shape))


# ---------------------------------------------------------------- einsum

def _parse_einsum(equation, operands):
    """Labels per operand and for the output, with '...' expanded to one label per broadcast dim
    (labels '.0', '.1', ... aligned from the right, as numpy and PyTorch broadcast them)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ShapeError(f"einsum: equation {equation!r} names {len(terms)} operands but {len(operands)} were given")
    for t in terms + [rhs]:
        if not t.replace("...", "").isalpha() and t.replace("...", ""):
            raise ShapeError(f"einsum: equation {equation!r} may only hold letters, ',', '->' and '...'")
    n_ell = 0
    for i, (t, x) in enumerate(zip(terms, operands)):
        named = len(t.replace("...", ""))
        if ("..." in t and x.ndim < named) or ("..." not in t and x.ndim != named):
            raise ShapeError(f"einsum: operand {i} has shape {tuple(x.shape)}, which does not "
                             f"match its subscripts {t!r}")
        if "..." in t:
            n_ell = max(n_ell, x.ndim - named)

    def expand(t, k):
        head, _, tail = t.partition("...")
        return list(head) + [f".{i}" for i in range(n_ell - k, n_ell)] + list(tail) if "..." in t else list(t)

    ins = [expand(t, x.ndim - len(t.replace("...", ""))) for t, x in zip(terms, operands)]
    if arrow:
        out = expand(rhs, n_ell)
    else:
        counts = Counter(c for labels in ins for c in labels)
        out = [f".{i}" for i in range(n_ell)] + sorted(c for c, n in counts.items() if n == 1 and c[0] != ".")
    for i, labels in enumerate(ins):
        for c in labels:
            if labels.count(c) > 1:
                raise NotImplementedError(f"einsum: label {c!r} repeats in operand {i} ({terms[i]!r}): diagonals "
                                          f"are not supported")
    for c in out:
        if out.count(c) > 1 or not any(c in labels for labels in ins):
            raise ShapeError(f"einsum: output label {c!r} in {equation!r} must appear once in the output and in "
                             f"some operand")
    return ins, out


def _sizes(ins, operands, equation):
    sizes = {}
    for labels, x in zip(ins, operands):
        for c, s in zip(labels, x.shape):
            prev = sizes.setdefault(c, s)
            if s != prev and 1 not in (s, prev):
                raise ShapeError(f"einsum: label {c!r} in {equation!r} has sizes {prev} and {s} in the operands "
                                 f"{', '.join(str(tuple(o.shape)) for o in operands)}")
            sizes[c] = s if prev == 1 else prev
    return sizes


def _sum_out(x, labels, keep):
    """Sum ``x`` over the labels not in ``keep``."""
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    return run_kernel(K.SUM, x, axes=axes, keepdim=False), [c for c in labels if c in keep]


def _arrange(x, labels, order, sizes):
    """``x`` transposed to the label ``order`` and expanded to the full label ``sizes``."""
    perm = tuple(labels.index(c) for c in order)
    if perm != tuple(range(len(perm))):
        x = run_kernel(K.TRANSPOSE, x, perm=perm)
    full = tuple(sizes[c] for c in order)
    return x if x.shape == full else run_kernel(K.EXPAND, x, shape=full)


def _contract(a, la, b, lb, keep, sizes):
    """One pairwise contraction as a batched matmul: (batch, a-only, shared) @ (batch, shared, b-only)."""
    batch = [c for c in la if c in lb and c in keep]
    shared = [c for c in la if c in lb and c not in keep]
    only_a = [c for c in la if c not in lb]
    only_b = [c for c in lb if c not in la]
    size = lambda labels: numel(sizes[c] for c in labels)  # noqa: E731
    a = reshape_to(_arrange(a, la, batch + only_a + shared, sizes), (size(batch), size(only_a), size(shared)))
    b = reshape_to(_arrange(b, lb, batch + shared + only_b, sizes), (size(batch), size(shared), size(only_b)))
    out = run_kernel(K.MATMUL, a, b, transpose_a=False, transpose_b=False)
    labels = batch + only_a + only_b
    return reshape_to(out, tuple(sizes[c] for c in labels)), labels


def einsum(equation, *operands):
    """Einstein summation over the labelled dims of ``operands``: transposes, sums and batched
    matmuls (explicit ``->`` or implicit output, ``...`` broadcasting; no diagonals like 'ii').

    >>> import webgrad as wg
    >>> wg.einsum("ij,jk->ik", wg.ones(2, 3), wg.ones(3, 4)).shape
    (2, 4)
    >>> wg.einsum("i,i->", wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    >>> wg.einsum("ij->ji", wg.ones(2, 3)).shape
    (3, 2)
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ShapeError("einsum: expected at least one operand")
    operands = [check_tensor("einsum", x, f"operand {i}") for i, x in enumerate(operands)]
    dt = operands[0]._dtype
    for x in operands[1:]:
        dt = promote(dt, x._dtype)
    operands = [x if x._dtype is dt else run_kernel(K.CAST, x, dtype=dt) for x in operands]
    ins, out = _parse_einsum(equation, operands)
    sizes = _sizes(ins, operands, equation)
    if len(operands) > 1 and dt.kind == "b":
        raise TypeError("einsum: bool tensors cannot be multiplied; convert them with .int() or .float()")
    x, labels = operands[0], ins[0]
    for k in range(1, len(operands)):
        rest = set(out).union(*ins[k + 1:])
        x, labels = _sum_out(x, labels, rest.union(ins[k]))
        y, ly = _sum_out(operands[k], ins[k], rest.union(labels))
        x, labels = _contract(x, labels, y, ly, rest, sizes)
    x, labels = _sum_out(x, labels, set(out))
    return _arrange(x, labels, out, {c: x.shape[labels.index(c)] for c in labels})


METHODS = {"matmul": matmul, "__matmul__": matmul, "__rmatmul__": rmatmul, "dot": dot, "mm": mm, "bmm": bmm,
           "outer": outer}

__all__ = ["matmul", "dot", "mm", "bmm", "outer", "einsum"]
