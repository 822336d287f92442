"""The switches PyTorch scripts set that mean nothing here, accepted without effect.

``torch.backends.cuda.matmul.allow_tf32 = True``, ``torch.backends.cudnn.benchmark = True``,
``torch.set_float32_matmul_precision("high")``, ``torch.set_num_threads(4)``: webgrad has no CUDA,
cuDNN or TF32 and computes every float32 product in float32, so these settings cannot change its
numbers; they are kept (and read back) so scripts run unchanged. ``webgrad.backends`` stays the
package of webgrad's own backends; its ``cuda``, ``cudnn``, ``mps``, ``mkldnn``, ``mkl``, ``openmp``
and ``opt_einsum`` members (also importable, as ``import webgrad.backends.cudnn as cudnn``) are these.

>>> import webgrad as wg
>>> wg.backends.cudnn.benchmark = True
>>> wg.backends.cuda.matmul.allow_tf32 = True; wg.backends.cuda.matmul.allow_tf32   # kept, read back
True
"""
from __future__ import annotations

import contextlib
import sys
import types
import warnings


def _false() -> bool:
    return False


def _true() -> bool:
    return True


def _none() -> None:
    return None


def _ignore(enabled: bool) -> None:
    """``enable_*_sdp(enabled)``: accepted without effect."""


def _linalg_library(backend=None) -> None:
    return None


@contextlib.contextmanager
def _sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    yield


@contextlib.contextmanager
def _cudnn_flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
                 fp32_precision="none", depthwise_kernel="auto"):
    yield


@contextlib.contextmanager
def _mkldnn_flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    yield


def _module(name: str, doc: str, **members) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__dict__.update(members)
    return m


_NOTHING = "Accepted without effect: webgrad has no {}."
FLAG_MODULES = {
    "cuda": _module("cuda", _NOTHING.format("CUDA"), is_built=_false,
                    matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                                 allow_bf16_reduced_precision_reduction=True),
                    enable_flash_sdp=_ignore, flash_sdp_enabled=_false,
                    enable_mem_efficient_sdp=_ignore, mem_efficient_sdp_enabled=_false,
                    enable_math_sdp=_ignore, math_sdp_enabled=_true,
                    enable_cudnn_sdp=_ignore, cudnn_sdp_enabled=_false, sdp_kernel=_sdp_kernel,
                    preferred_linalg_library=_linalg_library),
    "cudnn": _module("cudnn", _NOTHING.format("cuDNN"), enabled=True, benchmark=False, deterministic=False,
                     allow_tf32=True, benchmark_limit=10, is_available=_false, version=_none, flags=_cudnn_flags),
    "mps": _module("mps", _NOTHING.format("MPS backend (its GPU is 'wgpu')"), is_available=_false, is_built=_false),
    "mkldnn": _module("mkldnn", _NOTHING.format("oneDNN"), enabled=True, is_available=_false, flags=_mkldnn_flags),
    "mkl": _module("mkl", _NOTHING.format("MKL"), is_available=_false),
    "openmp": _module("openmp", _NOTHING.format("OpenMP"), is_available=_false),
    "opt_einsum": _module("opt_einsum", _NOTHING.format("opt_einsum"), enabled=True, strategy="auto",
                          is_available=_false),
}


def install(package: types.ModuleType) -> None:
    """Make the flag modules members of ``package`` (``webgrad.backends``) and importable under it."""
    for name, module in FLAG_MODULES.items():
        module.__name__ = f"{package.__name__}.{name}"
        sys.modules[module.__name__] = module
        setattr(package, name, module)


_settings = {"float32_matmul_precision": "highest", "num_threads": 1, "num_interop_threads": 1,
             "deterministic": False}
_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted (float32 products here are always float32's): one of 'highest', 'high', 'medium'."""
    if precision not in _PRECISIONS:   # PyTorch warns and keeps the setting
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"set_float32_matmul_precision call has no effect.")
        return
    _settings["float32_matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _settings["float32_matmul_precision"]


def set_num_threads(num: int, /) -> None:
    """Accepted and remembered (the cpu backend's threads are numpy's BLAS's)."""
    if int(num) < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {num}")
    _settings["num_threads"] = int(num)


def get_num_threads() -> int:
    return _settings["num_threads"]


def set_num_interop_threads(num: int, /) -> None:
    _settings["num_interop_threads"] = int(num)


def get_num_interop_threads() -> int:
    return _settings["num_interop_threads"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted: every webgrad kernel is deterministic already (no atomics in reductions or scatters)."""
    _settings["deterministic"] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    return _settings["deterministic"]


__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled"]
