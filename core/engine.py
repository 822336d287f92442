"""The engine: ``run_kernel``, grad mode, and the graph nodes that backward walks.

``run_kernel`` is the only road from an op to computation: it finds the kernel for
(name, backend of the inputs), runs it on native data, wraps the outputs as Tensors,
and, when grad mode is on and an input requires grad, records a ``Node`` holding
the kernel name, its attrs, the edges to the inputs' nodes, and the saved tensors
that the kernel's gradient rule asked for.
"""
from __future__ import annotations

import itertools
import threading
from weakref import ref as _weakref

from . import registry
from .registry import _NONE, _gradients, _kernels, gradient_rule
from .node_names import next_functions, node_name

Tensor = _wrap = None  # the Tensor class and Tensor._wrap, bound here by tensor.py (which imports this module)

# ---------------------------------------------------------------- grad mode (thread-local)


class _GradMode(threading.local):
    enabled = True
    inference = False


_mode = _GradMode()
open_inference_scopes = []   # the inference_mode scopes open now, in any thread: while there are none, no thread
#                              is in inference mode (Tensor._wrap tests this list before the thread-local flag)


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
        self = object.__new__(cls)   # (super() would cost a lookup per `with no_grad():`)
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


class inference_mode(_GradModeContext):
    """PyTorch's ``inference_mode(mode=True)``: as ``no_grad`` (nothing is recorded) when ``mode`` is
    True, no change when False; a context manager or a decorator (bare or called).

    >>> import webgrad as wg
    >>> with wg.inference_mode():
    ...     (wg.ones(1, requires_grad=True) * 2).requires_grad
    False
    """

    def __new__(cls, mode=True):
        if callable(mode):   # bare decorator: @inference_mode
            return cls(True)(mode)
        self = object.__new__(cls)
        self.mode = bool(mode)
        return self

    def __enter__(self):
        self.prev = _mode.enabled
        _mode.enabled = _mode.enabled and not self.mode
        self.prev_inference, _mode.inference = _mode.inference, _mode.inference or self.mode
        open_inference_scopes.append(self)   # (append and remove: one step each under the GIL)
        return self

    def __exit__(self, *exc):
        _mode.enabled, _mode.inference = self.prev, self.prev_inference
        open_inference_scopes.remove(self)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.mode):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled() -> bool:
    """Whether code runs inside ``inference_mode()``."""
    return _mode.inference


# ---------------------------------------------------------------- saved tensors and nodes


def _modified_error(t, node, version):
    by = f" by {t._modified_by}" if t._modified_by else ""
    return RuntimeError(
        f"one of the tensors needed for gradient computation has been modified by an in-place "
        f"operation{by}: {t.dtype.name} {tuple(t.shape)}, saved by kernel '{node.kernel}' "
        f"({node.name()}), is at version {t._version}; expected version {version}. "
        f"Use an out-of-place op (e.g. x = x + 1 instead of x.add_(1)) or .clone() it first.")


class SavedTensor:
    """What a node keeps of one of its own outputs for backward: the data and output index,
    and a weak reference (a strong one would make a cycle output -> node -> output) through
    which a later in-place change of the output is detected. An output kept by value (a rule's
    ``output_values``) has no reference: in-place ops rebind a tensor's data rather than write into
    it, so the data kept is the output as it was made, whatever happens to the tensor later.

    Tensors that are not the node's outputs are saved as themselves, with their version."""

    __slots__ = ("_data", "_backend", "out_index", "ref")   # _data and _backend named as a Tensor's

    def __init__(self, t, by_value=False):
        self._data, self._backend, self.out_index = t._data, t._backend, t._out_index
        self.ref = None if by_value else _weakref(t)

    def unpack(self, node, version, check=True):
        if self.ref is None:
            return Tensor._wrap(self._data, self._backend)
        t = self.ref()
        if t is not None:
            if t._version != version and check:
                raise _modified_error(t, node, version)
            if t.grad_fn is node:
                return t
        out = Tensor._wrap(self._data, self._backend)
        out.requires_grad, out.grad_fn, out._out_index = True, node, self.out_index
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


def _edge(t):
    """Where an input's gradient goes: None, (producer node, output index), or (leaf tensor, -1)."""
    return None if not t.requires_grad else (t, -1) if t.grad_fn is None else (t.grad_fn, t._out_index)


_next_order = itertools.count(0, -1).__next__   # Node.order (one C call: atomic under the GIL)
_last_change = [1]   # the order drawn by the latest in-place change of any tensor (above every node's: none yet)


def bump_version(t) -> None:
    """Count an in-place change of ``t``: its version, and, by drawing an order as a node would, the
    latest change of any tensor (a node made after it need not check its saved tensors' versions).

    >>> import webgrad as wg
    >>> t = wg.ones(2)
    >>> bump_version(t); t._version
    1
    """
    t._version += 1
    _last_change[0] = _next_order()


_ONE_OUTPUT = (None,)   # Node.outs of a one-output node: its output's shape and dtype are never needed


def _save(t, outputs):
    return SavedTensor(t) if any(t is o for o in outputs) else t


def _save_inputs(rule, inputs, outputs) -> tuple:
    """(saved, versions) for a rule keeping its first inputs (all of them, usually)."""
    ins = rule.inputs_to_save
    saved = inputs if ins is True or len(ins) == len(inputs) else inputs[:len(ins)]
    n = len(saved)
    return saved, ((saved[0]._version,) if n == 1 else (saved[0]._version, saved[1]._version) if n == 2 else
                   tuple([t._version for t in saved]))


def _save_output(rule, inputs, outputs) -> tuple:
    """(saved, versions) for a rule keeping output 0 alone (its version is 0: it was just made)."""
    return (SavedTensor(outputs[0]),), (0,)


def _save_some(rule, inputs, outputs) -> tuple:
    """(saved, versions): the inputs and outputs that ``rule`` asked to keep, and their versions."""
    ins, outs = rule.inputs_to_save, rule.outputs_to_save
    saved = tuple(inputs) if ins is True else tuple([inputs[i] for i in ins])
    versions = tuple([t._version for t in saved])
    if outs:
        outs = range(len(outputs)) if outs is True else outs
        saved += tuple([SavedTensor(outputs[i]) for i in outs])
        versions += (0,) * len(outs)
    if rule.output_values:
        saved += tuple([SavedTensor(outputs[i], by_value=True) for i in rule.output_values])
        versions += (0,) * len(rule.output_values)
    return saved, versions


_SAVE = {"inputs": _save_inputs, "output": _save_output, "some": _save_some}   # by rule.saves (but "nothing")


class Node:
    """One recorded kernel call: the backward step from its outputs' gradients to its inputs'.

    ``next`` holds, per input, None (no gradient needed), ``(node, output_index)`` for a
    computed input, or ``(tensor, -1)`` for a leaf that accumulates into ``.grad``.
    ``shapes`` and ``dtypes`` hold the inputs', ``outs`` the outputs' (shape, dtype) pairs
    (``(None,)`` for one output, whose gradient never has to be made up as zeros), and
    ``backend`` the outputs' backend.
    ``saved`` holds what the rule asked for (tensors; a ``SavedTensor`` for the node's own
    outputs) and ``versions`` their versions at save time. ``order`` falls with each node made
    (0, -1, -2, ...): a node's inputs were made before it, so running nodes lowest ``order``
    first runs every consumer of a node before the node itself (the backward pass's schedule).
    """

    __slots__ = ("kernel", "rule", "attrs", "next", "saved", "versions", "shapes", "dtypes", "outs", "backend",
                 "hooks", "retained", "order", "label", "__weakref__")

    def __init__(self, kernel, rule, attrs, inputs: tuple, outputs: tuple):
        self.kernel, self.rule, self.attrs, self.order = kernel, rule, attrs, _next_order()
        self.hooks = self.retained = self.label = None   # {output_index: [fn]}, {output_index: weakref(tensor)}
        n = len(inputs)
        if n == 2:   # (nearly every node has one or two inputs: _edge is written out for them)
            a, b = inputs
            self.next = (None if not a.requires_grad else (a, -1) if a.grad_fn is None else (a.grad_fn, a._out_index),
                         None if not b.requires_grad else (b, -1) if b.grad_fn is None else (b.grad_fn, b._out_index))
            self.shapes, self.dtypes = (a._data.shape, b._data.shape), (a._dtype, b._dtype)
        elif n == 1:
            a = inputs[0]
            self.next = (None if not a.requires_grad else (a, -1) if a.grad_fn is None else (a.grad_fn, a._out_index),)
            self.shapes, self.dtypes = (a._data.shape,), (a._dtype,)
        else:
            self.next = tuple([_edge(t) for t in inputs])
            self.shapes = tuple([t._data.shape for t in inputs])
            self.dtypes = tuple([t._dtype for t in inputs])
        self.backend = outputs[0]._backend
        if len(outputs) == 1:
            self.outs = _ONE_OUTPUT
        else:   # None stands in for a non-differentiable output: no gradient is made up for it
            skip = rule.non_differentiable if rule is not None else ()
            self.outs = tuple([None if i in skip else (o._data.shape, o._dtype) for i, o in enumerate(outputs)])
        saves = "nothing" if rule is None else rule.saves
        if saves == "nothing":
            self.saved = self.versions = ()
        elif rule.inputs_to_save is True and saves == "inputs" and n <= 2:   # all inputs (n > 0: an input needs grad)
            self.saved, self.versions = inputs, (a._version, b._version) if n == 2 else (a._version,)
        else:
            self.saved, self.versions = _SAVE[saves](rule, inputs, outputs)

    def save(self, saved, versions):
        self.saved, self.versions = tuple(saved), tuple(versions)

    def name(self) -> str:
        """PyTorch's name for this node (``MulBackward0``; see ``node_names``)."""
        return node_name(self)

    def __repr__(self):
        return f"<{node_name(self)} object at {id(self):#x}>"

    def unpack_saved(self) -> Saved:
        """The saved tensors as Tensors (in their graph positions, so rules can be differentiated)."""
        if self.saved is None:
            raise RuntimeError(_FREED.format(self.kernel))
        out, read = [], self.read_saved()
        for k, (s, v) in enumerate(zip(self.saved, self.versions)):
            if type(s) is SavedTensor:
                out.append(s.unpack(self, v, check=k in read))
            elif s._version != v and k in read:
                raise _modified_error(s, self, v)
            else:
                out.append(s)
        out = Saved(out)
        out.shapes, out.dtypes, out.edges = self.shapes, self.dtypes, self.next
        return out

    def checked_saved(self) -> tuple:
        """The saved tensors as kept (each with its ``_data``: a Tensor or a ``SavedTensor``), once
        checked as ``unpack_saved`` checks them (not freed, unchanged since saved): what a
        backward kernel reads."""
        saved = self.saved
        if not saved:
            if saved is None:
                raise RuntimeError(_FREED.format(self.kernel))
            return saved
        if _last_change[0] < self.order:   # a tensor was changed in place since this node was made
            read = self.read_saved()
            for k, (s, v) in enumerate(zip(saved, self.versions)):
                t = (s.ref and s.ref()) if type(s) is SavedTensor else s   # a dead output can no longer change
                if t is not None and t._version != v and k in read:
                    raise _modified_error(t, self, v)
        return saved

    def read_saved(self):
        """The places in ``saved`` that the wanted gradients read: all, unless the rule's ``saved_for`` says."""
        reads = self.rule.saved_for if self.rule is not None else None
        if reads is None:
            return range(len(self.saved))
        return {k for edge, places in zip(self.next, reads) if edge is not None for k in places}

    @property
    def needs_input_grad(self) -> tuple:
        """Per input, whether a gradient is wanted for it."""
        return tuple([e is not None for e in self.next])

    @property
    def next_functions(self):
        """Per input, (node, output index), (AccumulateGrad of a leaf, 0) or (None, 0), as PyTorch's."""
        return next_functions(self)


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
        be = registry.resolve(backend)
    fn = _kernels.get(be.name, _NONE).get(name)
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
    if type(out) is tuple:
        outs = tuple([_wrap(o, be) for o in out])
        if grad and _mode.enabled:
            _record(name, _gradients.get(name), attrs, inputs, outs)
        return outs
    out = _wrap(out, be)
    if grad and _mode.enabled and out._dtype.differentiable:
        out.requires_grad, out.grad_fn = True, Node(name, _gradients.get(name), attrs, inputs, (out,))
    return out


def _record(name, rule, attrs, inputs, outs):
    """Record a multi-output kernel call: one node, the grad_fn of its differentiable floating outputs."""
    skip = rule.non_differentiable if rule is not None else ()
    floating = [(i, o) for i, o in enumerate(outs) if o._dtype.differentiable and i not in skip]
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
    floating = [(i, o) for i, o in enumerate(outputs) if o._dtype.differentiable]
    if not floating:
        return None
    if any(o._backend is not outputs[0]._backend for o in outputs):
        got = ", ".join(f"{o._backend.name} {tuple(o.shape)}" for o in outputs)
        raise RuntimeError(f"{name}: outputs live on different backends ({got}); the outputs of one recorded "
                           f"function share a backend (return them moved to one, e.g. with .to(...))")
    for i, o in floating:
        o.requires_grad, o._out_index = True, i
    node = Node(name, gradient_rule(fn), attrs or {}, inputs, outputs)
    node.label = f"{name}Backward"   # (PyTorch's name for a custom Function's node)
    node.save([_save(t, outputs) for t in saved], [t._version for t in saved])
    for _, o in floating:
        o.grad_fn = node
    return node
