"""``webgrad.amp``: PyTorch's automatic mixed precision -- ``autocast`` and ``GradScaler``.

``autocast(device_type, dtype=None, enabled=True)`` runs the ops PyTorch runs in lower precision
(matrix products, and with them linear layers, convolutions and attention) in ``dtype`` on that
backend, and the losses in float32, as PyTorch's CPU autocast does. Where the backend cannot hold
the dtype (bfloat16 on the GPU backends, float16 on one whose device lacks WebGPU's shader-f16) or
the device does not exist here (``cuda``), it warns and stays off, as PyTorch does for a device
without CUDA. ``GradScaler`` scales the loss,
unscales the gradients, skips steps whose gradients are not finite and adapts the scale, as PyTorch's;
made for ``cuda``, it warns that CUDA is not available and turns itself off, as PyTorch's does.

>>> import webgrad as wg
>>> with wg.autocast("cpu", dtype=wg.bfloat16):
...     y = wg.ones(2, 3) @ wg.ones(3, 2)
>>> y.dtype
webgrad.bfloat16
"""
from __future__ import annotations

import functools
import math
import threading
import warnings

from . import registry
from .dtypes import bfloat16, float16, float32, to_dtype
from .engine import no_grad
from .tensor import Tensor


class _AutocastState(threading.local):
    dtypes: dict = {}   # backend name -> the dtype autocast runs lower-precision ops in there


state = _AutocastState()


def lower_precision(*tensors) -> tuple:
    """``tensors`` as an op on autocast's lower-precision list takes them: floating ones cast to the
    autocast dtype of their backend when autocast is on there (else unchanged)."""
    return _cast(tensors, None)


def lower_precision_op(fn):
    """Decorate an op on PyTorch's autocast lower-precision list (linear, the convolutions, addmm, ...):
    under autocast on its tensors' backend, its floating tensor arguments are cast to the autocast dtype
    first, so its result is in that dtype, as PyTorch's.

    >>> import webgrad as wg
    >>> with wg.autocast("cpu", dtype=wg.bfloat16):
    ...     y = wg.nn.functional.linear(wg.ones(2, 3), wg.ones(4, 3), wg.zeros(4))
    >>> y.dtype
    webgrad.bfloat16
    """
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if state.dtypes:
            tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
            cast = dict(zip(map(id, tensors), lower_precision(*tensors)))
            args = [cast.get(id(a), a) for a in args]
            kwargs = {k: cast.get(id(v), v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    return op


def full_precision(*tensors) -> tuple:
    """``tensors`` as an op on autocast's float32 list (the losses) takes them: floating ones in float32."""
    return _cast(tensors, float32)


def _cast(tensors, target):
    active = state.dtypes
    if not active:
        return tensors
    first = next((t for t in tensors if t is not None), None)
    dt = active.get(first._backend.name) if first is not None else None
    if dt is None:
        return tensors
    dt = target or dt
    return tuple(t.to(dt) if t is not None and t.dtype.is_floating and t.dtype is not dt else t for t in tensors)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` names a backend that starts here."""
    return device_type in registry._backend_entries and device_type in registry.backends()


class autocast:
    """Run matrix products in ``dtype`` (default: bfloat16 on ``cpu``, float16 elsewhere) and losses in
    float32 on ``device_type``'s backend, inside the block or the decorated function.

    >>> import webgrad as wg
    >>> with wg.amp.autocast("cuda"):   # no CUDA here: it warns and stays off, as PyTorch's does
    ...     pass  # doctest: +SKIP
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected `device_type` of type `str`, got: `{type(device_type).__name__}`")
        self.device_type = device_type
        self.fast_dtype = to_dtype(dtype) if dtype is not None else (bfloat16 if device_type == "cpu" else float16)
        self._enabled = bool(enabled) and self._usable()

    def _usable(self) -> bool:
        if self.device_type not in registry._backend_entries:
            if self.device_type not in registry.FOREIGN_DEVICES:
                raise RuntimeError(f"autocast: unknown device_type {self.device_type!r}; webgrad has "
                                   f"{', '.join(registry._backend_entries)}")
            warnings.warn(f"User provided device_type of '{self.device_type}', but {self.device_type} is not "
                          f"available here (webgrad's GPU is 'wgpu'/'webgpu'). Disabling")
            return False
        if self.fast_dtype not in (float16, bfloat16) or self.fast_dtype not in registry.backend(self.device_type).dtypes:
            warnings.warn(f"In {self.device_type} autocast, but the target dtype {self.fast_dtype.name} is not "
                          f"supported. Disabling autocast.")
            return False
        return True

    def __enter__(self):
        self.prev = state.dtypes
        if self._enabled:
            state.dtypes = {**self.prev, self.device_type: self.fast_dtype}
        else:
            state.dtypes = {k: v for k, v in self.prev.items() if k != self.device_type}
        return self

    def __exit__(self, *exc):
        state.dtypes = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type: str = "cpu") -> bool:
    return device_type in state.dtypes


def get_autocast_dtype(device_type: str):
    return state.dtypes.get(device_type, bfloat16 if device_type == "cpu" else float16)


def custom_fwd(fwd=None, *, device_type: str = "cpu", cast_inputs=None):
    """PyTorch's decorator for a ``Function.forward`` under autocast (casts the floating inputs to
    ``cast_inputs`` and runs autocast-free when given); accepted here."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if cast_inputs is None:
        return fwd

    @functools.wraps(fwd)
    def wrapper(*args, **kwargs):
        with autocast(device_type, enabled=False):
            cast = [a.to(cast_inputs) if hasattr(a, "dtype") and a.dtype.is_floating else a for a in args]
            return fwd(*cast, **kwargs)
    return wrapper


def custom_bwd(bwd=None, *, device_type: str = "cpu"):
    """PyTorch's decorator for a ``Function.backward`` under autocast; accepted here."""
    return functools.partial(custom_bwd, device_type=device_type) if bwd is None else bwd


# ---------------------------------------------------------------- gradient scaling

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """Loss scaling for mixed-precision training, as ``torch.amp.GradScaler``: ``scale(loss).backward()``,
    ``step(optimizer)`` (unscales the gradients and skips the step when any is inf or NaN), ``update()``
    (halves the scale after a skipped step, doubles it after ``growth_interval`` good ones).

    >>> import webgrad as wg
    >>> scaler = wg.amp.GradScaler("cpu")
    >>> scaler.get_scale()
    65536.0
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = str(device)
        if enabled and self._device.partition(":")[0] not in registry._backend_entries:
            warnings.warn(f"GradScaler({self._device!r}) is enabled, but {self._device} is not available "
                          f"(webgrad's GPU is 'wgpu'/'webgpu').  Disabling.")
            enabled = False
        if growth_factor <= 1.0:
            raise ValueError("GradScaler: the growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("GradScaler: the backoff factor must be < 1.0.")
        self._enabled = bool(enabled)
        self._scale, self._init_scale = None, float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._per_optimizer: dict = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = self._init_scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale (in place) and note whether any is inf or NaN."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise RuntimeError("GradScaler: scale() must run before unscale_()/step() (the scale is not set yet).")
        inv = 1.0 / self._scale
        peak = None                               # the largest |gradient|: inf or NaN when any is
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(inv)
                        g = p.grad.abs().amax().float()
                        peak = g if peak is None else peak.maximum(g.to(peak.device))
        st["found_inf"] = peak is not None and not math.isfinite(peak.item())   # one readback
        st["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` with unscaled gradients, or nothing when they are not finite."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        st = self._state(optimizer)
        if st["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] is _READY:
            self.unscale_(optimizer)
        out = None if st["found_inf"] else optimizer.step(*args, **kwargs)
        st["stage"] = _STEPPED
        return out

    def update(self, new_scale=None) -> None:
        """Adapt the scale to the steps since the last update (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        elif any(st["found_inf"] for st in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer = {}

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return (self._scale or self._init_scale) if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict:
        """The scale and its tracker (empty when disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor, self._backoff_factor = state_dict["growth_factor"], state_dict["backoff_factor"]
        self._growth_interval, self._growth_tracker = state_dict["growth_interval"], state_dict["_growth_tracker"]


__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
