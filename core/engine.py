"""The engine: ``run_kernel``, grad mode, and the graph nodes that backward walks.

``run_kernel`` is the only road from an op to computation: it finds the kernel for
(name, backend of the inputs), runs it on native data, wraps the outputs as Tensors,
and, when grad mode is on and an input requires grad, records a ``Node`` holding
the kernel name, its attrs, the edges to the inputs' nodes, and the saved tensors
that the kernel's gradient rule asked for.
"""
from __future__ import annotations

import threading
from weakref import ref as _weakref

_new = object.__new__

from . import registry
from .registry import GradientRule, _gradients, _kernels

Tensor = _wrap = None  # the Tensor class and its _wrap, bound here by tensor.py (which imports this module)

# ---------------------------------------------------------------- grad mode (thread-local)


class _GradMode(threading.local):
    enabled = True


_mode = _GradMode()


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for autograd in this thread.

    >>> import webgrad as wg
    >>> with wg.no_grad():
    ...     wg.is_grad_enabled()
    False
    """
    return _mode.enabled


class set_grad_enabled:
    """Turn recording on or off, as a call or a context manager (thread-local).

    >>> import webgrad as wg
    >>> with wg.set_grad_enabled(False):
    ...     y = wg.ones(2, requires_grad=True) * 2
    >>> y.requires_grad
    False
    """

    def __init__(self, mode: bool):
        self.prev = _mode.enabled
        _mode.enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _mode.enabled = self.prev
        return False


class _GradModeContext:
    mode = True

    def __new__(cls, fn=None):
        """``no_grad()`` makes a context manager; ``@no_grad`` (bare, as in PyTorch) decorates ``fn``."""
        self = super().__new__(cls)
        return self if fn is None else self(fn)

    def __enter__(self):
        self.prev = _mode.enabled
        _mode.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _mode.enabled = self.prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Context manager (or decorator) in which no graph is recorded.

    >>> import webgrad as wg
    >>> x = wg.ones(2, requires_grad=True)
    >>> with wg.no_grad():
    ...     (x * 2).requires_grad
    False
    """
    mode = False


class enable_grad(_GradModeContext):
    """Context manager (or decorator) that turns recording back on inside ``no_grad``.

    >>> import webgrad as wg
    >>> with wg.no_grad():
    ...     with wg.enable_grad():
    ...         (wg.ones(1, requires_grad=True) * 2).requires_grad
    True
    """
    mode = True


# ---------------------------------------------------------------- saved tensors and nodes


class SavedTensor:
    """What a node keeps of a tensor for backward: its data and graph position at save time,
    plus the version it had, so that a later in-place change is detected."""

    __slots__ = ("data", "backend", "grad_fn", "out_index", "requires_grad", "leaf", "ref", "version", "is_output")

    def __init__(self, t, is_output: bool):
        self.data, self.backend = t._data, t._backend
        self.requires_grad, self.out_index, self.version = t.requires_grad, t._out_index, t._version
        self.is_output = is_output
        # an output's grad_fn is the node that saves it: not stored, to avoid a cycle
        fn = self.grad_fn = None if is_output else t.grad_fn
        self.leaf = t if (fn is None and not is_output and t.requires_grad) else None
        self.ref = _weakref(t)

    def unpack(self, node):
        t = self.ref()
        if t is not None:
            if t._version != self.version:
                by = f" by {t._modified_by}" if t._modified_by else ""
                raise RuntimeError(
                    f"one of the tensors needed for gradient computation has been modified by an in-place "
                    f"operation{by}: {t.dtype.name} {tuple(t.shape)}, saved by kernel '{node.name}' "
                    f"({node.name}Backward), is at version {t._version}; expected version {self.version}. "
                    f"Use an out-of-place op (e.g. x = x + 1 instead of x.add_(1)) or .clone() it first.")
            # unchanged since saved (same version, same graph position): hand back the tensor itself
            if (t.grad_fn is (node if self.is_output else self.grad_fn) and t.requires_grad is self.requires_grad
                    and t._out_index == self.out_index):
                return t
        if self.leaf is not None:
            return self.leaf
        out = Tensor._wrap(self.data, self.backend)
        if self.requires_grad:
            out.requires_grad = True
            out.grad_fn = node if self.is_output else self.grad_fn
            out._out_index = self.out_index
        return out


class Saved(tuple):
    """The tensors a gradient rule asked to keep (inputs then outputs), with every input's
    ``shapes`` and ``dtypes`` alongside, and ``needs_input_grad`` (as PyTorch's ctx): a rule may
    skip computing gradients for inputs that need none (e.g. a matmul's data input)."""
    shapes: tuple = ()
    dtypes: tuple = ()
    edges: tuple = ()

    @property
    def needs_input_grad(self) -> tuple:
        return tuple([e is not None for e in self.edges])


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after "
          "they have already been freed). Saved intermediate values of the graph are freed when you call "
          ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
          "graph a second time or if you need to access saved tensors after calling backward. "
          "(kernel '{}')")


class Node:
    """One recorded kernel call: the backward step from its outputs' gradients to its inputs'.

    ``next`` holds, per input, None (no gradient needed), ``(node, output_index)`` for a
    computed input, or ``(tensor, -1)`` for a leaf that accumulates into ``.grad``.
    """

    __slots__ = ("name", "rule", "attrs", "next", "saved", "shapes", "dtypes", "outs", "hooks", "retained",
                 "__weakref__")

    def __init__(self, name, rule, attrs, inputs, outputs):
        self.name, self.rule, self.attrs = name, rule, attrs
        nxt, shapes, dtypes = [], [], []
        for t in inputs:
            nxt.append(None if not t.requires_grad else (t, -1) if t.grad_fn is None else (t.grad_fn, t._out_index))
            shapes.append(t._data.shape)
            dtypes.append(t._dtype)
        self.next, self.shapes, self.dtypes = tuple(nxt), tuple(shapes), tuple(dtypes)
        if len(outputs) == 1:
            o = outputs[0]
            self.outs = ((o._data.shape, o._dtype, o._backend),)
        else:
            self.outs = tuple([(o._data.shape, o._dtype, o._backend) for o in outputs])
        self.hooks = self.retained = None   # {output_index: [fn]}, {output_index: weakref(tensor)}
        self.saved = ()
        if rule is not None:
            ins, outs = rule.inputs_to_save, rule.outputs_to_save
            if ins or outs:
                ins = range(len(inputs)) if ins is True else ins
                outs = range(len(outputs)) if outs is True else outs
                self.saved = tuple([SavedTensor(inputs[i], False) for i in ins] +
                                   [SavedTensor(outputs[i], True) for i in outs])

    def __repr__(self):
        return f"<{self.name}Backward>"

    def unpack_saved(self) -> Saved:
        if self.saved is None:
            raise RuntimeError(_FREED.format(self.name))
        s = Saved([x.unpack(self) for x in self.saved])
        s.shapes, s.dtypes, s.edges = self.shapes, self.dtypes, self.next
        return s

    @property
    def next_functions(self):
        """(node or leaf, index) per input, as PyTorch's ``grad_fn.next_functions``."""
        return self.next


# ---------------------------------------------------------------- run_kernel


def _mixed_backends(name, inputs):
    got = ", ".join(f"{t._backend.name} {tuple(t.shape)}" for t in inputs)
    first = inputs[0]._backend.name
    return RuntimeError(f"{name}: inputs live on different backends ({got}); move them to one backend "
                        f"first, e.g. t.to({first!r})")


def run_kernel(name: str, *inputs, backend=None, **attrs):
    """Run kernel ``name`` on the backend of ``inputs`` (or ``backend`` when there are none)
    and return its output Tensor (a tuple for multi-output kernels), recording it for
    autograd when grad mode is on and an input requires grad.

    >>> import webgrad as wg
    >>> wg.run_kernel("Add", wg.tensor([1.0]), wg.tensor([2.0])).tolist()
    [3.0]
    """
    n = len(inputs)
    if n:
        be = inputs[0]._backend
    else:
        be = registry.get_backend() if backend is None else (
            registry.backend(backend) if isinstance(backend, str) else backend)
    fn = _kernels.get((name, be.name))
    if fn is None:
        raise NotImplementedError(registry.missing_kernel_message(name, be.name))
    if n == 2:          # one and two inputs (nearly every call) take the straight roads
        a, b = inputs
        if b._backend is not be:
            raise _mixed_backends(name, inputs)
        out = fn(a._data, b._data, **attrs) if attrs else fn(a._data, b._data)
        grad = a.requires_grad or b.requires_grad
    elif n == 1:
        a = inputs[0]
        out = fn(a._data, **attrs) if attrs else fn(a._data)
        grad = a.requires_grad
    else:
        for t in inputs:
            if t._backend is not be:
                raise _mixed_backends(name, inputs)
        out = fn(*[t._data for t in inputs], **attrs)
        grad = any(t.requires_grad for t in inputs)
    if type(out) is not tuple:
        result = _new(Tensor)   # Tensor._wrap, inlined (keep the two in step)
        result._data, result._backend, result._dtype = out, be, be.dtype_of(out)
        result.requires_grad, result.grad, result.grad_fn, result._out_index, result._version = \
            False, None, None, 0, 0
        result._hooks = result._modified_by = None
        if grad and _mode.enabled and result._dtype.is_floating:
            result.requires_grad = True
            result.grad_fn = Node(name, _gradients.get(name), attrs, inputs, (result,))
        return result
    outs = tuple([_wrap(o, be) for o in out])
    if grad and _mode.enabled:
        _record(name, _gradients.get(name), attrs, inputs, outs)
    return outs


def _record(name, rule, attrs, inputs, outs):
    """Record a multi-output kernel call: one node, the grad_fn of its floating outputs."""
    floating = [(i, o) for i, o in enumerate(outs) if o._dtype.is_floating]
    if not floating:
        return None
    for i, o in floating:
        o.requires_grad, o._out_index = True, i
    node = Node(name, rule, attrs, inputs, outs)
    for _, o in floating:
        o.grad_fn = node
    return node


def record_function(name, fn, inputs, outputs, saved=(), attrs=None):
    """Record ``outputs`` as computed from ``inputs`` by one node whose backward is
    ``fn(dy, saved, attrs)``: the mechanism behind ``custom_grad`` and ``Function``."""
    if not (_mode.enabled and any(t.requires_grad for t in inputs)):
        return None
    floating = [(i, o) for i, o in enumerate(outputs) if o._dtype.is_floating]
    for i, o in floating:
        o.requires_grad, o._out_index = True, i
    node = Node(name, GradientRule(fn, (), ()), attrs or {}, inputs, outputs)
    node.saved = tuple(SavedTensor(t, any(t is o for o in outputs)) for t in saved)
    for _, o in floating:
        o.grad_fn = node
    return node
