"""The short-time Fourier transform and its inverse, ``torch.stft``/``torch.istft`` (and the Tensor
methods), composed as PyTorch's (``torch/functional.py`` and ``SpectralOps.cpp``): frames are
``unfold`` views of the (centre-padded) signal times the window, each transformed by the FFT kernels;
``istft`` transforms back, windows again and overlap-adds (an ``index_add``), divided by the summed
squared window. Gradients flow through all of it. cpu only, as the transforms (``ops/fft.py``).

>>> import webgrad as wg
>>> x = wg.arange(8.0)
>>> s = wg.stft(x, 4, window=wg.hann_window(4), return_complex=True); s.shape
webgrad.Size([3, 9])
>>> wg.istft(s, 4, window=wg.hann_window(4), length=8).round().tolist()
[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
"""
from __future__ import annotations

import warnings

from ..tensor import Tensor
from . import creation, indexing, movement
from .common import check_tensor
from .complex import view_as_real
from .fft import _promote, c2c, c2r, r2c

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied, which is known to cause spectral "
              "leakage. Other windows such as webgrad.hann_window or webgrad.hamming_window are recommended to "
              "reduce spectral leakage. To suppress this warning and use a rectangular window, explicitly set "
              "`window=webgrad.ones(n_fft)`.")


def _centred(window, n_fft: int, win_length: int, like) -> Tensor:
    """``window`` (ones when None) zero-padded on both sides to ``n_fft``, as PyTorch's."""
    if window is None:
        window = creation.ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    left = (n_fft - win_length) // 2
    return movement.pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


def _stft_checks(input, n_fft, hop_length, win_length, window, length) -> None:
    what = (f"stft(input of shape {tuple(input.shape)} and dtype {input.dtype.name}, n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length})")
    if not (input.dtype.is_floating or input.dtype.is_complex):
        raise RuntimeError(f"{what}: expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{what}: expected a 1D or 2D tensor")
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{what}: expected 0 < n_fft <= {length} (the signal's length), but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{what}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{what}: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{what}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {tuple(window.shape)}")


def _centre_pad(input, n_fft: int, pad_mode: str) -> Tensor:
    """PyTorch's ``center=True``: ``n_fft // 2`` samples of ``pad_mode`` padding on both ends of the signal."""
    pad, n = n_fft // 2, input.shape[-1] if input.ndim else 0
    if pad_mode == "reflect" and input.ndim in (1, 2) and pad >= n:
        raise RuntimeError(f"stft: reflect padding of {pad} (n_fft // 2) must be less than the signal's length {n}")
    if input.ndim not in (1, 2):
        return input   # (refused by the checks that follow, as PyTorch's)
    extended = movement.reshape(input, (1,) * (3 - input.ndim) + tuple(input.shape))
    return movement.reshape(movement.pad(extended, (pad, pad), pad_mode), (-1,) * (input.ndim - 1) + (n + 2 * pad,))


def _frames(x, n_fft, hop, win_length, window, align_to_window) -> Tensor:
    """The windowed frames of ``x`` ([batch, length]): [batch, frames, n_fft]."""
    if align_to_window:   # frames of the window's own length, each then centred in n_fft
        framed = x.unfold(-1, win_length, hop)
        framed = framed if window is None else framed * window
        left = (n_fft - win_length) // 2
        return movement.pad(framed, (left, n_fft - win_length - left)) if win_length < n_fft else framed
    framed = x.unfold(-1, n_fft, hop)
    return framed if window is None and win_length == n_fft else framed * _centred(window, n_fft, win_length, x)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None) -> Tensor:
    """The short-time Fourier transform of a signal ``[L]`` or batch ``[B, L]``, as ``torch.stft``: a complex
    ``[B?, n_fft // 2 + 1 (onesided) or n_fft, frames]``. ``return_complex`` must be given for real input
    (False, deprecated in PyTorch, gives ``view_as_real`` of the result with its warning).

    >>> import webgrad as wg
    >>> wg.stft(wg.ones(8), 4, hop_length=4, window=wg.ones(4), center=False, return_complex=True)
    tensor([[4.+0.j, 4.+0.j],
            [0.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    check_tensor("stft", input)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = _centre_pad(input, n_fft, pad_mode) if center else input
    wants_complex = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    return_complex = wants_complex if return_complex is None and wants_complex else return_complex
    if not return_complex:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    _stft_checks(x, n_fft, hop, win, window, x.shape[-1] if x.ndim else 0)
    if window is None:
        warnings.warn(_NO_WINDOW)
    frames = _promote("stft", _frames(x if x.ndim == 2 else x[None], n_fft, hop, win, window, align_to_window))
    onesided = not frames.dtype.is_complex if onesided is None else onesided
    norm = "by_root_n" if normalized else "none"
    if frames.dtype.is_complex:
        if onesided:
            raise RuntimeError("stft: Cannot have onesided output if window or input is complex")
        out = c2c(frames, (2,), norm, True)
    else:
        out = r2c(frames, (2,), norm, onesided)
    out = movement.transpose(out, 1, 2)
    out = out if input.ndim == 2 else out[0]
    return out if return_complex else view_as_real(out)


def _overlap_add(frames, hop: int, length: int) -> Tensor:
    """The sum of ``frames`` ([C, F, n]) laid ``hop`` apart: ``[C, length]`` (PyTorch's ``unfold_backward``)."""
    c, count, n = frames.shape
    starts = creation.arange(0, count * hop, hop, device=frames.device)
    index = (movement.unsqueeze(starts, 1) + creation.arange(n, device=frames.device)).reshape(-1)
    zeros = creation.zeros(c, length, dtype=frames.dtype, device=frames.device)
    return indexing.index_add(zeros, 1, index, frames.reshape(c, count * n))


def _istft_checks(input, n_fft, hop, win, window, onesided) -> None:
    what = (f"istft(input of shape {tuple(input.shape)} and dtype {input.dtype.name}, n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win})")
    if not input.dtype.is_complex:
        raise RuntimeError(f"{what}: istft requires a complex-valued input tensor matching the output from stft "
                           f"with return_complex=True.")
    if input.numel() == 0:
        raise RuntimeError(f"{what}: input tensor cannot be empty.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{what}: expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}")
    bins, want = input.shape[-2], n_fft // 2 + 1 if onesided else n_fft
    if bins != want:
        raise RuntimeError(f"{what}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"{'n_fft / 2 + 1 when onesided=True' if onesided else 'n_fft when onesided=False'}, "
                           f"but got {bins}")
    if not 0 < hop <= win:
        raise RuntimeError(f"{what}: expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{what}: expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(f"{what}: Invalid window shape. window has to be 1D and length of `win_length`")


def _inverse_frames(x, n_fft, norm, onesided, return_complex, window) -> Tensor:
    """The frames of ``x`` ([C, bins, F] complex) transformed back: [C, F, n_fft]."""
    x = movement.transpose(x, 1, 2)
    if return_complex:
        if onesided:
            raise RuntimeError("istft: Cannot have onesided output if window or input is complex")
        return c2c(x, (2,), norm, False)
    if window is not None and window.dtype.is_complex:
        raise RuntimeError("istft: Complex windows are incompatible with return_complex=False")
    return c2r(x if onesided else movement.narrow(x, -1, 0, n_fft // 2 + 1), (2,), norm, n_fft)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False) -> Tensor:
    """The inverse of ``stft`` (complex input ``[B?, bins, frames]``): each frame transformed back, windowed
    and overlap-added, divided by the summed squared window, as ``torch.istft``; ``length`` trims or
    zero-pads the signal.

    >>> import webgrad as wg
    >>> s = wg.stft(wg.ones(8), 4, window=wg.hann_window(4), return_complex=True)
    >>> wg.istft(s, 4, window=wg.hann_window(4)).round().tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    check_tensor("istft", input)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    onesided = input.shape[-2] != n_fft if onesided is None and input.ndim >= 2 else bool(onesided)
    _istft_checks(input, n_fft, hop, win, window, onesided)
    x = input if input.ndim == 3 else input[None]
    count = x.shape[-1]
    signal = n_fft + hop * (count - 1)
    window = _centred(window, n_fft, win, input)
    frames = _inverse_frames(x, n_fft, "by_root_n" if normalized else "by_n", onesided, return_complex, window)
    y = _overlap_add(frames * window, hop, signal)
    envelope = _overlap_add(window.square()[None, None].expand(1, count, n_fft), hop, signal)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else signal
    y, envelope = y[:, start:end], envelope[:, start:end]
    if (envelope.abs().min() < 1e-11).item():
        raise RuntimeError(f"istft: window overlap add min: {envelope.abs().min().item()} (the window's squares "
                           f"summed over the frames must not be 0 anywhere in the signal)")
    y = y / envelope
    y = y if input.ndim == 3 else y[0]
    if end > signal:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.")
        y = movement.pad(y, (0, end - signal))
    return y


METHODS = {"stft": stft, "istft": istft}

__all__ = ["stft", "istft"]
