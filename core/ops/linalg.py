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
from .binary import where
from .common import check_tensor, inplace_method, reshape_to
from .creation import arange
from .movement import pad
from ..node_names import labelled


def _operands(op, a, b):
    check_tensor(op, a, "first argument")
    check_tensor(op, b, "second argument")
    dt = promote(a._dtype, b._dtype)
    if dt.kind == "b":
        raise TypeError(f"{op}: bool tensors cannot be multiplied; convert them with .int() or .float()")
    return (a if a._dtype is dt else run_kernel(K.CAST, a, dtype=dt),
            b if b._dtype is dt else run_kernel(K.CAST, b, dtype=dt))


def matmul(input, other):
    """Matrix product with PyTorch's rules: 1-D operands act as a row (left) or column (right)
    vector and that dim is dropped; leading batch dims broadcast.

    >>> import webgrad as wg
    >>> (wg.ones(2, 3) @ wg.ones(3, 4)).shape
    webgrad.Size([2, 4])
    >>> (wg.ones(5, 1, 2, 3) @ wg.ones(4, 3, 6)).shape
    webgrad.Size([5, 4, 2, 6])
    >>> wg.matmul(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    """
    if autocast.dtypes:
        input, other = lower_precision(input, other)
    if type(input) is Tensor and type(other) is Tensor and input._dtype is other._dtype and input._dtype.is_floating:
        sa, sb = input._data.shape, other._data.shape   # the fast path: [m, k] @ [k, n], one float dtype
        if len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]:
            return run_kernel(K.MATMUL, input, other, transpose_a=False, transpose_b=False)
    input, other = _operands("matmul", input, other)
    if not input.ndim or not other.ndim:
        raise ShapeError(f"matmul: both arguments need to be at least 1D, but they are {input.ndim}D and "
                         f"{other.ndim}D")
    a2 = reshape_to(input, (1,) + input.shape) if input.ndim == 1 else input
    b2 = reshape_to(other, other.shape + (1,)) if other.ndim == 1 else other
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"matmul: shapes {tuple(input.shape)} and {tuple(other.shape)} cannot be multiplied "
                         f"({a2.shape[-1]} != {b2.shape[-2]})")
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2], op="matmul")
    out = run_kernel(K.MATMUL, a2, b2, transpose_a=False, transpose_b=False)
    rows = (input.shape[-2],) if input.ndim > 1 else ()
    shape = batch + rows + ((other.shape[-1],) if other.ndim > 1 else ())
    return labelled(reshape_to(out, shape), _MATMUL_NAMES.get((min(input.ndim, 3), min(other.ndim, 3)), "UnsafeViewBackward0"))


# PyTorch's node name for matmul by the operands' dims (3: three or more); others "UnsafeViewBackward0"
_MATMUL_NAMES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4", (2, 2): "MmBackward0"}


def rmatmul(b, a):
    """``a @ b`` when ``a`` is not a webgrad Tensor (``Tensor.__rmatmul__``)."""
    from ..tensor import tensor
    return matmul(tensor(a, backend=b._backend), b)


def _check_ndim(op, want, a, b):
    if a.ndim != want or b.ndim != want:
        raise ShapeError(f"{op}: expected two {want}D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")


def dot(input, tensor):
    """Dot product of two 1-D tensors of one size.

    >>> import webgrad as wg
    >>> wg.dot(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    """
    _check_ndim("dot", 1, check_tensor("dot", input), check_tensor("dot", tensor))
    if input.shape != tensor.shape:
        raise ShapeError(f"dot: inconsistent sizes, shapes {tuple(input.shape)} and {tuple(tensor.shape)}")
    return matmul(input, tensor)


def mm(input, mat2):
    """Product of two 2-D matrices (no broadcasting).

    >>> import webgrad as wg
    >>> wg.mm(wg.ones(2, 3), wg.ones(3, 1)).tolist()
    [[3.0], [3.0]]
    """
    _check_ndim("mm", 2, check_tensor("mm", input), check_tensor("mm", mat2))
    return matmul(input, mat2)


def bmm(input, mat2):
    """Batched product of 3-D tensors with one batch size (no broadcasting).

    >>> import webgrad as wg
    >>> wg.bmm(wg.ones(4, 2, 3), wg.ones(4, 3, 5)).shape
    webgrad.Size([4, 2, 5])
    """
    _check_ndim("bmm", 3, check_tensor("bmm", input), check_tensor("bmm", mat2))
    if input.shape[0] != mat2.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ, shapes {tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2)


def outer(input, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``.

    >>> import webgrad as wg
    >>> wg.outer(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    _check_ndim("outer", 1, check_tensor("outer", input), check_tensor("outer", vec2))
    return matmul(reshape_to(input, input.shape + (1,)), reshape_to(vec2, (1,) + vec2.shape))


# ---------------------------------------------------------------- products added to a tensor


def _add_scaled(op, input, product, beta, alpha):
    """``beta * input + alpha * product``, where ``input`` broadcasts to ``product``'s shape; with
    ``beta == 0`` ``input`` is not read (its NaN and inf do not propagate), as in PyTorch."""
    check_tensor(op, input)
    shape = broadcast_shapes(input.shape, product.shape, op=op)
    if shape != tuple(product.shape):
        raise ShapeError(f"{op}: input of shape {tuple(input.shape)} does not broadcast to the product's shape "
                         f"{tuple(product.shape)}")
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else input * beta)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1`` and ``mat2``.

    >>> import webgrad as wg
    >>> wg.addmm(wg.ones(2), wg.ones(2, 3), wg.ones(3, 2), beta=0.5).tolist()
    [[3.5, 3.5], [3.5, 3.5]]
    """
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)`` for 3-D batches.

    >>> import webgrad as wg
    >>> wg.baddbmm(wg.zeros(4, 2, 5), wg.ones(4, 2, 3), wg.ones(4, 3, 5), alpha=2).shape
    webgrad.Size([4, 2, 5])
    """
    return _add_scaled("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``.

    >>> import webgrad as wg
    >>> wg.addbmm(wg.zeros(2, 2), wg.ones(3, 2, 4), wg.ones(3, 4, 2)).tolist()
    [[12.0, 12.0], [12.0, 12.0]]
    """
    return _add_scaled("addbmm", input, run_kernel(K.SUM, bmm(batch1, batch2), axes=(0,), keepdim=False), beta,
                       alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` for a 2-D ``mat`` and a 1-D ``vec``.

    >>> import webgrad as wg
    >>> wg.addmv(wg.ones(2), wg.ones(2, 3), wg.ones(3)).tolist()
    [4.0, 4.0]
    """
    check_tensor("addmv", mat, "mat")
    check_tensor("addmv", vec, "vec")
    if mat.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"addmv: expected a 2-D mat and a 1-D vec, got shapes {tuple(mat.shape)} and "
                         f"{tuple(vec.shape)}")
    return _add_scaled("addmv", input, matmul(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> import webgrad as wg
    >>> wg.addr(wg.zeros(2, 2), wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    return _add_scaled("addr", input, outer(vec1, vec2), beta, alpha)


def inner(input, other):
    """Sums of products over the last dims: shape ``input.shape[:-1] + other.shape[:-1]`` (a product
    when either is 0-d).

    >>> import webgrad as wg
    >>> wg.inner(wg.tensor([[1.0, 2.0], [3.0, 4.0]]), wg.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    check_tensor("inner", input)
    check_tensor("inner", other, "other")
    if not input.ndim or not other.ndim:
        return input * other
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise ShapeError(f"inner: the last dims must match, got shapes {tuple(input.shape)} and {tuple(other.shape)}")
    out = matmul(reshape_to(input, (numel(input.shape[:-1]), k)), reshape_to(other, (numel(other.shape[:-1]), k)).mT)
    return reshape_to(out, input.shape[:-1] + other.shape[:-1])


def mv(input, vec):
    """The product of a 2-D ``input`` and a 1-D ``vec``.

    >>> import webgrad as wg
    >>> wg.mv(wg.tensor([[1.0, 2.0], [3.0, 4.0]]), wg.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    check_tensor("mv", input)
    check_tensor("mv", vec, "vec")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expected a 2-D input and a 1-D vec, got shapes {tuple(input.shape)} and "
                           f"{tuple(vec.shape)}")
    return matmul(input, vec)


def trace(input):
    """The sum of the main diagonal of a 2-D tensor.

    >>> import webgrad as wg
    >>> wg.trace(wg.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    check_tensor("trace", input)
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, got shape {tuple(input.shape)}")
    if input._dtype.kind == "b":
        raise NotImplementedError("trace: not implemented for bool tensors (as PyTorch); use x.long() first")
    d = input.diagonal()
    return run_kernel(K.SUM, d if d._dtype.kind in "fc" else d.to("int64"), axes=(0,), keepdim=False)


def diag(input, diagonal=0):
    """A 1-D tensor made the ``diagonal``-th diagonal of a square matrix (zeros elsewhere), or the
    ``diagonal``-th diagonal of a 2-D tensor (a copy).

    >>> import webgrad as wg
    >>> wg.diag(wg.tensor([1, 2])).tolist(), wg.diag(wg.tensor([[1, 2], [3, 4]]), 1).tolist()
    ([[1, 0], [0, 2]], [2])
    """
    check_tensor("diag", input)
    if input.ndim == 2:
        return run_kernel(K.IDENTITY, input.diagonal(diagonal))
    if input.ndim != 1:
        raise ShapeError(f"diag: expected a 1-D or 2-D tensor, got shape {tuple(input.shape)}")
    n = input.shape[0] + abs(diagonal)
    rows, cols = arange(n, backend=input._backend).reshape(n, 1), arange(n, backend=input._backend)
    padded = pad(input, (0, abs(diagonal)))   # out[r, r + d] = input[r] (d >= 0), out[c - d, c] = input[c]
    values = padded.reshape(n, 1) if diagonal >= 0 else padded.reshape(1, n)
    return where((cols - rows) == diagonal, values, 0)


_ADDED = {"addmm": addmm, "baddbmm": baddbmm, "addbmm": addbmm, "addmv": addmv, "addr": addr}


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
    webgrad.Size([2, 4])
    >>> wg.einsum("i,i->", wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    >>> wg.einsum("ij->ji", wg.ones(2, 3)).shape
    webgrad.Size([3, 2])
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
           "outer": outer, "ger": outer, "inner": inner, "mv": mv, "trace": trace, "diag": diag, **_ADDED,
           **{f"{name}_": inplace_method(f"{name}_", fn) for name, fn in _ADDED.items()}}

ger = outer

__all__ = ["matmul", "dot", "mm", "bmm", "outer", "ger", "inner", "mv", "trace", "diag", "einsum"] + list(_ADDED)
