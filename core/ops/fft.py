"""The discrete Fourier transforms of ``torch.fft``, composed as PyTorch's (``aten/native/SpectralOps.cpp``)
from three kernels: ``FftC2C`` (complex to complex, either direction), ``FftR2C`` (real to complex,
whole or one-sided) and ``FftC2R`` (one-sided complex to real). The inverse real-input transforms are
the conjugates of forward ones, the Hermitian ones take conjugates first, and ``n``/``s`` crop or
zero-pad the input first, as PyTorch's, so values, dtypes, errors and gradients (``gradients/fft.py``)
are PyTorch's.

Real float32 input gives complex64, float64 complex128; integers and bool take the default float
dtype; float16/bfloat16 raise RuntimeError, as PyTorch's cpu FFT. The transforms run on cpu only:
the GPU backends hold no complex dtypes and their FFT kernels raise TypeError saying so.

>>> import webgrad as wg
>>> fft(wg.tensor([1.0, 0.0, -1.0, 0.0]))
tensor([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
"""
from __future__ import annotations

from .. import kernel_names as K
from ..dtypes import bfloat16, float16, get_default_dtype
from ..engine import run_kernel
from ..shapes import normalize_axis
from ..tensor import Tensor
from .common import check_tensor
from .complex import conj
from .movement import narrow, pad

# norm= -> PyTorch's normalization mode of the (forward, backward) direction
_NORMS = {None: ("none", "by_n"), "backward": ("none", "by_n"), "forward": ("by_n", "none"),
          "ortho": ("by_root_n", "by_root_n")}


# ---------------------------------------------------------------- the kernels


def c2c(x, dims, norm: str, forward: bool) -> Tensor:
    """The complex transform of ``x`` over ``dims`` (``forward``: the e^{-i..} direction), scaled by ``norm``."""
    return run_kernel(K.FFT_C2C, x, dims=tuple(dims), norm=norm, forward=forward)


def r2c(x, dims, norm: str, onesided: bool) -> Tensor:
    """The forward transform of real ``x`` over ``dims``; ``onesided`` keeps n // 2 + 1 of the last dim."""
    return run_kernel(K.FFT_R2C, x, dims=tuple(dims), norm=norm, onesided=onesided)


def c2r(x, dims, norm: str, last_dim_size: int) -> Tensor:
    """The inverse transform of one-sided ``x`` over ``dims``: real, ``last_dim_size`` long in the last dim."""
    return run_kernel(K.FFT_C2R, x, dims=tuple(dims), norm=norm, last_dim_size=last_dim_size)


# ---------------------------------------------------------------- arguments


def _norm(op: str, norm, forward: bool) -> str:
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"{op}: argument 'norm' must be str, not {type(norm).__name__}")
    if norm not in _NORMS:
        raise RuntimeError(f'{op}: Invalid normalization mode: "{norm}" (expected "backward", "ortho" or "forward")')
    return _NORMS[norm][0 if forward else 1]


def _promote(op: str, x, require_complex: bool = False) -> Tensor:
    """PyTorch's ``promote_tensor_fft``: integers and bool to the default float, half precision refused."""
    dtype = x._dtype
    if not dtype.is_complex and not dtype.is_floating:
        x = x.to(get_default_dtype())
    elif dtype is float16 or dtype is bfloat16:
        raise RuntimeError(f"{op}: Unsupported dtype {dtype.name} (PyTorch's cpu FFT takes float32, float64 and "
                           f"complex; convert with .float())")
    return x.to(x._dtype.to_complex()) if require_complex and not x._dtype.is_complex else x


def _real_only(op: str, x) -> Tensor:
    if check_tensor(op, x)._dtype.is_complex:
        raise RuntimeError(f"{op} expects a real input tensor, but got {x._dtype.name}")
    return _promote(op, x)


def _dim(op: str, x, dim) -> int:
    if not x.ndim:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    return normalize_axis(dim, x.ndim, op)


def _points(op: str, n) -> int:
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"{op}: argument 'n' must be int, not {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"{op}: Invalid number of data points ({n}) specified")
    return n


def _resize(x, dims, sizes) -> Tensor:
    """PyTorch's ``resize_fft_input``: crop (a slice) or zero-pad the end of each of ``dims`` to its size."""
    pads = [0] * (2 * x.ndim)
    for d, n in zip(dims, sizes):
        if x.shape[d] > n:
            x = narrow(x, d, 0, n)
        pads[2 * (x.ndim - 1 - d) + 1] = max(n - x.shape[d], 0)
    return pad(x, pads) if any(pads) else x


def _shape_and_dims(op: str, x, s, dim) -> tuple:
    """PyTorch's ``canonicalize_fft_shape_and_dim_args``: the signal sizes and the dims of an n-dim transform."""
    check_tensor(op, x)
    dims = None if dim is None else [_dim(op, x, d) for d in ((dim,) if isinstance(dim, int) else dim)]
    if dims is not None and len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: FFT dims must be unique, got {tuple(dim)}")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same length, got s={s} "
                               f"and dim={tuple(dims)}")
        if len(s) > x.ndim:
            raise RuntimeError(f"{op}: Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
        dims = list(range(x.ndim - len(s), x.ndim)) if dims is None else dims
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    else:
        dims = list(range(x.ndim)) if dims is None else dims
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _points(op, n)
    return shape, dims


def _c2r_shape_and_dims(op: str, x, s, dim) -> tuple:
    """PyTorch's ``canonicalize_fft_c2r_shape_and_dim_args``: also the real output's last size; the
    input's last size is then that // 2 + 1."""
    shape, dims = _shape_and_dims(op, x, s, dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    given = None if s is None else s if isinstance(s, int) else list(s)[-1]
    last = 2 * (x.shape[dims[-1]] - 1) if given is None or given == -1 else shape[-1]
    _points(op, last)
    return shape[:-1] + [last // 2 + 1], dims, last


# ---------------------------------------------------------------- one dim, as PyTorch's fft_c2c / fft_r2c / fft_c2r


def _fft_c2c(op, x, n, dim, norm, forward) -> Tensor:
    d = _dim(op, x, dim)
    n = x.shape[d] if n is None else _points(op, n)
    return c2c(_resize(x, (d,), (n,)), (d,), _norm(op, norm, forward), forward)


def _fft_r2c(op, x, n, dim, norm, forward, onesided) -> Tensor:
    x = _real_only(op, x)
    d = _dim(op, x, dim)
    n = x.shape[d] if n is None else _points(op, n)
    y = r2c(_resize(x, (d,), (n,)), (d,), _norm(op, norm, forward), onesided)
    return y if forward else conj(y)


def _fft_c2r(op, x, n, dim, norm, forward) -> Tensor:
    x = _promote(op, check_tensor(op, x), require_complex=True)
    d = _dim(op, x, dim)
    last = _points(op, 2 * (x.shape[d] - 1) if n is None else n)
    x = x if n is None else _resize(x, (d,), (last // 2 + 1,))
    return c2r(conj(x) if forward else x, (d,), _norm(op, norm, forward), last)


def _complex_or_real(op, input, n, dim, norm, forward) -> Tensor:
    if check_tensor(op, input)._dtype.is_complex:
        return _fft_c2c(op, input, n, dim, norm, forward)
    return _fft_r2c(op, input, n, dim, norm, forward, onesided=False)


def fft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The one-dimensional discrete Fourier transform over ``dim``, as ``torch.fft.fft``: ``n`` crops or
    zero-pads the signal first; ``norm`` is "backward" (no scale; the default), "ortho" (1/sqrt(n)) or
    "forward" (1/n). Real input gives the full (two-sided) complex result.

    >>> import webgrad as wg
    >>> wg.fft.fft(wg.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    return _complex_or_real("fft", input, n, dim, norm, True)


def ifft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of ``fft`` (scaled by 1/n with the default norm "backward"), as ``torch.fft.ifft``.

    >>> import webgrad as wg
    >>> wg.fft.ifft(wg.tensor([10.0, -2 + 2j, -2.0, -2 - 2j]))
    tensor([1.+0.j, 2.+0.j, 3.+0.j, 4.+0.j])
    """
    return _complex_or_real("ifft", input, n, dim, norm, False)


def rfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The transform of a real signal, one-sided (the n // 2 + 1 non-negative frequencies), as
    ``torch.fft.rfft``.

    >>> import webgrad as wg
    >>> wg.fft.rfft(wg.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    return _fft_r2c("rfft", input, n, dim, norm, True, onesided=True)


def irfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of ``rfft``: a real signal of length ``n`` (default 2 * (m - 1) from m frequencies),
    as ``torch.fft.irfft``.

    >>> import webgrad as wg
    >>> wg.fft.irfft(wg.tensor([10.0, -2 + 2j, -2.0])).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return _fft_c2r("irfft", input, n, dim, norm, False)


def hfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its first half: real, of length ``n``
    (default 2 * (m - 1)), as ``torch.fft.hfft``.

    >>> import webgrad as wg
    >>> wg.fft.hfft(wg.tensor([2.0, 1.0, 0.0])).tolist()
    [4.0, 2.0, 0.0, 2.0]
    """
    return _fft_c2r("hfft", input, n, dim, norm, True)


def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of ``hfft``: the one-sided inverse transform of a real signal, as ``torch.fft.ihfft``.

    >>> import webgrad as wg
    >>> wg.fft.ihfft(wg.tensor([4.0, 2.0, 0.0, 2.0]))
    tensor([2.-0.j, 1.-0.j, 0.-0.j])
    """
    return _fft_r2c("ihfft", input, n, dim, norm, False, onesided=True)


# ---------------------------------------------------------------- n dims, as PyTorch's fftn_c2c & co.


def _fftn(op, input, s, dim, norm, forward) -> Tensor:
    shape, dims = _shape_and_dims(op, input, s, dim)
    x = _resize(_promote(op, input, require_complex=True), dims, shape)
    return c2c(x, dims, _norm(op, norm, forward), forward)


def _rfftn(op, input, s, dim, norm) -> Tensor:
    shape, dims = _shape_and_dims(op, _real_only(op, input), s, dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    return r2c(_resize(_promote(op, input), dims, shape), dims, _norm(op, norm, True), True)


def _irfftn(op, input, s, dim, norm) -> Tensor:
    shape, dims, last = _c2r_shape_and_dims(op, input, s, dim)
    x = _resize(_promote(op, input, require_complex=True), dims, shape)
    return c2r(x, dims, _norm(op, norm, False), last)


def _hfftn(op, input, s, dim, norm) -> Tensor:
    shape, dims, last = _c2r_shape_and_dims(op, input, s, dim)
    x = _resize(_promote(op, input, require_complex=True), dims, shape)
    mode = _norm(op, norm, True)
    x = c2c(x, dims[:-1], mode, True) if len(dims) > 1 else x
    return c2r(conj(x), dims[-1:], mode, last)


def _ihfftn(op, input, s, dim, norm) -> Tensor:
    shape, dims = _shape_and_dims(op, _real_only(op, input), s, dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    mode = _norm(op, norm, False)
    y = conj(r2c(_resize(_promote(op, input), dims, shape), dims[-1:], mode, True))
    return c2c(y, dims[:-1], mode, False) if len(dims) > 1 else y


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional transform over ``dim`` (``fftn`` with two dims), as ``torch.fft.fft2``.

    >>> import webgrad as wg
    >>> wg.fft.fft2(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[10.+0.j, -2.+0.j],
            [-4.+0.j,  0.+0.j]])
    """
    return _fftn("fft2", input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The inverse of ``fft2``, as ``torch.fft.ifft2``.

    >>> import webgrad as wg
    >>> wg.fft.ifft2(wg.tensor([[10.0, -2.0], [-4.0, 0.0]])).real.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _fftn("ifft2", input, s, dim, norm, False)


def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional transform over ``dim`` (all dims, or the last len(s)), each cropped or zero-padded
    to ``s`` (-1: as it is), as ``torch.fft.fftn``.

    >>> import webgrad as wg
    >>> wg.fft.fftn(wg.ones(2, 4)).real.tolist(), wg.fft.fftn(wg.ones(2, 2), s=(2, 3)).shape
    ([[8.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], webgrad.Size([2, 3]))
    """
    return _fftn("fftn", input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``fftn``, as ``torch.fft.ifftn``.

    >>> import webgrad as wg
    >>> wg.fft.ifftn(wg.fft.fftn(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))).real.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _fftn("ifftn", input, s, dim, norm, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``rfftn`` over two dims, as ``torch.fft.rfft2``.

    >>> import webgrad as wg
    >>> wg.fft.rfft2(wg.ones(2, 4)).shape
    webgrad.Size([2, 3])
    """
    return _rfftn("rfft2", input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``irfftn`` over two dims, as ``torch.fft.irfft2``.

    >>> import webgrad as wg
    >>> wg.fft.irfft2(wg.fft.rfft2(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _irfftn("irfft2", input, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional transform of a real signal, one-sided in the last of ``dim``, as ``torch.fft.rfftn``.

    >>> import webgrad as wg
    >>> wg.fft.rfftn(wg.ones(2, 3, 4)).shape
    webgrad.Size([2, 3, 3])
    """
    return _rfftn("rfftn", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``rfftn``: real, with the last of ``dim`` 2 * (m - 1) long unless ``s`` says, as
    ``torch.fft.irfftn``.

    >>> import webgrad as wg
    >>> wg.fft.irfftn(wg.fft.rfftn(wg.ones(2, 3, 5)), s=(3, 5)).shape
    webgrad.Size([2, 3, 5])
    """
    return _irfftn("irfftn", input, s, dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``hfftn`` over two dims, as ``torch.fft.hfft2``.

    >>> import webgrad as wg
    >>> wg.fft.hfft2(wg.ones(2, 3)).tolist()
    [[8.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    """
    return _hfftn("hfft2", input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``ihfftn`` over two dims, as ``torch.fft.ihfft2``.

    >>> import webgrad as wg
    >>> wg.fft.ihfft2(wg.ones(2, 4))
    tensor([[1.-0.j, 0.-0.j, 0.-0.j],
            [0.+0.j, 0.+0.j, 0.+0.j]])
    """
    return _ihfftn("ihfft2", input, s, dim, norm)


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The n-dimensional transform of a Hermitian-symmetric signal given by the first half of its last
    of ``dim``: real, as ``torch.fft.hfftn``.

    >>> import webgrad as wg
    >>> wg.fft.hfftn(wg.ones(1, 3)).tolist()
    [[4.0, 0.0, 0.0, 0.0]]
    """
    return _hfftn("hfftn", input, s, dim, norm)


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of ``hfftn``: the one-sided inverse transform of a real signal, as ``torch.fft.ihfftn``.

    >>> import webgrad as wg
    >>> wg.fft.ihfftn(wg.ones(1, 4))
    tensor([[1.-0.j, 0.-0.j, 0.-0.j]])
    """
    return _ihfftn("ihfftn", input, s, dim, norm)


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
