"""The three registries that join ops, kernels, gradients and backends.

* kernels:   backend name -> {kernel name -> function of native arrays} (a table per backend)
* gradients: kernel name -> GradientRule (the backward function and what to save)
* backends:  backend name -> (factory, priority); instances are made on first use
"""
from __future__ import annotations

import os
import warnings
from typing import Callable, NamedTuple, Optional

# ---------------------------------------------------------------- kernels

_kernels: dict = {}          # backend -> {name -> fn}: run_kernel looks a kernel up by name in its backend's table
_NONE: dict = {}             # the table of a backend with no kernels (never written)


def register_kernel(name: str, backend: str, fn: Optional[Callable] = None):
    """Register ``fn`` as the implementation of kernel ``name`` on ``backend``.

    ``fn`` receives backend-native arrays positionally and the attrs as keywords,
    and returns a native array (or a tuple of them). Usable as a decorator::

        @webgrad.register_kernel("MyOp", "cpu")
        def my_op(x, *, alpha):
            return x * alpha

    Registering a (name, backend) pair twice replaces the first, with a warning.
    """
    if fn is None:
        return lambda f: register_kernel(name, backend, f)
    table = _kernels.setdefault(backend, {})
    if table.get(name, fn) is not fn:
        warnings.warn(f"kernel {name!r} on backend {backend!r} was already registered; replacing it",
                      stacklevel=2)
    table[name] = fn
    return fn


def unregister_kernel(name: str, backend: str) -> Callable:
    """Remove and return the kernel registered for (``name``, ``backend``).

    >>> fn = unregister_kernel("MyOp", "cpu")  # doctest: +SKIP
    """
    try:
        return _kernels.get(backend, _NONE).pop(name)
    except KeyError:
        raise KeyError(f"no kernel {name!r} is registered for backend {backend!r}") from None


def get_kernel(name: str, backend: str) -> Callable:
    """The function registered for (``name``, ``backend``); the error names the backends that have it.

    >>> get_kernel("Add", "cpu")  # doctest: +SKIP
    """
    fn = _kernels.get(backend, _NONE).get(name)
    if fn is None:
        raise NotImplementedError(missing_kernel_message(name, backend))
    return fn


def missing_kernel_message(name: str, backend: str) -> str:
    have = sorted(b for b, table in _kernels.items() if name in table)
    where = f"it is registered for: {', '.join(have)}" if have else "no backend registers it"
    return f"kernel {name!r} is not registered for backend {backend!r}; {where}"


def kernels_for_backend(backend: str) -> dict:
    """All kernels registered for ``backend``, as {name: fn}.

    >>> "Add" in kernels_for_backend("cpu")  # doctest: +SKIP
    True
    """
    return dict(_kernels.get(backend, _NONE))


# ---------------------------------------------------------------- gradients

class GradientRule(NamedTuple):
    """A kernel's backward rule: ``fn(dy, saved, attrs) -> one gradient (or None) per input``,
    and what the forward keeps for it. ``saves`` sorts that for the engine, which records one
    node per kernel call: "nothing", "inputs" (the first ones, or all), "output" (output 0
    alone) or "some" (any other choice). ``output_values`` are outputs kept by value, after the
    others: for a rule that reads an output only as a copy of what its inputs determine, so that a
    later in-place change of that output (which the rule does not depend on) goes unchecked.
    ``non_differentiable`` outputs (PyTorch's ``output_differentiability``) never require grad, and no
    gradient is made up for them: e.g. LayerNorm's mean and rstd, kept for its backward.
    ``kernel``: the name of a backward kernel computing the same gradients over native arrays,
    which a backward that records nothing runs instead of ``fn`` on a backend that registers it
    (see ``register_gradient``). ``saved_for``: per input, the places in ``saved`` its gradient reads
    (None: every input's reads all); the backward checks for in-place changes only the saved
    tensors that a wanted gradient reads, as PyTorch saves only those (``y * 2`` keeps ``2`` alone,
    so ``y`` may change in place afterwards)."""
    fn: Callable
    inputs_to_save: tuple
    outputs_to_save: tuple
    saves: str = "some"
    output_values: tuple = ()
    non_differentiable: tuple = ()
    kernel: Optional[str] = None
    saved_for: Optional[tuple] = None


_gradients: dict = {}


def _as_indices(spec) -> tuple:
    if spec is True:
        return True
    return tuple(int(i) for i in (spec or ()))


def gradient_rule(fn: Callable, inputs_to_save=(), outputs_to_save=(), output_values=(),
                  non_differentiable=(), kernel=None, saved_for=None) -> GradientRule:
    """The rule ``fn`` keeping the inputs and outputs named (index lists, or True for all), and the
    outputs ``output_values`` by value; the outputs ``non_differentiable`` get no gradient; ``kernel``
    names its backward kernel; ``saved_for`` says which saved tensors each input's gradient reads.

    >>> gradient_rule(print, inputs_to_save=[0, 1]).saves
    'inputs'
    """
    ins, outs, values = _as_indices(inputs_to_save), _as_indices(outputs_to_save), _as_indices(output_values)
    if values:
        saves = "some"
    elif not outs:
        saves = "nothing" if not ins else "inputs" if ins is True or ins == tuple(range(len(ins))) else "some"
    else:
        saves = "output" if not ins and outs == (0,) else "some"
    reads = None if saved_for is None else tuple(tuple(int(i) for i in r) for r in saved_for)
    return GradientRule(fn, ins, outs, saves, values, _as_indices(non_differentiable), kernel, reads)


def register_gradient(name: str, fn: Optional[Callable] = None, *, inputs_to_save=(), outputs_to_save=(),
                      output_values=(), non_differentiable=(), kernel: Optional[str] = None, saved_for=None):
    """Register the backward rule of kernel ``name``.

    ``fn(dy, saved, attrs)`` gets ``dy`` (a tuple for multi-output kernels), ``saved``
    (the tensors named by ``inputs_to_save`` then ``outputs_to_save``, given as index
    lists or ``True`` for all, the quickest to record, then ``output_values``: outputs kept as
    constants, unaffected by later in-place changes of the outputs; ``saved.shapes``/``saved.dtypes``
    hold every input's shape and dtype), and the kernel's attrs. It returns one Tensor or None per input,
    built from ops, so higher-order gradients work. Returned gradients whose shape is
    the broadcast of the input's are summed back to the input's shape by the engine. Outputs listed
    in ``non_differentiable`` never require grad (their ``dy`` entries are None).

    ``kernel`` names an optional backward kernel: where the node's backend registers one under
    that name, a backward that records nothing (``create_graph=False``) runs it instead of ``fn``,
    as an ordinary kernel (the profiler, ``override_kernel`` and the compiler see it). It gets
    the output gradient(s) then the saved tensors, as native arrays, and as keywords the kernel's
    attrs plus ``needs`` (per input, whether it wants a gradient), ``shapes`` and ``dtypes`` (per
    input); it returns one native array (or None) per input, as ``fn`` does. A rule registered
    later without ``kernel`` stops its use. ``saved_for`` (per input, the places in ``saved`` its
    gradient reads) lets a saved tensor change in place after the call when no wanted gradient reads
    it, as in PyTorch (``y * c`` for a constant ``c``: ``y`` is not read); by default all are checked.
    Usable as a decorator::

        @webgrad.register_gradient("MyOp", inputs_to_save=[0])
        def my_op_grad(dy, saved, attrs):
            return (dy * attrs["alpha"],)
    """
    if fn is None:
        return lambda f: register_gradient(name, f, inputs_to_save=inputs_to_save, outputs_to_save=outputs_to_save,
                                           output_values=output_values, non_differentiable=non_differentiable,
                                           kernel=kernel, saved_for=saved_for)
    _gradients[name] = gradient_rule(fn, inputs_to_save, outputs_to_save, output_values, non_differentiable, kernel,
                                     saved_for)
    return fn


def unregister_gradient(name: str) -> GradientRule:
    """Remove and return the gradient rule of kernel ``name``."""
    try:
        return _gradients.pop(name)
    except KeyError:
        raise KeyError(f"no gradient is registered for kernel {name!r}") from None


def get_gradient(name: str) -> Optional[GradientRule]:
    """The GradientRule registered for kernel ``name``, or None.

    >>> get_gradient("Exp").inputs_to_save  # doctest: +SKIP
    ()
    """
    return _gradients.get(name)


# ---------------------------------------------------------------- backends

class _BackendEntry(NamedTuple):
    factory: Callable
    priority: int


_backend_entries: dict = {}
_backend_instances: dict = {}
_backend_errors: dict = {}
_current: list = [None]      # the chosen default backend instance (None until first use)


def register_backend(name: str, factory: Callable, priority=0):
    """Make backend ``name`` available. ``factory()`` builds the backend object on first
    use (it may raise, e.g. when its runtime is missing; the backend is then skipped).
    The default backend is the highest-priority one whose factory succeeds. ``priority`` may be
    a function returning the int, called once when a default is first chosen (e.g. to ask
    whether a GPU adapter is real hardware without doing so at import time).

    >>> register_backend("counting", lambda: MyBackend(), priority=-1)  # doctest: +SKIP
    """
    _backend_entries[name] = _BackendEntry(factory, priority)
    _priorities.pop(name, None)
    _backend_instances.pop(name, None)
    _backend_errors.pop(name, None)
    _current[0] = None


def unregister_backend(name: str) -> None:
    """Forget backend ``name`` (its kernels stay registered)."""
    _backend_entries.pop(name, None)
    _backend_instances.pop(name, None)
    if _current[0] is not None and _current[0].name == name:
        _current[0] = None


# PyTorch's device types that webgrad has no backend for: nameable, refused where a tensor would go there
FOREIGN_DEVICES = ("cuda", "mps", "xpu", "hip", "meta", "xla", "mtia", "hpu", "ipu", "vulkan", "privateuseone")


def backend(name):
    """The backend object named ``name`` (a backend name, a device string such as ``"wgpu:0"``, or a
    ``webgrad.device``), built on first use; a clear error if it cannot start.

    >>> backend("cpu").name  # doctest: +SKIP
    'cpu'
    """
    be = _backend_instances.get(name)
    if be is not None:
        return be
    name = _backend_name(name)
    be = _backend_instances.get(name)
    if be is not None:
        return be
    entry = _backend_entries.get(name)
    if entry is None:
        if name in FOREIGN_DEVICES:
            raise RuntimeError(f"webgrad has no {name!r} backend (webgrad.cuda.is_available() is False): run on "
                               f"the GPU through 'wgpu' (natively) or 'webgpu' (in a page), e.g. "
                               f"device = webgrad.accelerator.current_accelerator() or 'cpu'")
        raise ValueError(f"unknown backend {name!r}; registered backends: {', '.join(sorted(_backend_entries))}")
    if name in _backend_errors:
        raise RuntimeError(f"backend {name!r} could not start: {_backend_errors[name]}")
    try:
        be = entry.factory()
    except Exception as e:  # the factory's failure is reported, and the backend skipped by default choice
        _backend_errors[name] = f"{type(e).__name__}: {e}"
        raise RuntimeError(f"backend {name!r} could not start: {_backend_errors[name]}") from e
    _backend_instances[name] = be
    return be


def _backend_name(where) -> str:
    """The backend name in a name, a ``"name:index"`` string or a device (anything with ``.type``)."""
    name = where if isinstance(where, str) else getattr(where, "type", None)
    if not isinstance(name, str):
        raise TypeError(f"expected a backend name or a device, got {type(where).__name__}")
    return name.partition(":")[0]


def resolve(where):
    """The backend object for ``where``: None (the default backend), a backend object, a backend name,
    a device string or a ``webgrad.device``: what every ``device=`` argument accepts."""
    if where is None:
        return get_backend()
    if isinstance(where, str) or hasattr(where, "type"):
        return backend(where)
    return where


_priorities: dict = {}


def backend_priority(name: str) -> int:
    """The priority backend ``name`` was registered with (resolving a callable once)."""
    if name not in _priorities:
        p = _backend_entries[name].priority
        _priorities[name] = int(p() if callable(p) else p)
    return _priorities[name]


def backends() -> list:
    """Names of the registered backends that start here, highest priority first.

    >>> backends()  # doctest: +SKIP
    ['cpu']
    """
    out = []
    for name in sorted(_backend_entries, key=lambda n: -backend_priority(n)):
        try:
            backend(name)
            out.append(name)
        except RuntimeError:
            pass
    return out


def get_backend():
    """The current default backend object (``WEBGRAD_BACKEND`` overrides the priority choice).

    >>> get_backend().name  # doctest: +SKIP
    'cpu'
    """
    be = _current[0]
    if be is None:
        forced = os.environ.get("WEBGRAD_BACKEND")
        if forced:
            be = backend(forced)
        else:
            be = _first_that_starts()
        _current[0] = be
    return be


def _first_that_starts():
    for name in sorted(_backend_entries, key=lambda n: -backend_priority(n)):
        try:
            return backend(name)
        except RuntimeError:
            continue
    raise RuntimeError("no webgrad backend could start: " + "; ".join(
        f"{n}: {e}" for n, e in _backend_errors.items()))


def set_backend(name: str) -> None:
    """Make ``name`` the default backend for new tensors.

    >>> set_backend("cpu")  # doctest: +SKIP
    """
    _current[0] = backend(name)
