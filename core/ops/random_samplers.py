"""PyTorch's samplers with their own algorithms: ``poisson``, ``binomial``, ``_standard_gamma``,
``_sample_dirichlet`` and the fills ``Tensor.cauchy_`` and ``Tensor.log_normal_``.

PyTorch's CPU kernels draw these one element at a time (``cpu_serial_kernel``) from its generator;
webgrad runs the same algorithms on the host (``webgrad.backends.torch_random_samplers``) on the same
mt19937 stream and uploads the values, so a seed gives PyTorch's numbers on every backend.
``_standard_gamma`` is differentiable in its input by PyTorch's implicit reparameterisation
(``_standard_gamma_grad``: -(d cdf / d alpha) / pdf, by PyTorch's series and rational approximations).

>>> import webgrad as wg
>>> _ = wg.manual_seed(0); wg.poisson(wg.tensor([1.0, 20.0])).tolist()   # as torch's after torch.manual_seed(0)
[2.0, 28.0]
"""
from __future__ import annotations

from ..dtype_info import finfo
from ..engine import is_grad_enabled, no_grad
from ..ops.binary import where
from ..random import draw
from ..tensor import Tensor
from .common import check_tensor
from .joining import broadcast_tensors
from .random import FLOAT64, _fill, _floating, _values

__all__ = ["poisson", "binomial", "_standard_gamma", "_sample_dirichlet"]


def _host(t) -> list:
    """The values of ``t`` in row-major order, as PyTorch's serial kernels visit them."""
    return t.detach().reshape(-1).tolist()


def _floating_input(op, t, kernel):
    if not check_tensor(op, t).dtype.is_floating:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{t.dtype.name}\': {op} takes floating tensors')
    return t


def poisson(input, generator=None) -> Tensor:
    """One Poisson draw per element of ``input`` (the rates, non-negative), in its dtype; PyTorch's
    sampler (transformed rejection from rate 10 up, else multiplied uniforms) and numbers for a seed.
    Not differentiable (PyTorch's gradient is zero).

    >>> import webgrad as wg
    >>> wg.poisson(wg.tensor([0.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    rates = _floating_input("poisson", input, "poisson_cpu")
    values = _host(rates)
    if any(not v >= 0 for v in values):
        raise RuntimeError(f"poisson: invalid Poisson rate, expected rate to be non-negative, got {min(values)}")
    return _values(draw(generator, "poisson", "poisson", values), rates.shape, rates.dtype, rates._backend)


def binomial(count, prob, generator=None) -> Tensor:
    """One Binomial(count, prob) draw per element (``count`` and ``prob`` broadcast), in ``count``'s
    dtype; PyTorch's sampler (BTRS when count * min(prob, 1 - prob) >= 10, else inversion) and numbers
    for a seed. A prob outside [0, 1] is not checked, as in PyTorch (<= 0 gives 0, >= 1 gives count).

    >>> import webgrad as wg
    >>> wg.binomial(wg.tensor([5.0, 3.0]), wg.tensor([1.0, 0.0])).tolist()
    [5.0, 0.0]
    """
    for name, t in (("count", count), ("prob", prob)):
        if not check_tensor("binomial", t).dtype.is_floating:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: {t.dtype.name}")
    count_b, prob_b = broadcast_tensors(count, prob)
    values = draw(generator, "binomial", "binomial", _host(count_b), _host(prob_b), count.dtype.name)
    return _values(values, count_b.shape, count.dtype, count._backend)


def _standard_gamma(input, generator=None) -> Tensor:
    """One Gamma(alpha, 1) draw per element alpha of ``input`` (PyTorch's ``torch._standard_gamma``:
    Marsaglia and Tsang's method, its numbers for a seed); differentiable in ``input`` (PyTorch's
    reparameterised gradient, ``_standard_gamma_grad``).

    >>> import webgrad as wg
    >>> _standard_gamma(wg.tensor([0.0])).tolist()
    [1.1754943508222875e-38]
    """
    alpha = _floating_input("_standard_gamma", input, "gamma_cpu")
    values = draw(generator, "_standard_gamma", "standard_gamma", _host(alpha), alpha.dtype.name)
    x = _values(values, alpha.shape, alpha.dtype, alpha._backend)
    if not (alpha.requires_grad and is_grad_enabled()):
        return x
    with no_grad():
        slope = standard_gamma_grad(alpha.detach(), x)
    return x + (alpha - alpha.detach()) * slope     # adds exactly zero: the value is the draw's


def _sample_dirichlet(input, generator=None) -> Tensor:
    """One Dirichlet draw per row (last dimension) of concentrations ``input``: standard gammas in
    double precision over their row's sum, then kept within [tiny, the float below 1] of the dtype
    (PyTorch's ``torch._sample_dirichlet``, its numbers for a seed). Differentiable in ``input``
    by PyTorch's reparameterised gradient (``_dirichlet_grad``).

    >>> import webgrad as wg
    >>> round(_sample_dirichlet(wg.tensor([1.0, 2.0, 3.0])).sum().item(), 5)
    1.0
    """
    alpha = _floating_input("_sample_dirichlet", input, "dirichlet")
    n, k = alpha.numel(), alpha.shape[-1] if alpha.ndim else 1
    values = draw(generator, "_sample_dirichlet", "dirichlet", _host(alpha), k)
    both = _values(values, (2,) + tuple(alpha.shape), alpha.dtype, alpha._backend) if n else None
    if both is None:
        return alpha.detach().clone()
    info = finfo(alpha.dtype)
    x = both[1].clamp(min=info.tiny, max=1 - info.eps / 2)
    if not (alpha.requires_grad and is_grad_enabled()):
        return x
    with no_grad():
        slope = dirichlet_grad(x, alpha.detach(), alpha.detach().sum(-1, keepdim=True).expand(tuple(alpha.shape)))
    s = (alpha - alpha.detach()) * slope                # zero; its vector-Jacobian product is PyTorch's:
    return x + s - x.detach() * s.sum(-1, keepdim=True)  # slope * (g - sum(x g)), the value x's exactly


# ---------------------------------------------------------------- the Gamma's reparameterised gradient

_COEF_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
             -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
             -1.5247877e-07))


def _grad_small_x(alpha, x):
    """x < 0.8: a Taylor series of the cdf in x."""
    numer, denom = 1.0, alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x.pow(alpha)
    pdf = x.pow(alpha - 1) * (-x).exp()
    cdf = pow_x_alpha * series1
    cdf_alpha = (x.log() - alpha.digamma()) * cdf - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return where(result.isnan(), 0.0, result)


def _grad_large_alpha(alpha, x):
    """alpha > 8: Rice's saddle point expansion (a polynomial near x = alpha)."""
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    polynomial = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    apart = where(near, alpha + 1, alpha)                          # keeps 1 / (alpha - x) finite where unused
    denom = (8 * alpha).sqrt()
    term2 = denom / (apart - x)
    term3 = (x - alpha - alpha * (x / alpha).log()).abs().clamp(min=1e-300).pow(-1.5)
    term23 = where(x < alpha, term2 - term3, term2 + term3)
    term1 = (x / alpha).log() * term23 - (2 / alpha).sqrt() * (alpha + x) / ((apart - x) * (apart - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return where(near, polynomial, -stirling * x * term1 / denom)


def _grad_rational(alpha, x):
    """Otherwise: a bivariate rational approximation in log(x / alpha) and log(alpha)."""
    u, v = (x / alpha).log(), alpha.log()
    c = [_COEF_UV[0][i] + u * (_COEF_UV[1][i] + u * _COEF_UV[2][i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return (p / q).exp()


def _accumulating(*tensors):
    """The tensors in float64 where their backend holds it: PyTorch computes these gradients in
    double (its ``accscalar_t``) whatever the dtype; elsewhere (the GPU backends) in their own."""
    if FLOAT64 in getattr(tensors[0]._backend, "dtypes", ()):
        return tuple(t.to(FLOAT64) for t in tensors)
    return tensors


def standard_gamma_grad(alpha, x) -> Tensor:
    """d x / d alpha for x ~ Gamma(alpha, 1) (PyTorch's ``_standard_gamma_grad``), elementwise."""
    dtype = x.dtype
    alpha, x = _accumulating(alpha, x)
    safe_x = x.clamp(min=1e-30)
    return where(x < 0.8, _grad_small_x(alpha, safe_x),
                 where(alpha > 8.0, _grad_large_alpha(alpha, safe_x), _grad_rational(alpha, safe_x))).to(dtype)


# ---------------------------------------------------------------- the Dirichlet's reparameterised gradient

_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))))


def _zero_nan(t):
    return where(t.isnan(), 0.0, t)


def _beta_grad_alpha_small(x, alpha, beta):
    """x near 0: a Taylor series in x."""
    factor = alpha.digamma() - (alpha + beta).digamma() - x.log()
    numer, series = 1.0, 1 / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    return _zero_nan(x * (1 - x).pow(-beta) * series)


def _beta_grad_beta_small(x, alpha, beta):
    """x near 0, the gradient in beta: a Taylor series in x."""
    factor = (alpha + beta).digamma() - beta.digamma()
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    return _zero_nan(-(1 - x).pow(1 - beta) * series)


def _beta_grad_alpha_mid(x, alpha, beta):
    """alpha and beta both large: Rice's saddle point expansion (a polynomial near the mean)."""
    total = alpha + beta
    mean = alpha / total
    std = (alpha * beta / (total + 1)).sqrt() / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * ((43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
        3 * (59 + 180 * beta - 90 * x) * b2 + alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
            8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * b2 * (1 + 12 * total)
    polynomial = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / (2 * alpha * beta / total).sqrt()
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * b2))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = (2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * b2) / (
        (2 * alpha / beta).sqrt() * total.pow(1.5) * axbx * axbx)
    term2 = 0.5 * (alpha / (total * x)).log()
    term3 = (8 * alpha * beta / total).sqrt() / axbx
    term4 = (beta * (beta / (total * (1 - x))).log() + alpha * (alpha / (total * x)).log()).pow(-1.5)
    expansion = stirling * prefactor * (term1 + term2 * (term3 + where(x < mean, term4, -term4)))
    return where(near, polynomial, expansion)


def _beta_grad_rational(x, alpha, total):
    """Otherwise: a rational correction to an analytic approximation."""
    u = x.log()
    a = alpha.log() - u
    b = total.log() - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (total.digamma() - alpha.digamma()) / (total - alpha)
    return p / q * approx


def dirichlet_grad(x, alpha, total) -> Tensor:
    """PyTorch's ``_dirichlet_grad``: -(d cdf / d alpha) / pdf / (1 - x) for x ~ Beta(alpha, total -
    alpha), elementwise, by its four approximations (x near 0, x near 1, both large, else rational).

    >>> import webgrad as wg
    >>> round(dirichlet_grad(wg.tensor([0.5]), wg.tensor([1.0]), wg.tensor([2.0])).item(), 4)   # as torch's
    0.6931
    """
    dtype = x.dtype
    x, alpha, total = _accumulating(x, alpha, total)
    beta = total - alpha
    boundary = total * x * (1 - x)
    small = (x <= 0.5) & (boundary < 2.5)
    large = (x >= 0.5) & (boundary < 0.75)
    mid = (alpha > 6) & (beta > 6)
    return where(small, _beta_grad_alpha_small(x, alpha, beta),
                 where(large, -_beta_grad_beta_small(1 - x, beta, alpha),
                       where(mid, _beta_grad_alpha_mid(x, alpha, beta), _beta_grad_rational(x, alpha, total)))
                 ).to(dtype)


# ---------------------------------------------------------------- in-place fills (Tensor methods)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
    """Fill with draws from the Cauchy distribution: median + sigma * tan(pi * (U - 0.5)), U a double
    uniform (PyTorch's, its numbers for a seed).

    >>> import webgrad as wg
    >>> wg.empty(4).cauchy_().shape
    webgrad.Size([4])
    """
    if not self.dtype.is_floating:
        raise RuntimeError(f"cauchy_: Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {self.dtype.name}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    values = draw(generator, "cauchy_", "cauchy", self.numel(), float(median), float(sigma))
    return _fill(self, _values(values, self.shape, self.dtype, self._backend), "cauchy_")


def log_normal_(self, mean=1.0, std=2.0, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std²)) draws, one normal at a time as PyTorch's (its numbers for a seed).

    >>> import webgrad as wg
    >>> wg.empty(5).log_normal_().min().item() > 0
    True
    """
    dt = _floating("log_normal_", self.dtype, RuntimeError)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    values = draw(generator, "log_normal_", "log_normal", self.numel(), float(mean), float(std))
    return _fill(self, _values(values, self.shape, dt, self._backend), "log_normal_")


METHODS = {"cauchy_": cauchy_, "log_normal_": log_normal_}
