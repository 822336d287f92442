"""Gradients of the factorization kernels, written with ops (so they run on every backend and can be
differentiated again): TriangularSolve, and LuFactor by PyTorch's formula for a square A = P L U,
``dA = P L^-T (tril(L^T dL, -1) + triu(dU U^T)) U^-T``."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.creation import arange, eye
from ..registry import register_gradient


def _solve(a, b, upper, unit):
    return run_kernel(K.TRIANGULAR_SOLVE, a, b, upper=upper, unitriangular=unit)


@register_gradient(K.TRIANGULAR_SOLVE, inputs_to_save=[0], outputs_to_save=[0])
def _triangular_solve(dy, saved, attrs):
    """X = A^-1 B: dB = A^-T dX, dA = -dB X^T on A's triangle (off its diagonal when unitriangular)."""
    a, x = saved
    upper, unit = attrs["upper"], attrs["unitriangular"]
    db = _solve(a.mT, dy, not upper, unit)
    if not saved.needs_input_grad[0]:
        return None, db
    da = -(db @ x.mT)
    da = da.triu(1 if unit else 0) if upper else da.tril(-1 if unit else 0)
    return da, db


@register_gradient(K.LU_FACTOR, outputs_to_save=[0, 2], non_differentiable=(1, 2, 3))
def _lu_factor(dy, saved, attrs):
    lu, perm = saved
    dlu = dy[0]
    n = lu.shape[-1]
    lower = lu.tril(-1) + eye(n, dtype=lu.dtype, device=lu.device)
    phi = (lower.mT @ dlu.tril(-1)).tril(-1) + (dlu.triu() @ lu.triu().mT).triu()
    x = _solve(lu.mT, phi, True, True)              # L^-T phi
    x = _solve(lu, x.mT, True, False).mT            # (U^-1 x^T)^T = x U^-T
    p = (perm.unsqueeze(-2) == arange(n, device=perm.device).unsqueeze(-1)).to(lu.dtype)
    return (p @ x,)


@register_gradient(K.CHOLESKY, outputs_to_save=[0], non_differentiable=(1,))
def _cholesky(dy, saved, attrs):
    """PyTorch's rule (Murray 2016): dA = L^-T phi L^-1, phi = P + tril(P, -1)^T halved, P = tril(L^T dL)."""
    (l,) = saved
    p = (l.mT @ dy[0]).tril()
    phi = 0.5 * (p + p.tril(-1).mT)
    x = _solve(l.mT, phi, True, False)                 # L^-T phi
    return (_solve(l.mT, x.mT, True, False).mT,)       # x L^-1 = (L^-T x^T)^T
