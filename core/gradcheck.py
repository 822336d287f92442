"""``torch.autograd.gradcheck`` and ``gradgradcheck``: a function's backward checked against central
finite differences, element by element (PyTorch's slow mode), on any backend.

The numerical Jacobian perturbs one input element at a time by ``±eps`` (on a copy of the input,
made with the same dtype, device and ``requires_grad``) and reruns ``func``; the analytical one
runs ``autograd.grad`` once per output element. They must agree within ``atol + rtol * |numerical|``.
``gradgradcheck`` runs ``gradcheck`` on the function that returns ``func``'s input gradients
(``create_graph=True``), with ``grad_outputs`` as extra inputs (random in [-1, 1) when not given).

>>> import webgrad as wg
>>> x = wg.tensor([0.5, 1.5], dtype=wg.float64, requires_grad=True)
>>> wg.autograd.gradcheck(lambda t: (t * t).sin(), x), wg.autograd.gradgradcheck(wg.exp, x)
(True, True)
"""
from __future__ import annotations

import warnings

from .autograd import grad
from .dtypes import float64
from .engine import no_grad
from .ops.random import rand
from .tensor import Tensor, tensor


class GradcheckError(RuntimeError):
    """The error ``gradcheck`` raises (``raise_exception=True``) when the gradients disagree."""


# the checks PyTorch offers that webgrad does not make (webgrad has no vmap or forward-mode AD)
_UNSUPPORTED = ("check_batched_grad", "check_batched_forward_grad", "check_forward_ad", "check_fwd_over_rev")


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable(outputs) -> list:
    return [o for o in outputs if isinstance(o, Tensor) and o.is_floating_point()]


def _flat(t) -> list:
    return t.detach().reshape(-1).tolist()


def _check_inputs(op, inputs, options):
    for name, value in options.items():
        if value and name in _UNSUPPORTED:
            raise NotImplementedError(f"{op}: {name}=True needs vmap or forward-mode AD, which webgrad does not "
                                      f"have; leave it False")
    if options.get("masked"):
        raise NotImplementedError(f"{op}: masked=True is for sparse tensors, which webgrad does not have")
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wanted:
        raise ValueError(f"{op} expects at least one input tensor to require gradient, but none of the them have "
                         f"requires_grad=True.")
    for i in wanted:
        if inputs[i].dtype != float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          f"This check will likely fail if all the inputs are not of double precision floating "
                          f"point or complex.", UserWarning, stacklevel=3)
    return wanted


def _numerical(func, inputs, i, eps) -> list:
    """d(output element)/d(input ``i`` element) by central differences: ``[j][o][k]``."""
    x, base = inputs[i], _flat(inputs[i])

    def outputs_at(j, step):
        values = list(base)
        values[j] += step
        moved = list(inputs)
        moved[i] = tensor(values, dtype=x.dtype, device=x.device, requires_grad=x.requires_grad).reshape(x.shape)
        return [_flat(o) for o in _differentiable(_as_tuple(func(*moved)))]

    columns = []
    for j in range(len(base)):
        plus, minus = outputs_at(j, eps), outputs_at(j, -eps)
        columns.append([[(p - m) / (2 * eps) for p, m in zip(po, mo)] for po, mo in zip(plus, minus)])
    return columns


def _one_hot(o, k):
    values = [0.0] * o.numel()
    values[k] = 1.0
    return tensor(values, dtype=o.dtype, device=o.device).reshape(o.shape)


def _analytical(outputs, inputs, wanted, check_dtypes) -> dict:
    """d(output element)/d(input element) by backward: ``{i: [o][k][j]}``."""
    rows = {i: [] for i in wanted}
    for o in outputs:
        per_input = {i: [] for i in wanted}
        for k in range(o.numel()):
            grads = (grad(o, [inputs[i] for i in wanted], _one_hot(o, k), retain_graph=True, allow_unused=True)
                     if o.requires_grad else [None] * len(wanted))
            for i, g in zip(wanted, grads):
                if g is not None and check_dtypes and g.dtype != inputs[i].dtype:
                    raise GradcheckError(f"gradcheck: the gradient for input {i} has dtype {g.dtype}, but the input "
                                         f"has dtype {inputs[i].dtype}")
                per_input[i].append(_flat(g) if g is not None else [0.0] * inputs[i].numel())
        for i in wanted:
            rows[i].append(per_input[i])
    return rows


def _mismatch(numerical, rows, o, atol, rtol) -> bool:
    """Whether analytical ``rows`` (``[k][j]``, output ``o``) and ``numerical`` (``[j][o][k]``) disagree."""
    return any(abs(row[j] - numerical[j][o][k]) > atol + rtol * abs(numerical[j][o][k])
               for k, row in enumerate(rows) for j in range(len(numerical)))


def gradcheck(func, inputs, *, eps: float = 1e-06, atol: float = 1e-05, rtol: float = 0.001,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True when ``func``'s gradients with respect to its ``inputs`` that require grad match
    finite differences; else GradcheckError (or False with ``raise_exception=False``).
    ``nondet_tol``, ``check_undefined_grad`` and ``fast_mode`` are accepted with no effect (webgrad's
    kernels are deterministic, and the full check runs, whose answer fast mode only estimates);
    the vmap and forward-mode checks raise NotImplementedError when asked for.

    >>> import webgrad as wg
    >>> x = wg.tensor([1.0, 2.0], dtype=wg.float64, requires_grad=True)
    >>> gradcheck(lambda t: t.exp().sum(), x)
    True
    >>> gradcheck(lambda t: t.detach() * t, (x,), raise_exception=False)   # misses d/dx of the first factor
    False
    """
    inputs = _as_tuple(inputs)
    wanted = _check_inputs("gradcheck", inputs, {
        "check_batched_grad": check_batched_grad, "check_batched_forward_grad": check_batched_forward_grad,
        "check_forward_ad": check_forward_ad, "masked": masked})
    if not check_backward_ad:
        return True
    outputs = _differentiable(_as_tuple(func(*inputs)))
    analytical = _analytical(outputs, inputs, wanted, check_grad_dtypes)
    for i in wanted:
        numerical = _numerical(func, inputs, i, eps)
        for o in range(len(outputs)):
            if _mismatch(numerical, analytical[i][o], o, atol, rtol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {o} with respect to input {i},\n"
                    f"numerical:{[[c[o][k] for c in numerical] for k in range(outputs[o].numel())]}\n"
                    f"analytical:{analytical[i][o]}\n")
    return True


def _random_like(o):
    """A grad_output for ``o``: uniform in [-1, 1), as PyTorch's ``make_tensor(low=-1, high=1)``."""
    with no_grad():
        values = rand(tuple(o.shape), dtype=o.dtype, device=o.device) * 2 - 1
    return values.requires_grad_(True)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-06, atol: float = 1e-05,
                  rtol: float = 0.001, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """``gradcheck`` of ``func``'s backward: second derivatives, with respect to ``inputs`` and
    ``grad_outputs`` (random in [-1, 1) when None). ``gen_non_contig_grad_outputs`` (a memory
    layout) has no effect; the other options are ``gradcheck``'s.

    >>> import webgrad as wg
    >>> x = wg.tensor([0.3, 0.7], dtype=wg.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: t ** 3, x)
    True
    """
    inputs = _as_tuple(inputs)
    _check_inputs("gradgradcheck", inputs, {"check_fwd_over_rev": check_fwd_over_rev, "masked": masked})
    if grad_outputs is None:
        grad_outputs = tuple(_random_like(o) for o in _differentiable(_as_tuple(func(*inputs))) if o.requires_grad)
    grad_outputs, n = _as_tuple(grad_outputs), len(inputs)

    def input_grads(*args):
        outputs = [o for o in _differentiable(_as_tuple(func(*args[:n]))) if o.requires_grad]
        wanted = [x for x in args[:n] if isinstance(x, Tensor) and x.requires_grad]
        grads = grad(outputs, wanted, list(args[n:]), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(input_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad)
