"""Extending webgrad: overriding kernels and gradients (scoped or not), the backend
interface, and starting a new backend from an existing one's kernels.

Everything here goes through the two registries of ``core/registry.py``; nothing
touches the engine. See ``docs/extending.md`` for the guide.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Protocol, runtime_checkable

from . import registry
from .dtypes import DType

# ---------------------------------------------------------------- scoped overrides


class _Override:
    """Something registered in place of what was there, with ``restore()`` putting the old
    entry back (or removing the new one when there was none). Also a context manager that
    restores on exit, even when the block raises."""

    def __init__(self, previous):
        self.previous, self.restored = previous, False

    def restore(self) -> None:
        """Put back what was registered before; calling it again does nothing."""
        if not self.restored:
            self._put_back(self.previous)
            self.restored = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        self.restore()
        return False

    def _put_back(self, previous) -> None:
        raise NotImplementedError


class override_gradient(_Override):
    """Replace the gradient rule of kernel ``name`` with ``fn(dy, saved, attrs)`` (the
    arguments of ``register_gradient``). Use it as a context manager (the previous rule
    comes back on exit, even after an exception) or as a plain call whose handle has
    ``restore()``. The rule is read when a kernel runs, so the override applies to graphs
    recorded while it is active.

    >>> import webgrad as wg
    >>> guided = lambda dy, saved, attrs: (wg.where(saved[0] > 0, dy.clamp(min=0), 0.0),)
    >>> x = wg.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    >>> with wg.override_gradient("Relu", guided, outputs_to_save=[0]):
    ...     x.relu().backward(wg.tensor([1.0, -1.0, 1.0]))
    >>> x.grad.tolist()
    [0.0, 0.0, 1.0]
    """

    def __init__(self, name: str, fn: Callable, *, inputs_to_save=(), outputs_to_save=(), output_values=(),
                 non_differentiable=()):
        self.name = name
        super().__init__(registry.get_gradient(name))
        registry.register_gradient(name, fn, inputs_to_save=inputs_to_save, outputs_to_save=outputs_to_save,
                                   output_values=output_values, non_differentiable=non_differentiable)

    def _put_back(self, previous) -> None:
        if previous is None:
            registry._gradients.pop(self.name, None)
        else:
            registry._gradients[self.name] = previous


class override_kernel(_Override):
    """Replace the kernel (``name``, ``backend``) with ``fn`` -- e.g. a faster one for one
    backend -- without the replacement warning; ``restore()`` or leaving the ``with`` block
    puts the previous kernel back (or removes ``fn`` when there was none).

    >>> import webgrad as wg
    >>> with wg.override_kernel("Neg", "cpu", lambda x: x * 0):
    ...     (-wg.tensor([1.0])).tolist()
    [0.0]
    >>> (-wg.tensor([1.0])).tolist()
    [-1.0]
    """

    def __init__(self, name: str, backend: str, fn: Callable):
        self.name, self.backend = name, backend
        super().__init__(registry.kernels_for_backend(backend).get(name))
        _register_quietly(name, backend, fn)

    def _put_back(self, previous) -> None:
        if previous is None:
            if self.name in registry.kernels_for_backend(self.backend):
                registry.unregister_kernel(self.name, self.backend)
        else:
            _register_quietly(self.name, self.backend, previous)


def _register_quietly(name: str, backend: str, fn: Callable) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        registry.register_kernel(name, backend, fn)


# ---------------------------------------------------------------- the backend interface


@runtime_checkable
class Backend(Protocol):
    """What webgrad calls on a backend object (the one its ``register_backend`` factory
    returns). "native" is the backend's own array type (numpy arrays on ``cpu``, GPU buffer
    handles on ``wgpu``); it must have a ``shape`` attribute (a tuple of ints), which
    ``Tensor.shape`` returns. Kernels registered for the backend's ``name`` receive and
    return natives. The binary elementwise kernels (``kernel_names.BINARY``) broadcast their
    inputs and raise ValueError for shapes that do not broadcast: ``add``, ``sub`` and ``mul``
    leave that check to them (an error then names the op and the shapes).

    Optional extras, looked up with ``getattr``:

    * ``async read_async(native)`` -> nested lists: ``await t.read()`` uses it (else ``to_list``);
    * ``in_use``: an int, the bytes held by live data, read by ``webgrad.profile()`` for its
      peak figure when present (``memory()`` may be too slow to call per kernel);
    * ``start_device_timing(report)`` / ``stop_device_timing()``: see ``core/profiler.py``;
    * ``constant_cache``: True when natives are never mutated, so ops may reuse small constants;
    * ``donate(native)`` -> a context in which the next arithmetic kernel may write into ``native``,
      which its caller declares dead after it (or None: not worth it for this one);
    * ``gradient_scope()`` -> a context a backward pass runs its backward kernels in, and a compiled
      plan's replay runs in (cpu: numpy's
      floating-point warnings off);

    >>> import webgrad as wg
    >>> isinstance(wg.backend("cpu"), wg.Backend)
    True
    """

    name: str

    def dtype_of(self, native: Any) -> DType:
        """The webgrad dtype of ``native``."""
        ...

    def upload(self, flat: Any, shape: tuple, dtype: DType) -> Any:
        """A native array of ``shape``/``dtype`` from a flat sequence of Python numbers
        (or a memoryview) in row-major order."""
        ...

    dtypes: frozenset   # optional: the dtypes this backend holds (code may ask before uploading)

    def from_array(self, obj: Any, dtype: Optional[DType] = None) -> Any:
        """A native array copied from a numpy array (or array-like); ``dtype`` None means
        the array's own dtype mapped to webgrad's (float64 stays float64, narrower ints become int64)."""
        ...

    def read(self, native: Any) -> tuple:
        """``(flat values, shape, dtype)`` on the host: the inverse of ``upload``."""
        ...

    def to_list(self, native: Any) -> Any:
        """Nested Python lists (a Python scalar for 0-d), as ``Tensor.tolist()`` returns."""
        ...

    def to_numpy(self, native: Any) -> Any:
        """A numpy array with the data (``Tensor.numpy()``)."""
        ...

    def nbytes(self, native: Any) -> int:
        """Bytes the data occupies."""
        ...

    def memory(self) -> dict:
        """At least ``{"tensors": live tensor count, "bytes": bytes they hold}`` (``webgrad.memory()``)."""
        ...


# ---------------------------------------------------------------- new backends from old ones


def derive_backend(new_name: str, base_name: str,
                   wrap: Optional[Callable[[str, Callable], Callable]] = None) -> dict:
    """Register every kernel of backend ``base_name`` under ``new_name`` as well (each
    passed through ``wrap(kernel_name, fn)`` when given), and return {kernel: fn} as
    registered. It copies what is registered now; the new backend object (registered
    with ``register_backend``) must accept the base's native arrays. A wrapper is taken to pass
    its arguments on to ``fn``: it gets ``fn`` as its ``__wrapped__`` where it names none, so a
    backward kernel's signature (what the engine passes it, ``register_gradient``) reads through it.

    >>> import webgrad as wg
    >>> ks = wg.derive_backend("cpu_copy", "cpu")
    >>> wg.get_kernel("Add", "cpu_copy") is wg.get_kernel("Add", "cpu")
    True
    >>> wg.remove_backend("cpu_copy") == len(ks)
    True
    """
    if new_name == base_name:
        raise ValueError(f"derive_backend: the new backend needs a name of its own, got {new_name!r} twice")
    base = registry.kernels_for_backend(base_name)
    if not base:
        raise ValueError(f"derive_backend: backend {base_name!r} has no kernels registered")
    made = {name: (fn if wrap is None else _wrapping(wrap(name, fn), fn)) for name, fn in base.items()}
    for name, fn in made.items():
        registry.register_kernel(name, new_name, fn)
    return made


def _wrapping(wrapper: Callable, fn: Callable) -> Callable:
    """``wrapper``, with ``fn`` as its ``__wrapped__`` where it has none (and takes attributes)."""
    if wrapper is not fn and not hasattr(wrapper, "__wrapped__"):
        try:
            wrapper.__wrapped__ = fn
        except AttributeError:
            pass
    return wrapper


def remove_backend(name: str) -> int:
    """Unregister backend ``name`` and every kernel registered for it; return how many
    kernels went. The undo of ``register_backend`` plus ``derive_backend``.

    >>> import webgrad as wg
    >>> wg.remove_backend("never_registered")
    0
    """
    registry.unregister_backend(name)
    kernels = registry.kernels_for_backend(name)
    for kernel in kernels:
        registry.unregister_kernel(kernel, name)
    return len(kernels)


__all__ = ["override_gradient", "override_kernel", "Backend", "derive_backend", "remove_backend"]
