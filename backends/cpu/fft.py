"""cpu kernels of the discrete Fourier transforms: numpy's pocketfft (``numpy.fft``), which computes
complex64/float32 in single precision and complex128/float64 in double, as PyTorch's cpu FFT.

The kernels take PyTorch's normalization modes (``kernel_names``: "none", "by_root_n", "by_n");
numpy names the same scales by the direction that carries them."""
import numpy as np

from webgrad import kernel_names as K

from .registry import register_table

# (mode, the transform is in the forward e^{-i..} direction) -> numpy's norm=
_NUMPY_NORM = {("none", True): "backward", ("by_n", True): "forward", ("by_root_n", True): "ortho",
               ("none", False): "forward", ("by_n", False): "backward", ("by_root_n", False): "ortho"}
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _c2c(z, dims, norm, forward):
    if not dims:
        return np.array(z, copy=True)
    transform = np.fft.fftn if forward else np.fft.ifftn
    return transform(z, axes=dims, norm=_NUMPY_NORM[norm, forward]).astype(z.dtype, copy=False)


def _r2c(x, dims, norm, onesided):
    transform = np.fft.rfftn if onesided else np.fft.fftn
    return transform(x, axes=dims, norm=_NUMPY_NORM[norm, True]).astype(_COMPLEX_OF[x.dtype], copy=False)


def _c2r(z, dims, norm, last_dim_size):
    sizes = [z.shape[d] for d in dims[:-1]] + [last_dim_size]
    return np.fft.irfftn(z, s=sizes, axes=dims, norm=_NUMPY_NORM[norm, False]).astype(z.real.dtype, copy=False)


register_table({K.FFT_C2C: _c2c, K.FFT_R2C: _r2c, K.FFT_C2R: _c2r})
