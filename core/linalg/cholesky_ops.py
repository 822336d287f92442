"""Cholesky-based linear algebra: cholesky(_ex), cholesky_solve, cholesky_inverse (and torch.cholesky).
One kernel (Cholesky, reading the lower triangle as LAPACK's potrf with uplo 'L'); the solves are
TriangularSolve, so the gradients follow from the two kernels' rules."""
from __future__ import annotations

from .. import kernel_names as K
from ..engine import run_kernel
from ..node_names import labelled
from ..ops.creation import eye
from ..return_types import linalg_cholesky_ex
from .errors import LinAlgError, deprecated, factorizable, same_dtype, square
from .lu_ops import _batch_note, _batched, _failed


def _raise_not_pd(op, info):
    failed = _failed(info)
    if failed is not None:
        at, k = failed
        raise LinAlgError(f"{op}: {_batch_note(info, at)}The factorization could not be completed because the input "
                          f"is not positive-definite (the leading minor of order {k} is not positive-definite).")


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: the Cholesky factor of symmetric positive-definite ``A`` (its lower triangle is read),
    ``A = L @ L.mT`` (``U.mT @ U`` with U returned when ``upper``), and info (0, or the order of the first
    leading minor that is not positive-definite; L then holds NaN).

    >>> import webgrad as wg
    >>> wg.linalg.cholesky_ex(wg.tensor([[4.0, 2.0], [2.0, 5.0]])).L.tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    op = "linalg.cholesky"
    l, info = run_kernel(K.CHOLESKY, square(op, A))
    if check_errors:
        _raise_not_pd(op, info)
    return linalg_cholesky_ex(labelled(l.mT, "LinalgCholeskyExBackward0") if upper else l, info)


def cholesky(A, *, upper=False):
    """The Cholesky factor of symmetric positive-definite ``A`` (batched); LinAlgError when it is not
    positive-definite.

    >>> import webgrad as wg
    >>> wg.linalg.cholesky(wg.tensor([[4.0, 2.0], [2.0, 5.0]]), upper=True).tolist()
    [[2.0, 1.0], [0.0, 2.0]]
    """
    return cholesky_ex(A, upper=upper, check_errors=True).L


def cholesky_solve(input, input2, upper=False):
    """X with ``A @ X = input``, A given by its Cholesky factor ``input2`` (lower, or upper when ``upper``);
    batches broadcast.

    >>> import webgrad as wg
    >>> L = wg.tensor([[2.0, 0.0], [1.0, 2.0]])
    >>> wg.cholesky_solve(wg.tensor([[4.0], [2.0]]) @ wg.ones(1, 1), L).tolist()
    [[1.0], [0.0]]
    """
    op = "cholesky_solve"
    square(op, input2, "L")
    factorizable(op, input, "B")
    same_dtype(op, input, input2)
    lower = input2.mT if upper else input2
    lower, b = _batched(op, lower, input)
    y = run_kernel(K.TRIANGULAR_SOLVE, lower, b, upper=False, unitriangular=False)
    return run_kernel(K.TRIANGULAR_SOLVE, lower.mT, y, upper=True, unitriangular=False)


def cholesky_inverse(input, upper=False):
    """The inverse of ``A = L @ L.mT`` from its Cholesky factor ``input`` (``U.mT @ U`` when ``upper``).

    >>> import webgrad as wg
    >>> wg.cholesky_inverse(wg.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.25, 0.0], [0.0, 0.0625]]
    """
    square("cholesky_inverse", input, "L")
    n = input.shape[-1]
    return cholesky_solve(eye(n, dtype=input.dtype, device=input.device).expand(tuple(input.shape)), input, upper)


def torch_cholesky(input, upper=False):
    """``torch.cholesky`` (deprecated in PyTorch for ``linalg.cholesky``, with its warning, once).

    >>> import webgrad as wg, warnings
    >>> with warnings.catch_warnings(record=True):
    ...     wg.cholesky(wg.tensor([[9.0]])).item()
    3.0
    """
    deprecated("cholesky", "torch.linalg.cholesky")
    return cholesky(input, upper=upper)
