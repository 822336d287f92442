"""More of ``torch.nn.functional``'s activations, composed from webgrad's ops: the piecewise ones
(relu6, hardtanh, hardswish, hardsigmoid, threshold, softshrink, hardshrink), the smooth ones
(selu, celu, mish, softsign, logsigmoid, tanhshrink), softmin, glu and prelu. Where PyTorch
takes ``inplace``, ``inplace=True`` writes the result into the input, as there."""
from __future__ import annotations

import struct
import warnings

from ...ops import binary, unary
from ...ops.common import check_tensor, real_only
from ...ops.creation import empty_like, zeros_like
from ...ops.random import _values
from ...random import draw
from ...shapes import normalize_axis
from .activation import _maybe_inplace, implicit_dim, softmax

_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _hardtanh(x, min_val, max_val):
    return unary.clamp(x, min_val, max_val)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to [min_val, max_val].

    >>> import webgrad as wg
    >>> hardtanh(wg.tensor([-2.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _maybe_inplace("hardtanh", _hardtanh, input, inplace, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``.

    >>> import webgrad as wg
    >>> relu6(wg.tensor([-1.0, 3.0, 8.0])).tolist()
    [0.0, 3.0, 6.0]
    """
    return _maybe_inplace("relu6", _hardtanh, input, inplace, 0.0, 6.0)


def _hardsigmoid(x):
    return binary.div(unary.clamp(binary.add(x, 3.0), 0.0, 6.0), 6.0)


def hardsigmoid(input, inplace=False):
    """``relu6(input + 3) / 6``.

    >>> import webgrad as wg
    >>> hardsigmoid(wg.tensor([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return _maybe_inplace("hardsigmoid", _hardsigmoid, input, inplace)


def _hardswish(x):
    return binary.mul(x, _hardsigmoid(x))


def hardswish(input, inplace=False):
    """``input * relu6(input + 3) / 6``.

    >>> import webgrad as wg
    >>> hardswish(wg.tensor([-4.0, 1.0, 4.0])).tolist()
    [-0.0, 0.6666666865348816, 4.0]
    """
    return _maybe_inplace("hardswish", _hardswish, input, inplace)


def _threshold(x, threshold, value):
    return binary.where(binary.gt(x, threshold), x, value)


def threshold(input, threshold, value, inplace=False):  # noqa: A002  (torch's parameter name)
    """``input`` where it is above ``threshold``, else ``value``.

    >>> import webgrad as wg
    >>> threshold(wg.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return _maybe_inplace("threshold", _threshold, input, inplace, threshold, value)


def threshold_(input, threshold, value):  # noqa: A002
    """In-place ``threshold``."""
    return _maybe_inplace("threshold", _threshold, input, True, threshold, value)


def softshrink(input, lambd=0.5):
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, 0 between.

    >>> import webgrad as wg
    >>> softshrink(wg.tensor([-2.0, 0.2, 1.0])).tolist()
    [-1.5, 0.0, 0.5]
    """
    x = check_tensor("softshrink", input)
    if lambd < 0:
        raise ValueError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    shrunk = binary.sub(x, binary.mul(unary.sign(x), lambd))
    return binary.where(binary.gt(unary.abs(x), lambd), shrunk, 0.0)


@real_only()
def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd``, else 0.

    >>> import webgrad as wg
    >>> hardshrink(wg.tensor([-2.0, 0.2, 1.0])).tolist()
    [-2.0, 0.0, 1.0]
    """
    x = check_tensor("hardshrink", input)
    return binary.where(binary.gt(unary.abs(x), lambd), x, 0.0)


def tanhshrink(input):
    """``input - tanh(input)``.

    >>> import webgrad as wg
    >>> tanhshrink(wg.tensor([0.0])).tolist()
    [0.0]
    """
    return binary.sub(check_tensor("tanhshrink", input), unary.tanh(input))


def _celu(x, alpha):
    negative = binary.mul(unary.expm1(binary.div(unary.clamp(x, max=0.0), alpha)), alpha)
    return binary.add(unary.relu(x), negative)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import webgrad as wg
    >>> celu(wg.tensor([1.0, 0.0])).tolist()
    [1.0, 0.0]
    """
    if alpha == 0:
        raise ValueError("celu: ZeroDivisionError (alpha must not be 0)")
    return _maybe_inplace("celu", _celu, input, inplace, alpha)


def _selu(x):
    negative = binary.mul(unary.expm1(unary.clamp(x, max=0.0)), _SELU_ALPHA)
    return binary.mul(binary.add(unary.relu(x), negative), _SELU_SCALE)


def selu(input, inplace=False):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with PyTorch's self-normalising constants.

    >>> import webgrad as wg
    >>> round(selu(wg.tensor([1.0])).item(), 6)
    1.050701
    """
    return _maybe_inplace("selu", _selu, input, inplace)


def celu_(input, alpha=1.0):
    """In-place ``celu``.

    >>> import webgrad as wg
    >>> x = wg.tensor([-1.0, 2.0]); _ = celu_(x); [round(v, 4) for v in x.tolist()]
    [-0.6321, 2.0]
    """
    return celu(input, alpha, inplace=True)


def selu_(input):
    """In-place ``selu``.

    >>> import webgrad as wg
    >>> x = wg.tensor([1.0]); _ = selu_(x); round(x.item(), 6)
    1.050701
    """
    return selu(input, inplace=True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g = -log(Exponential(1))``, drawn
    as PyTorch draws it (a seeded run gives PyTorch's numbers). ``hard``: the one-hot of the argmax,
    with the soft sample's gradient (straight-through). ``eps`` is deprecated and has no effect (a
    warning says so when given), as in PyTorch.

    >>> import webgrad as wg
    >>> y = gumbel_softmax(wg.zeros(2, 3), hard=True)
    >>> y.sum(-1).tolist()
    [1.0, 1.0]
    """
    check_tensor("gumbel_softmax", logits, "logits")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = empty_like(logits).exponential_().log().neg()
    y_soft = softmax(binary.div(binary.add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _mish(x):
    return binary.mul(x, unary.tanh(unary.softplus(x)))


def mish(input, inplace=False):
    """``input * tanh(softplus(input))``.

    >>> import webgrad as wg
    >>> round(mish(wg.tensor([1.0])).item(), 6)
    0.865098
    """
    return _maybe_inplace("mish", _mish, input, inplace)


def softsign(input):
    """``input / (1 + |input|)``.

    >>> import webgrad as wg
    >>> softsign(wg.tensor([1.0, -3.0])).tolist()
    [0.5, -0.75]
    """
    x = check_tensor("softsign", input)
    return binary.div(x, binary.add(unary.abs(x), 1.0))


def logsigmoid(input):
    """``log(sigmoid(input))``, computed as ``-softplus(-input)`` (stable for large ``|input|``).

    >>> import webgrad as wg
    >>> round(logsigmoid(wg.tensor([0.0])).item(), 6)
    -0.693147
    """
    return unary.neg(unary.softplus(unary.neg(check_tensor("logsigmoid", input))))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``.

    >>> import webgrad as wg
    >>> softmin(wg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = implicit_dim("softmin", check_tensor("softmin", input).ndim, _stacklevel)
    return softmax(unary.neg(check_tensor("softmin", input)), dim, dtype=dtype)


def glu(input, dim=-1):
    """The gated linear unit: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``input`` along ``dim``.

    >>> import webgrad as wg
    >>> glu(wg.tensor([2.0, 0.0])).tolist()
    [1.0]
    """
    check_tensor("glu", input)
    d = normalize_axis(dim, input.ndim, "glu")
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.split(n // 2, d)
    return binary.mul(a, unary.sigmoid(b))


def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)``, ``weight`` one value or one per channel (dim 1).

    >>> import webgrad as wg
    >>> prelu(wg.tensor([[-2.0, 3.0]]), wg.tensor([0.25])).tolist()
    [[-0.5, 3.0]]
    """
    check_tensor("prelu", input)
    check_tensor("prelu", weight, "weight")
    if weight.numel() != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if weight.ndim != 1 or weight.shape[0] != channels:
            raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size: weight "
                               f"{tuple(weight.shape)}, input {tuple(input.shape)}")
        if input.ndim >= 2:
            weight = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    return binary.where(binary.gt(input, 0), input, binary.mul(weight, input))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: while ``training`` each negative element is scaled by a slope drawn
    uniformly from [lower, upper] (PyTorch's draws); otherwise by the mean slope (lower + upper) / 2.

    >>> import webgrad as wg
    >>> rrelu(wg.tensor([-1.0, 2.0]), 0.2, 0.4).tolist()
    [-0.30000001192092896, 2.0]
    """
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower, upper, training, inplace, generator):
    import webgrad as wg
    check_tensor("rrelu", input)
    if training:   # PyTorch draws a double uniform slope per element <= 0, in order (one readback: their count)
        negative = input.detach() <= 0
        count = int(negative.sum().item())
        low, high = (float(struct.unpack("f", struct.pack("f", v))[0]) for v in (lower, upper))   # in float, as PyTorch
        values = draw(generator, "rrelu", "uniform", count, "float64", low, high)
        slopes = _values(values, (count,), input.dtype, input._backend)
        slope = wg.ones_like(input).masked_scatter(negative, slopes)
    else:
        slope = (lower + upper) / 2
    out = wg.where(input >= 0, input, input * slope)
    return input._assign(out, "rrelu") if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place ``rrelu`` (its random slopes drawn from ``generator`` when given).

    >>> import webgrad as wg
    >>> rrelu_(wg.tensor([-1.0, 2.0]), 0.2, 0.4).tolist()
    [-0.30000001192092896, 2.0]
    """
    return _rrelu(input, lower, upper, training, True, generator)


__all__ = ["rrelu", "rrelu_", "hardtanh", "hardtanh_", "relu6", "hardsigmoid", "hardswish", "threshold", "threshold_", "softshrink",
           "hardshrink", "tanhshrink", "celu", "celu_", "selu", "selu_", "gumbel_softmax", "mish", "softsign", "logsigmoid", "softmin", "glu", "prelu"]
