"""Random ops (PyTorch's ``rand``, ``randn``, ``randint``, ``randperm``, ``multinomial``,
``bernoulli``, ``normal`` and the in-place fills ``uniform_``, ``normal_``, ...).

Each op draws from its generator (``generator=``, else the default one; see ``webgrad.random``)
what PyTorch's CPU kernel draws, on the host, and hands the values to the ``RandomValues`` kernel,
which uploads them to the op's backend: a seed gives PyTorch's numbers on every backend. Ops whose
PyTorch kernel compares or divides by its draws (``bernoulli`` with tensor probabilities,
``multinomial``, ``normal`` with tensor arguments) draw on the host and compute on the backend.
"""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..dtypes import get_default_dtype, to_dtype
from ..engine import no_grad, run_kernel
from ..layouts import check_factory
from ..random import draw
from ..shapes import broadcast_shapes
from ..tensor import Tensor
from .common import check_tensor, is_scalar
from .complex import _as_complex
from .creation import _backend, _finish, _like, _shape, full, sizes_from
from .movement import cat, stack
from .reduce import argmax
from .sorting import topk

LONG = to_dtype("long")              # PyTorch's default integer dtype, as webgrad spells it
FLOAT64 = to_dtype("float64")
_COMPARE_BUDGET = 1 << 22            # elements per chunk of multinomial's [rows, samples, categories] test


# ---------------------------------------------------------------- checks


def _floating(op, dtype, error=NotImplementedError, complex_ok=False):
    dt = get_default_dtype() if dtype is None else to_dtype(dtype)
    if not (dt.is_floating or complex_ok and dt.is_complex):
        wanted = "a floating or complex dtype" if complex_ok else "float32 or float64"
        raise error(f"{op}: draws floating-point values; got dtype {dt.name}, wanted {wanted}")
    return dt


def _grad_dtype(op, dt, requires_grad):
    if requires_grad and not dt.is_floating:
        raise RuntimeError(f"{op}: only tensors of floating point dtype can require gradients, got dtype {dt.name}")


def _all(*conditions) -> list:
    """Read several 0-d bool tensors back in one transfer (the data checks PyTorch makes too)."""
    return stack(list(conditions)).tolist()


def _values(values, shape, dtype, be) -> Tensor:
    """Host draws (a flat array) as a tensor of ``shape`` and ``dtype`` on backend ``be``."""
    return run_kernel(K.RANDOM_VALUES, backend=be, shape=tuple(shape), dtype=dtype, values=values)


def _uniform(shape, dtype, be, generator, op, low=0.0, high=1.0) -> Tensor:
    if dtype.is_complex:   # PyTorch's: the real and imaginary parts drawn as pairs of real values
        return _as_complex(_uniform((*shape, 2), dtype.to_real(), be, generator, op, low, high))
    values = draw(generator, op, "uniform", math.prod(shape), dtype.name, float(low), float(high))
    return _values(values, shape, dtype, be)


def _normal(shape, dtype, be, generator, op, mean=0.0, std=1.0, contiguous=True) -> Tensor:
    if dtype.is_complex:   # PyTorch's: pairs of real draws, each part with half the variance
        return _as_complex(_normal((*shape, 2), dtype.to_real(), be, generator, op, mean, std / math.sqrt(2)))
    values = draw(generator, op, "normal", math.prod(shape), dtype.name, float(mean), float(std), contiguous)
    return _values(values, shape, dtype, be)


def _integers(shape, low, high, dtype, be, generator, op) -> Tensor:
    return _values(draw(generator, op, "integers", math.prod(shape), low, high), shape, dtype, be)


def _unit_like(p, generator, op) -> Tensor:
    """PyTorch's uniform per element of probabilities ``p`` for a comparison with them: a float draw for
    float p, a double draw for double p (kept in float64 where the backend holds it)."""
    wide = p.dtype is FLOAT64
    values = draw(generator, op, "uniform", p.numel(), "float64" if wide else "float32", 0.0, 1.0)
    return _values(values, p.shape, p.dtype if wide else to_dtype("float32"), p._backend)


# ---------------------------------------------------------------- new tensors


def rand(*args, size=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, backend=None) -> Tensor:
    """Uniform random values in [0, 1): ``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``;
    PyTorch's numbers for a seed.

    >>> import webgrad as wg
    >>> _ = wg.manual_seed(0); [round(v, 4) for v in wg.rand(3).tolist()]   # torch.manual_seed(0); torch.rand(3)
    [0.4963, 0.7682, 0.0885]
    """
    check_factory("rand", layout, pin_memory)
    shape, dt = sizes_from("rand", args, size), _floating("rand", dtype, complex_ok=True)
    return _finish(_uniform(shape, dt, _backend(backend, device), generator, "rand"), requires_grad)


def randn(*args, size=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, backend=None) -> Tensor:
    """Standard normal random values: ``randn(2, 3)``, ``randn((2, 3))`` or ``randn(size=(2, 3))``;
    PyTorch's numbers for a seed (its Box-Muller in blocks of 16 from 16 values up, else one value at a
    time with the second of each pair kept for the next).

    >>> import webgrad as wg
    >>> _ = wg.manual_seed(0); [round(v, 4) for v in wg.randn(3).tolist()]   # torch.manual_seed(0); torch.randn(3)
    [1.541, -0.2934, -2.1788]
    """
    check_factory("randn", layout, pin_memory)
    shape, dt = sizes_from("randn", args, size), _floating("randn", dtype, complex_ok=True)
    return _finish(_normal(shape, dt, _backend(backend, device), generator, "randn"), requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False, backend=None) -> Tensor:
    """Random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``
    (each also by keyword); ``dtype`` defaults to ``webgrad.long``.

    >>> import webgrad as wg
    >>> t = wg.randint(2, 5, (100,)); 2 <= t.min().item() and t.max().item() < 5
    True
    >>> wg.randint(5, size=(4,)).dtype == wg.long
    True
    """
    check_factory("randint", layout, pin_memory)
    low, high, size = _randint_args(args, {"low": low, "high": high, "size": size})
    dt = LONG if dtype is None else to_dtype(dtype)
    _grad_dtype("randint", dt, requires_grad)
    t = _integers(_shape(size, "randint"), low, high, dt, _backend(backend, device), generator, "randint")
    return _finish(t, requires_grad)


def _randint_args(args, given) -> tuple:
    """(low, high, size) from PyTorch's forms: positionals fill the slots not ``given`` by keyword
    in the order low, high, size, except that one value for the pair low/high is ``high`` (low 0)."""
    given = {k: v for k, v in given.items() if v is not None}
    slots = [n for n in ("low", "high", "size") if n not in given]
    if slots and slots[0] == "low" and len(args) == len(slots) - 1:
        slots = slots[1:]
    if len(args) != len(slots):
        raise TypeError(f"randint: expected randint(high, size) or randint(low, high, size), got "
                        f"{len(args)} positional argument(s) and keywords {sorted(given)}")
    values = {"low": 0, **given, **dict(zip(slots, args))}
    if not isinstance(values["size"], (tuple, list)):
        raise TypeError(f"randint: size must be a tuple of ints, got {type(values['size']).__name__}")
    low, high = (_int("randint", values[k], k) for k in ("low", "high"))
    if low >= high:
        raise RuntimeError(f"randint: expected low < high, got low={low}, high={high}")
    return low, high, values["size"]


def _int(op, value, name) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    return int(value)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False, backend=None) -> Tensor:
    """Uniform values in [0, 1) with ``input``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.rand_like(wg.zeros(2, 3)).shape
    webgrad.Size([2, 3])
    """
    check_factory("rand_like", layout, pin_memory, memory_format)
    like = _like(check_tensor("rand_like", input), dtype, backend, device)
    return rand(input.shape, generator=generator, requires_grad=requires_grad, **like)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False, backend=None) -> Tensor:
    """Standard normal values with ``input``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.randn_like(wg.zeros(4)).shape
    webgrad.Size([4])
    """
    check_factory("randn_like", layout, pin_memory, memory_format)
    like = _like(check_tensor("randn_like", input), dtype, backend, device)
    return randn(input.shape, generator=generator, requires_grad=requires_grad, **like)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None, pin_memory=False, backend=None) -> Tensor:
    """Random integers in [low, high) with ``input``'s shape, dtype and backend:
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``.

    >>> import webgrad as wg
    >>> wg.randint_like(wg.zeros(3), 10).dtype
    webgrad.float32
    """
    low, high = (0, low) if high is None else (low, high)
    check_factory("randint_like", layout, pin_memory, memory_format)
    like = _like(check_tensor("randint_like", input), dtype, backend, device)
    return randint(low, high, input.shape, generator=generator, requires_grad=requires_grad, **like)


def randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
             backend=None) -> Tensor:
    """A random permutation of ``0 .. n-1``: PyTorch's CPU shuffle on the host, then uploaded.

    >>> import webgrad as wg
    >>> _ = wg.manual_seed(0); wg.randperm(5).tolist()   # as torch.randperm(5) after torch.manual_seed(0)
    [4, 0, 1, 3, 2]
    """
    check_factory("randperm", layout, pin_memory)
    n = _int("randperm", n, "n")
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    dt = LONG if dtype is None else to_dtype(dtype)
    _grad_dtype("randperm", dt, requires_grad)
    be = _backend(backend, device)
    return _finish(_values(draw(generator, "randperm", "randperm", n), (n,), dt, be), requires_grad)


# ---------------------------------------------------------------- multinomial


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Draw ``num_samples`` category indices per row of ``input`` (1-d or 2-d non-negative weights,
    not necessarily summing to 1), with or without replacement; ``webgrad.long``.

    >>> import webgrad as wg
    >>> wg.multinomial(wg.tensor([0.0, 1.0, 0.0]), 1).tolist()
    [1]
    >>> sorted(wg.multinomial(wg.tensor([1.0, 2.0, 3.0]), 3).tolist())
    [0, 1, 2]
    """
    p = check_tensor("multinomial", input).detach()
    _check_multinomial(p, num_samples, replacement)
    rows = p if p.ndim == 2 else p.reshape(1, -1)
    with no_grad():
        if rows.shape[0] == 0:
            out = full((0, num_samples), 0, dtype=LONG, backend=input._backend)
        elif num_samples == 1 or not replacement:
            out = _without_replacement(rows, num_samples, generator)
        else:
            out = _with_replacement(rows, num_samples, generator)
    return out if input.ndim == 2 else out.reshape(num_samples)


def _check_multinomial(input, num_samples, replacement):
    if not input.dtype.is_floating:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.name}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}")
    num_samples = _int("multinomial", num_samples, "num_samples")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got {num_samples})")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError(f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({num_samples} > {input.shape[-1]})")
    if input.numel() == 0 and input.shape[-1] != 0:
        return
    valid, positive = _all(((input >= 0) & (input < math.inf)).all(), (input.sum(-1) > 0).all())
    if not valid:
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")
    if not positive:
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")


def _without_replacement(p, n, generator):
    """PyTorch's exponential race: q ~ Exp(1) per category (``exponential_``'s draws, in ``p``'s
    dtype); the categories ranked by p / q are a draw without replacement (argmax for one, topk)."""
    q = _values(draw(generator, "multinomial", "exponential", p.numel(), 1.0), p.shape, p.dtype, p._backend)
    scores = p / q
    if n == 1:
        return argmax(scores, -1, keepdim=True).to(LONG)
    return topk(scores, n, -1).indices.to(LONG)


def _with_replacement(p, n, generator):
    """PyTorch's inverse CDF: per row the cumulative sum over its total (the last set to 1); a sample
    with double uniform u takes the first category whose bound is >= u, i.e. the count of bounds
    below u. (Backends without float64 compare in float32: a u within float32 rounding of a bound
    may land in the next category.)"""
    rows, k = p.shape
    if k == 1:
        return full((rows, n), 0, dtype=LONG, backend=p._backend)
    cdf = p.cumsum(-1)
    bounds = (cdf[:, :k - 1] / cdf[:, k - 1:]).unsqueeze(1)       # [rows, 1, k-1]
    wide = FLOAT64 in getattr(p._backend, "dtypes", ())
    u = _values(draw(generator, "multinomial", "uniform", rows * n, "float64", 0.0, 1.0), (rows, n),
                FLOAT64 if wide else p.dtype, p._backend)
    bounds = bounds.to(u.dtype)
    step = max(1, _COMPARE_BUDGET // (rows * (k - 1)))
    chunks = [(bounds < u[:, s:s + step].unsqueeze(-1)).sum(-1) for s in range(0, n, step)]
    return (cat(chunks, -1) if len(chunks) > 1 else chunks[0]).to(LONG)


# ---------------------------------------------------------------- bernoulli, normal


def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (or ``p`` for every element when given), else 0, in
    ``input``'s dtype.

    >>> import webgrad as wg
    >>> wg.bernoulli(wg.tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    check_tensor("bernoulli", input)
    probs = _probability("bernoulli", input if p is None else p)
    return _bernoulli(input.shape, probs, input.dtype, input._backend, generator, "bernoulli")


def _bernoulli(shape, p, dtype, be, generator, op) -> Tensor:
    """PyTorch's Bernoulli draws as 1/0 in ``dtype``: with a number ``p``, a double uniform < p per
    element (dropout's masks too); with probabilities ``p`` (broadcast to ``shape``), a uniform of
    their kind < p."""
    if isinstance(p, Tensor):
        probs = p if tuple(p.shape) == tuple(shape) else p.expand(tuple(shape))
        return (_unit_like(probs, generator, op) < probs).to(dtype)
    return _values(draw(generator, op, "bernoulli_scalar", math.prod(shape), float(p)), shape, dtype, be)


def _probability(op, p):
    """``p`` checked to lie in [0, 1]: a number, or a floating tensor (one readback, as PyTorch's check)."""
    if isinstance(p, Tensor):
        if not p.dtype.is_floating:
            raise NotImplementedError(f"{op}: probabilities must be a floating tensor, got dtype {p.dtype.name}")
        p = p.detach()
        if p.numel() and not _all(((p >= 0) & (p <= 1)).all())[0]:
            raise RuntimeError(f"{op}: expected all probabilities p to satisfy 0 <= p <= 1")
        return p
    if not is_scalar(p) or not 0 <= p <= 1:
        raise RuntimeError(f"{op}: expects p to be in [0, 1], but got p={p}")
    return p


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False, backend=None) -> Tensor:
    """Normal draws with the given mean and std: both tensors (broadcast), either a tensor and the
    other a number, or two numbers and a ``size``. Not differentiable in ``mean``/``std``
    (PyTorch's gradients for them are zero).

    >>> import webgrad as wg
    >>> wg.normal(wg.zeros(3), 1.0).shape
    webgrad.Size([3])
    >>> wg.normal(2.0, 0.0, size=(2,)).tolist()
    [2.0, 2.0]
    """
    check_factory("normal", layout, pin_memory)
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal: with a number mean and std, give a size, e.g. normal(0.0, 1.0, size=(2, 3))")
        _check_std(std)
        t = _normal(_shape(size, "normal"), _floating("normal", dtype), _backend(backend, device), generator,
                    "normal", float(mean), float(std))
        return _finish(t, requires_grad)
    if size is not None or dtype is not None or backend is not None or device is not None or requires_grad:
        raise TypeError("normal: size, dtype, backend, device and requires_grad go with a number mean and std "
                        "only; a tensor mean or std gives the shape, dtype and backend")
    _check_std(std)
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors), op="normal")
    dt = _floating("normal", tensors[0].dtype if len(tensors) == 1 else _promoted(mean, std))
    if isinstance(std, Tensor):      # PyTorch: normal_(0, 1), then mul_(std), add_(mean)
        return _normal(shape, dt, tensors[0]._backend, generator, "normal") * std.detach() + _detached(mean)
    return _normal(shape, dt, mean._backend, generator, "normal", 0.0, float(std)) + mean.detach()


def _check_std(std):
    if isinstance(std, Tensor):
        if std.numel() and not _all((std.detach() >= 0).all())[0]:
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def _promoted(a, b):
    return a.dtype if a.dtype._rank >= b.dtype._rank else b.dtype


def _detached(x):
    return x.detach() if isinstance(x, Tensor) else x


# ---------------------------------------------------------------- in-place fills (Tensor methods)


def _fill(self, new, op) -> Tensor:
    """Write the draws ``new`` into ``self``, cast to its dtype (an int tensor takes rounded-down values)."""
    return self._assign(new if new.dtype is self.dtype else new.to(self.dtype), op)


def uniform_(self, from_=0.0, to=1.0, *, generator=None) -> Tensor:
    """Fill with values drawn uniformly from [from_, to) (PyTorch's ``from``, a Python keyword).

    >>> import webgrad as wg
    >>> t = wg.empty(100).uniform_(-1, 1); -1 <= t.min().item() and t.max().item() < 1
    True
    """
    dt = _floating("uniform_", self.dtype, complex_ok=True)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    return _fill(self, _uniform(self.shape, dt, self._backend, generator, "uniform_", from_, to), "uniform_")


def normal_(self, mean=0.0, std=1.0, *, generator=None) -> Tensor:
    """Fill with draws from N(mean, std²).

    >>> import webgrad as wg
    >>> wg.empty(2, 3).normal_(0, 0.01).shape
    webgrad.Size([2, 3])
    """
    dt = _floating("normal_", self.dtype, complex_ok=True)
    _check_std(std)
    new = _normal(self.shape, dt, self._backend, generator, "normal_", mean, std, self.is_contiguous())
    return _fill(self, new, "normal_")


def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcast to this one), else 0.

    >>> import webgrad as wg
    >>> wg.empty(3).bernoulli_(1.0).tolist()
    [1.0, 1.0, 1.0]
    """
    probs = _probability("bernoulli_", p)
    return _fill(self, _bernoulli(self.shape, probs, self.dtype, self._backend, generator, "bernoulli_"), "bernoulli_")


def exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
    """Fill with draws from the exponential distribution of rate ``lambd``: -1/lambd * log1p(-U), U a
    double uniform (PyTorch's).

    >>> import webgrad as wg
    >>> wg.empty(100).exponential_(2.0).min().item() >= 0
    True
    """
    dt = _floating("exponential_", self.dtype, RuntimeError)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    values = draw(generator, "exponential_", "exponential", self.numel(), float(lambd))
    return _fill(self, _values(values, self.shape, dt, self._backend), "exponential_")


def geometric_(self, p, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...):
    ceil(log(U) / log1p(-p)), U a double uniform (PyTorch's).

    >>> import webgrad as wg
    >>> wg.empty(100).geometric_(0.5).min().item() >= 1
    True
    """
    if not (is_scalar(p) and 0 < p < 1):
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    values = draw(generator, "geometric_", "geometric", self.numel(), float(p))
    return _fill(self, _values(values, self.shape, self.dtype, self._backend), "geometric_")


_FULL_RANGE = ("bool", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def random_(self, from_=None, to=None, *, generator=None) -> Tensor:
    """Fill with integers drawn uniformly from [from_, to): ``random_(to)``, ``random_(from_, to)``,
    or ``random_()``: [0, 2**mantissa digits] for floats (float32: 2**24), [0, max] for integers
    (PyTorch's draws: a 32- or 64-bit draw modulo the range).

    >>> import webgrad as wg
    >>> t = wg.zeros(50).random_(3, 5); sorted(set(t.tolist()))
    [3.0, 4.0]
    """
    if to is None and from_ is not None:
        from_, to = 0, from_
    if to is None:
        if self.dtype.name not in _FULL_RANGE:
            raise NotImplementedError(f"random_: without bounds webgrad fills {', '.join(_FULL_RANGE)} tensors; "
                                      f"this one is {self.dtype.name}: give from/to")
        values = draw(generator, "random_", "full_range", self.numel(), self.dtype.name)
        return _fill(self, _values(values, self.shape, self.dtype, self._backend), "random_")
    low, high = _int("random_", from_ or 0, "from"), _int("random_", to, "to")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _fill(self, _integers(self.shape, low, high, self.dtype, self._backend, generator, "random_"), "random_")


METHODS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "exponential_": exponential_,
           "geometric_": geometric_, "random_": random_, "bernoulli": bernoulli, "multinomial": multinomial}

__all__ = ["rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "multinomial",
           "bernoulli", "normal"]
