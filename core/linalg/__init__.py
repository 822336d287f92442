"""``webgrad.linalg``: PyTorch's ``torch.linalg``, on every backend, with gradients.

Norms and products are compositions of existing ops; the factorizations are kernels (LU with partial
pivoting, triangular solves, ...) on cpu (numpy) and the GPU backends (WGSL), whose gradients are
written with ops. ``torch_names`` holds the same functions under PyTorch's older ``torch.*`` and
``Tensor`` names (``torch.det``, ``Tensor.inverse``, ``torch.cross`` ...).

>>> import webgrad as wg
>>> wg.linalg.vector_norm(wg.tensor([3.0, 4.0])).item()
5.0
"""
from ..ops.linalg import matmul
from ..ops.movement import diagonal as _diagonal
from ..porting_table import module_getattr as _module_getattr
from .cholesky_ops import cholesky, cholesky_ex
from .errors import LinAlgError
from .lu_ops import (det, inv, inv_ex, lu, lu_factor, lu_factor_ex, lu_solve, slogdet, solve, solve_ex,
                 solve_triangular)
from .norms import matrix_norm, norm, vector_norm
from .products import linalg_cross as cross
from .products import matrix_power, multi_dot, vecdot
from .qr_ops import householder_product, qr
from .tensor_ops import matrix_exp, tensorinv, tensorsolve, vander
from .spectral_ops import cond, eigh, eigvalsh, lstsq, matrix_rank, pinv, svd, svdvals


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal ``offset`` of the matrices of ``A`` (dims ``dim1``, ``dim2``), as a last dim: a view.

    >>> import webgrad as wg
    >>> wg.linalg.diagonal(wg.eye(2).expand(3, 2, 2)).shape
    webgrad.Size([3, 2])
    """
    return _diagonal(A, offset, dim1, dim2)


__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
           "tensorsolve", "vander", "vecdot", "vector_norm"]
__getattr__ = _module_getattr("webgrad.linalg")
