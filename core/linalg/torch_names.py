"""The linear-algebra names PyTorch keeps in ``torch`` and on ``Tensor`` beside ``torch.linalg``
(``torch.det``, ``torch.cross``, ``Tensor.inverse`` ...): the same functions under their older
names and signatures. ``METHODS`` are attached to Tensor when this module is imported."""
from ..return_types import slogdet as _slogdet_result
from ..return_types import triangular_solve as _triangular_solve_result
from ..tensor import Tensor
from . import lu_ops as _lu
from .cholesky_ops import cholesky_inverse, cholesky_solve
from .errors import deprecated
from .cholesky_ops import torch_cholesky as cholesky
from .lu_ops import logdet, lu_unpack
from .norms import dist, frobenius_norm, nuclear_norm
from .qr_ops import geqrf, orgqr, ormqr
from .spectral_ops import pinverse
from .tensor_ops import matrix_exp as _matrix_exp
from .spectral_ops import torch_svd as svd
from .qr_ops import torch_qr as qr
from .products import chain_matmul, cross, matrix_power as _matrix_power, vdot


def matrix_power(input, n):
    """``torch.matrix_power``: ``linalg.matrix_power`` under PyTorch's older name.

    >>> import webgrad as wg
    >>> wg.matrix_power(wg.tensor([[2.0, 0.0], [0.0, 3.0]]), 2).tolist()
    [[4.0, 0.0], [0.0, 9.0]]
    """
    return _matrix_power(input, n)


def matrix_exp(input):
    """``torch.matrix_exp``: ``linalg.matrix_exp``.

    >>> import webgrad as wg
    >>> wg.matrix_exp(wg.zeros(1, 1)).item()
    1.0
    """
    return _matrix_exp(input)


def det(input):
    """``torch.det``: ``linalg.det``.

    >>> import webgrad as wg
    >>> wg.det(wg.tensor([[2.0, 1.0], [1.0, 2.0]])).item()
    3.0
    """
    return _lu.det(input)


def slogdet(input):
    """``torch.slogdet``: ``linalg.slogdet`` as ``return_types.slogdet``.

    >>> import webgrad as wg
    >>> wg.slogdet(wg.tensor([[2.0, 0.0], [0.0, -1.0]])).sign.item()
    -1.0
    """
    return _slogdet_result(*_lu.slogdet(input))


def inverse(input):
    """``torch.inverse``: ``linalg.inv``.

    >>> import webgrad as wg
    >>> wg.inverse(wg.tensor([[4.0]])).item()
    0.25
    """
    return _lu.inv(input)


def lu(A, pivot=True, get_infos=False):
    """``torch.lu``: ``(A_LU, pivots)`` of ``linalg.lu_factor_ex``, and its ``infos`` when ``get_infos``
    (a singular A raises nothing either way, as PyTorch's).

    Deprecated in PyTorch for ``linalg.lu_factor``, with its warning, once.

    >>> import webgrad as wg, warnings
    >>> with warnings.catch_warnings(record=True):
    ...     wg.lu(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))[1].tolist()
    [2, 2]
    """
    deprecated("lu", "torch.linalg.lu_factor / torch.linalg.lu_factor_ex")
    LU, pivots, info = _lu.lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(input, LU_data, LU_pivots):
    """``torch.lu_solve``: ``linalg.lu_solve(LU_data, LU_pivots, input)`` (deprecated in PyTorch, with its
    warning, once).

    >>> import webgrad as wg, warnings
    >>> LU, piv = wg.linalg.lu_factor(wg.tensor([[2.0, 0.0], [0.0, 4.0]]))
    >>> with warnings.catch_warnings(record=True):
    ...     wg.lu_solve(wg.tensor([[2.0], [2.0]]), LU, piv).tolist()
    [[1.0], [0.5]]
    """
    deprecated("lu_solve", "torch.linalg.lu_solve")
    return _lu.lu_solve(LU_data, LU_pivots, input)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """``torch.triangular_solve`` (deprecated in PyTorch for ``linalg.solve_triangular``, with its warning,
    once): ``(solution, cloned_coefficient)``, X with ``A @ X = input`` (``A^T @ X = input`` when ``transpose``).

    >>> import webgrad as wg, warnings
    >>> with warnings.catch_warnings(record=True):
    ...     wg.triangular_solve(wg.tensor([[2.0], [4.0]]), wg.tensor([[2.0, 0.0], [0.0, 4.0]])).solution.tolist()
    [[1.0], [1.0]]
    """
    deprecated("triangular_solve", "torch.linalg.solve_triangular")
    coefficient = A.mT if transpose else A
    x = _lu.solve_triangular(coefficient, input, upper=upper != bool(transpose), unitriangular=unitriangular)
    return _triangular_solve_result(x, A.clone())


METHODS = {"cross": cross, "dist": dist, "vdot": vdot, "matrix_power": matrix_power, "det": det, "slogdet": slogdet,
           "logdet": logdet, "inverse": inverse,
           "cholesky": cholesky, "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
           "qr": qr, "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr, "svd": svd, "pinverse": pinverse,
           "matrix_exp": matrix_exp, "lu": lu, "lu_solve": lu_solve, "triangular_solve": triangular_solve}

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

__all__ = ["chain_matmul", "cholesky", "cholesky_inverse", "cholesky_solve", "cross", "det", "dist",
           "frobenius_norm", "geqrf", "inverse", "logdet", "lu", "lu_solve", "lu_unpack",
           "matrix_exp", "matrix_power", "nuclear_norm", "orgqr", "ormqr", "pinverse", "qr", "slogdet",
           "svd", "triangular_solve", "vdot"]
