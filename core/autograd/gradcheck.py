"""Gradients checked against finite differences (PyTorch's ``torch.autograd.gradcheck`` and
``gradgradcheck``).

``gradcheck`` builds, for each output and each input that requires grad, the Jacobian twice: by
central differences (each input element moved by ``±eps``) and by backward passes (one per output
element), and compares them as ``allclose(analytical, numerical, rtol, atol)``. ``gradgradcheck``
does the same for the function that returns the gradients (second order). Use float64 inputs.

>>> import webgrad as wg
>>> x = wg.tensor([1.0, 2.0], dtype=wg.float64, requires_grad=True)
>>> gradcheck(lambda t: (t ** 3).sum(), (x,)), gradgradcheck(lambda t: t.sin(), (x,))
(True, True)
"""
from __future__ import annotations

import warnings

from ..dtypes import float64
from ..random import Generator
from ..tensor import Tensor, tensor


class GradcheckError(RuntimeError):
    """A gradient that does not match its finite differences (``torch.autograd.gradcheck.GradcheckError``)."""


_NO_FORWARD_AD = ("{}: webgrad has reverse-mode differentiation only (no forward-mode AD to check); "
                  "leave {}=False")
_NOT_DOUBLE = ("Input #{} requires gradient and is not a double precision floating point or complex. This check "
               "will likely fail if all the inputs are not of double precision floating point or complex. ")


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _flat(t: Tensor) -> list:
    return t.detach().reshape(-1).tolist()


def _refuse(op: str, **flags) -> None:
    for name, on in flags.items():
        if on:
            raise NotImplementedError(_NO_FORWARD_AD.format(op, name))


def _numerical_rows(func, inputs: tuple, i: int, eps: float) -> list:
    """For input ``i``: per element k, per output, d output / d x_k by central differences."""
    x, rows = inputs[i], []
    base = x.detach().reshape(-1)
    for k in range(base.numel()):
        outs = []
        for step in (-eps, eps):
            moved = base.clone()
            moved[k] = base[k].item() + step   # (a fresh leaf like x: the function may differentiate it)
            args = (*inputs[:i], moved.reshape(x.shape).detach().requires_grad_(), *inputs[i + 1:])
            outs.append([_flat(o) for o in _as_tuple(func(*args))])
        rows.append([[(h - l) / (2 * eps) for l, h in zip(lo, hi)] for lo, hi in zip(*outs)])
    return rows


def _analytical_rows(out: Tensor, wrt: list, check_grad_dtypes: bool) -> list:
    """Per input in ``wrt``: the Jacobian of ``out`` as rows (input elements) of columns (output
    elements), one backward pass per output element."""
    from . import grad
    columns = [[] for _ in wrt]
    for m in range(out.numel()):
        onehot = out.new_zeros(out.numel())
        onehot[m] = 1
        grads = grad(out, [x for _, x in wrt], onehot.reshape(out.shape), retain_graph=True, allow_unused=True)
        for (_, x), g, col in zip(wrt, grads, columns):
            if check_grad_dtypes and g is not None and g.dtype is not x.dtype:
                raise GradcheckError("Gradient has dtype mismatch")
            col.append([0.0] * x.numel() if g is None else _flat(g))
    return [[list(r) for r in zip(*col)] if col else [[] for _ in range(x.numel())]
            for (_, x), col in zip(wrt, columns)]


def _close(a: list, n: list, rtol: float, atol: float) -> bool:
    return all(abs(p - q) <= atol + rtol * abs(q) for ra, rn in zip(a, n) for p, q in zip(ra, rn))


def _check(func, inputs: tuple, wrt: list, eps, atol, rtol, nondet_tol, check_grad_dtypes) -> None:
    outputs = _as_tuple(func(*inputs))
    numerical = {i: _numerical_rows(func, inputs, i, eps) for i, _ in wrt}
    differentiable = [(j, out) for j, out in enumerate(outputs) if out.requires_grad]
    if not differentiable:   # then the function must not change with its inputs (its float outputs)
        floats = [j for j, out in enumerate(outputs) if out.dtype.is_floating]
        if any(v != 0 for i, _ in wrt for row in numerical[i] for j in floats for v in row[j]):
            raise GradcheckError("Numerical gradient for function expected to be zero")
    for index, (j, out) in enumerate(differentiable):   # (PyTorch numbers the differentiable outputs)
        analytical = _analytical_rows(out, wrt, check_grad_dtypes)
        again = _analytical_rows(out, wrt, False)
        if not all(_close(b, a, 0.0, nondet_tol) for a, b in zip(analytical, again)):
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
        for (i, x), a in zip(wrt, analytical):
            n = [row[j] for row in numerical[i]]
            if not _close(a, n, rtol, atol):
                raise GradcheckError(f"Jacobian mismatch for output {index} with respect to input {i},\n"
                                     f"numerical:{tensor(n, dtype=x.dtype)}\nanalytical:{tensor(a, dtype=x.dtype)}\n")


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """Check the gradients of ``func(*inputs)`` with respect to the ``inputs`` that require grad
    against central differences; True, or ``GradcheckError`` (False with ``raise_exception=False``).

    As PyTorch's; here ``fast_mode`` runs the full check (stricter), ``check_batched_grad`` and
    ``check_undefined_grad`` hold by construction (batched gradients are computed one by one;
    missing output gradients are zeros), and the forward-mode checks raise (no forward-mode AD).

    >>> import webgrad as wg
    >>> x = wg.tensor([0.5, -1.0], dtype=wg.float64, requires_grad=True)
    >>> gradcheck(lambda t: t.exp() * t, x)
    True
    >>> gradcheck(lambda t: t.detach() * 2 + t, x, raise_exception=False)
    False
    """
    _refuse("gradcheck", check_forward_ad=check_forward_ad, check_batched_forward_grad=check_batched_forward_grad)
    inputs = _as_tuple(inputs)
    wrt = [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i, x in wrt:
        if x.dtype is not float64:
            warnings.warn(_NOT_DOUBLE.format(i), UserWarning, stacklevel=2)
    if not check_backward_ad:
        return True
    try:
        _check(func, inputs, wrt, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """``gradcheck`` of the gradients of ``func``: the function ``(inputs, grad_outputs) -> grads``
    (made with ``create_graph=True``) is checked against central differences. ``grad_outputs``
    default to uniform numbers in [-1, 1) from a generator of their own (the default generator's
    stream is left alone).

    >>> import webgrad as wg
    >>> gradgradcheck(lambda t: t ** 3, wg.tensor([1.5], dtype=wg.float64, requires_grad=True))
    True
    """
    _refuse("gradgradcheck", check_fwd_over_rev=check_fwd_over_rev)
    from . import grad
    inputs = _as_tuple(inputs)
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if grad_outputs is None:
        draws = Generator().manual_seed(0)
        outs = [o for o in _as_tuple(func(*inputs)) if o.requires_grad]
        grad_outputs = tuple((o.new_empty(o.shape).uniform_(-1, 1, generator=draws)).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    count = len(grad_outputs)

    def gradients(*args):
        xs, seeds = args[:len(args) - count], args[len(args) - count:]
        outs = [o for o in _as_tuple(func(*xs)) if o.requires_grad]
        grads = grad(outs, [xs[i] for i in wanted], seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)
    if not check_rev_over_rev:
        return True
    return gradcheck(gradients, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes)


__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]
