"""The backward pass: walk the recorded nodes from the outputs back to the leaves.

One loop (``run_backward``) in one of two forms, chosen per pass:

* ``TENSORS`` (``create_graph=True``): gradients are Tensors made by the gradient rules with ops,
  and grad mode stays on, so the pass is itself recorded and can be differentiated again;
* ``NATIVE`` (``create_graph=False``, the usual ``loss.backward()``): gradients are the backends'
  native arrays, made by the backward kernel a node's rule names where its backend registers one
  (``register_gradient``'s ``kernel``: an ordinary kernel, seen by the profiler, ``override_kernel``
  and the compiler), by the rule on wrapped Tensors otherwise. A Tensor appears only where a user
  sees one (hooks, ``.grad``).

A node's input gradients are summed back to the inputs' shapes where they came back broadcast and
sent along the node's edges: into a leaf's total, or into a producer node's slot.
"""
from __future__ import annotations

import inspect
from heapq import heappop, heappush
from functools import partial
from operator import attrgetter, is_not, itemgetter

from . import kernel_names as K
from .autograd import anomaly_mode
from .engine import _mode, run_kernel
from .registry import _NONE, _backend_instances, _kernels
from .shapes import remembered, sum_axes_for_broadcast
from .tensor import Tensor, post_accumulate_hooks

_wrap = Tensor._wrap


@remembered
def _sum_plan(got: tuple, shape: tuple, name: str):
    """How a gradient of shape ``got`` (a broadcast of ``shape``) sums back to ``shape``:
    (axes, keepdim), with keepdim False when only leading dims go (one Sum, no Reshape)."""
    lead = len(got) - len(shape)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(shape, got[lead:])):
        raise RuntimeError(f"the gradient of kernel '{name}' returned shape {got} for an input of shape "
                           f"{tuple(shape)}")
    axes = sum_axes_for_broadcast(got, shape)
    return axes, len(axes) != lead


def fit(g: Tensor, shape, dtype, name: str) -> Tensor:
    """Sum a gradient that came back in a broadcast shape down to its input's ``shape``, and
    cast it to the input's ``dtype`` (as PyTorch's engine does)."""
    if g._dtype is not dtype:
        g = run_kernel(K.CAST, g, dtype=dtype)
    if g._data.shape == shape:
        return g
    axes, keepdim = _sum_plan(g._data.shape, shape, name)
    g = run_kernel(K.SUM, g, axes=axes, keepdim=keepdim)
    return run_kernel(K.RESHAPE, g, shape=tuple(shape)) if g._data.shape != shape else g


def rule_grads(node, dy) -> tuple:
    """The input gradients from the node's rule (``dy`` is a Tensor, or a tuple of them), one per
    input, each fitted to its input's dtype (the shape is fitted by the pass)."""
    rule = node.rule
    if rule is None:
        raise RuntimeError(f"no gradient is registered for kernel '{node.kernel}'; register one with "
                           f"webgrad.register_gradient({node.kernel!r}, ...)")
    grads = rule.fn(dy, node.unpack_saved(), node.attrs)
    if type(grads) is not tuple:
        grads = tuple(grads) if isinstance(grads, list) else (grads,)
    if len(grads) != len(node.next):
        raise _count_error(node, grads)
    return tuple([g if g is None or g._dtype is d else run_kernel(K.CAST, g, dtype=d)
                  for g, d in zip(grads, node.dtypes)])


def _count_error(node, grads) -> RuntimeError:
    return RuntimeError(f"the gradient of kernel '{node.kernel}' returned {len(grads)} gradients for "
                        f"{len(node.next)} inputs")


_data_of = attrgetter("_data")


_wanted = partial(is_not, None)   # (an edge: whether its input wants a gradient)
_EXTRAS = {"needs": lambda node: tuple(map(_wanted, node.next)),                # what a backward kernel
           "shapes": attrgetter("shapes"), "dtypes": attrgetter("dtypes")}    # may read of its node


def extras_named(kernel) -> tuple:
    """The ``_EXTRAS`` that backward kernel ``kernel`` names as parameters (all of them when it takes
    ``**kwargs``), read from its signature (through wrappers' ``__wrapped__``), and kept as the
    kernel's ``backward_extras`` where it takes attributes.

    >>> extras_named(lambda dy, a, b, *, needs, transpose_a=False: None)
    ('needs',)
    """
    params = inspect.signature(kernel).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
    extras = tuple([name for name in _EXTRAS if takes_all or name in params])
    try:
        kernel.backward_extras = extras
    except AttributeError:   # (a callable that takes no attributes: its signature is read at every call)
        pass
    return extras


def _native_rule_grads(node, dy) -> tuple:
    """The node's rule run on its output gradients wrapped as Tensors; its gradients' native data."""
    be = node.backend
    dy = tuple([None if g is None else _wrap(g, be) for g in dy]) if type(dy) is tuple else _wrap(dy, be)
    return tuple([None if g is None else g._data for g in rule_grads(node, dy)])


class TENSORS:
    """Gradients as Tensors, from the rules (the pass records when grad mode is on)."""

    input_grads = staticmethod(rule_grads)

    @staticmethod
    def enter_scopes() -> list:
        return []

    @staticmethod
    def add(a, b, backend):
        return run_kernel(K.ADD, a, b)

    @staticmethod
    def sum_to(g, shape, node):
        return fit(g, shape, g._dtype, node.kernel)

    @staticmethod
    def zeros(shape, dtype, backend):
        return run_kernel(K.FILL, backend=backend, shape=tuple(shape), value=0, dtype=dtype)

    @staticmethod
    def tensor(g, backend):
        return g

    @staticmethod
    def value(t):
        return t


class NATIVE:
    """Gradients as native arrays, from backward kernels where registered (nothing is recorded)."""

    @staticmethod
    def input_grads(node, dy) -> tuple:
        """By the backward kernel that the node's rule names (see ``register_gradient``), on the
        output gradients and saved tensors with the forward's attrs and the ``_EXTRAS`` the kernel
        names; by the rule on wrapped Tensors where the node's backend has no such kernel."""
        rule = node.rule
        kernel = None if rule is None else _kernels.get(node.backend.name, _NONE).get(rule.kernel)
        if kernel is None:
            return _native_rule_grads(node, dy)
        saved = map(_data_of, node.checked_saved())
        args = (*dy, *saved) if type(dy) is tuple else (dy, *saved)
        try:
            extras = kernel.backward_extras
        except AttributeError:
            extras = extras_named(kernel)
        if not extras:
            return kernel(*args, **node.attrs) if node.attrs else kernel(*args)
        attrs = dict(node.attrs)
        for name in extras:
            attrs[name] = _EXTRAS[name](node)
        return kernel(*args, **attrs)

    @staticmethod
    def enter_scopes() -> list:
        """Enter the ``gradient_scope`` of every started backend that has one (cpu: numpy's
        warnings off), which the backward kernels run in; returns the scopes to leave."""
        scopes = [be.gradient_scope() for be in _backend_instances.values() if hasattr(be, "gradient_scope")]
        for scope in scopes:
            scope.__enter__()
        return scopes

    @staticmethod
    def add(a, b, backend):
        return _kernels[backend.name][K.ADD](a, b)

    @staticmethod
    def sum_to(g, shape, node):
        axes, keepdim = _sum_plan(tuple(g.shape), shape, node.kernel)
        table = _kernels[node.backend.name]
        g = table[K.SUM](g, axes=axes, keepdim=keepdim)
        return table[K.RESHAPE](g, shape=tuple(shape)) if g.shape != shape else g

    @staticmethod
    def zeros(shape, dtype, backend):
        return _kernels[backend.name][K.FILL](shape=tuple(shape), value=0, dtype=dtype)

    tensor = staticmethod(_wrap)    # (g, backend) -> a Tensor holding g
    value = staticmethod(_data_of)  # (t) -> its native data


def _plus(form, a, b, backend):
    return b if a is None else (a if b is None else form.add(a, b, backend))


def run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=None):
    """Propagate ``grad_tensors`` back from ``tensors``. Leaves accumulate into ``.grad``,
    unless ``capture`` (a dict edge -> None) is given: then the gradients reaching those
    edges are stored there (as Tensors) and no ``.grad`` is touched.

    The schedule: a node runs once every gradient bound for it has arrived, which is when
    every node made after it has run (its consumers were all made after it), so the nodes
    that have a gradient waiting run newest first (a heap on ``Node.order``)."""
    form = TENSORS if create_graph else NATIVE
    if anomaly_mode.state.enabled and anomaly_mode.state.check_nan:
        form = anomaly_mode.checked(form)
    pending, leaves, queue = {}, {}, []
    for t, g in zip(tensors, grad_tensors):
        if not t.requires_grad:
            raise RuntimeError("element of the tensors passed to backward does not require grad and does not "
                               "have a grad_fn (did you create it under no_grad, or forget requires_grad=True?)")
        if g._data.shape != t._data.shape:
            raise RuntimeError(f"backward: gradient has shape {tuple(g.shape)} but the output has shape "
                               f"{tuple(t.shape)}")
        edge = (t, -1) if t.grad_fn is None else (t.grad_fn, t._out_index)
        _send(form, pending, leaves, queue, edge, form.value(g), t._backend)
    ready = hooked_leaves(queue) if post_accumulate_hooks and capture is None else None
    recording, _mode.enabled = _mode.enabled, create_graph   # set_grad_enabled's work, without its object
    scopes = form.enter_scopes()
    try:
        while queue:
            if ready and ready[-1][0] < queue[0][0]:
                _deliver_ready(ready, queue, leaves, form, create_graph)
            node = heappop(queue)[1]
            grads = pending.pop(node)
            if len(grads) == 1 and not (node.hooks or node.retained or capture is not None):
                dy = grads[0]   # (the usual case of _output_grads)
            else:
                dy = _output_grads(form, node, grads, capture)
                if dy is None:
                    continue
            in_grads = form.input_grads(node, dy)
            if len(in_grads) != len(node.next):
                raise _count_error(node, in_grads)
            if not retain_graph and node.saved:
                node.saved = None
            for edge, g, shape in zip(node.next, in_grads, node.shapes):
                if edge is not None and g is not None:
                    _send(form, pending, leaves, queue, edge, g if g.shape == shape else form.sum_to(g, shape, node),
                          node.backend)
        for leaf, g in leaves.items():
            _deliver_leaf(leaf, form.tensor(g, leaf._backend), create_graph, capture, not create_graph)
    finally:
        _mode.enabled = recording
        for scope in reversed(scopes):
            scope.__exit__(None, None, None)


def _send(form, pending, leaves, queue, edge, g, backend):
    """Add ``g`` to what waits at ``edge``: a leaf's total (index -1), or a node's gradient for
    output ``index`` (the node is queued on its first)."""
    target, index = edge
    if index < 0:
        old = leaves.get(target)   # keyed by the tensor itself: its hash is its identity's
        leaves[target] = g if old is None else form.add(old, g, backend)
        return
    slots = pending.get(target)
    if slots is None:
        slots = pending[target] = [None] * len(target.outs)
        heappush(queue, (target.order, target))
    old = slots[index]
    slots[index] = g if old is None else form.add(old, g, backend)


def _output_grads(form, node, grads, capture):
    """The node's output gradients as one ``dy`` (a tuple for several outputs, zeros standing in
    for the missing, None for non-differentiable ones), after its hooks; None when no gradient
    reached it."""
    if node.hooks or node.retained or capture is not None:
        grads = _output_hooks(form, node, grads, capture)
    if len(grads) == 1:
        return grads[0]
    if any(g is not None for g in grads):
        return tuple([g if g is not None or meta is None else form.zeros(*meta, node.backend)
                      for g, meta in zip(grads, node.outs)])
    return None


def hooked_leaves(queue) -> list:
    """The leaves with post-accumulate-grad hooks that a pass starting at ``queue``'s nodes reaches,
    as (order, leaf) sorted by falling ``order``: the order of the oldest node sending the leaf a
    gradient. Nodes run newest first, so once the next node is older than that, the leaf's
    gradient is whole and it is delivered then, in the middle of the pass (as PyTorch's
    AccumulateGrad runs as soon as its inputs are ready), not at the end with the other leaves."""
    last = {}
    for node, leaf in leaf_edges([node for _, node in queue]):
        if id(leaf) in post_accumulate_hooks:
            last[leaf] = max(last.get(leaf, node.order), node.order)
    return sorted([(order, leaf) for leaf, order in last.items()], key=itemgetter(0), reverse=True)


def leaf_edges(nodes):
    """(node, leaf) for every edge to a leaf tensor from the nodes reachable from ``nodes``.

    >>> import webgrad as wg
    >>> w = wg.ones(2, requires_grad=True)
    >>> [leaf is w for _, leaf in leaf_edges([(w * 2).sum().grad_fn])]
    [True]
    """
    seen, stack = set(nodes), list(nodes)
    while stack:
        node = stack.pop()
        for edge in node.next:
            if edge is None:
                continue
            target, index = edge
            if index < 0:
                yield node, target
            elif target not in seen:
                seen.add(target)
                stack.append(target)


def _deliver_ready(ready, queue, leaves, form, create_graph):
    """Deliver the hooked leaves whose every gradient has arrived (the next node is older than
    their oldest consumer; see ``hooked_leaves``)."""
    while ready and ready[-1][0] < queue[0][0]:
        leaf = ready.pop()[1]
        g = leaves.pop(leaf, None)
        if g is not None:
            _deliver_leaf(leaf, form.tensor(g, leaf._backend), create_graph, None, not create_graph)


def _output_hooks(form, node, grads, capture):
    """Run the tensor hooks and fill the retained grads of the node's outputs (and ``capture``),
    which see Tensors; the (possibly hook-replaced) gradients go on in ``form``'s form."""
    grads = [None if g is None else form.tensor(g, node.backend) for g in grads]
    if node.hooks:
        for i, fns in node.hooks.items():
            for fn in fns:
                if grads[i] is not None:
                    r = fn(grads[i])
                    grads[i] = grads[i] if r is None else r
    if node.retained:
        for i, ref in node.retained.items():
            t = ref()
            if t is not None and grads[i] is not None and capture is None:
                t.grad = accumulate(t.grad, grads[i], _mode.enabled)
    if capture is not None:
        for i, g in enumerate(grads):
            if (node, i) in capture:
                capture[(node, i)] = _plus(TENSORS, capture[(node, i)], g, None)
    return [None if g is None else form.value(g) for g in grads]


def _deliver_leaf(leaf, g, create_graph, capture, fresh):
    """Run ``leaf``'s hooks on its total gradient ``g`` and accumulate it into ``.grad`` (or
    ``capture``); ``fresh``: ``g`` is a Tensor object made for this leaf alone (a native pass
    wraps each leaf's total anew), so where no hook has seen it, it may become ``.grad`` itself."""
    for fn in leaf._hooks or ():
        r = fn(g)
        g, fresh = g if r is None else r, False
    if capture is not None:
        if (leaf, -1) in capture:
            capture[(leaf, -1)] = _plus(TENSORS, capture[(leaf, -1)], g, None)
        return
    leaf.grad = g if fresh and leaf.grad is None else accumulate(leaf.grad, g, create_graph)
    run_post_accumulate_hooks(leaf)


def run_post_accumulate_hooks(leaf) -> None:
    """Call ``leaf``'s post-accumulate-grad hooks, once its ``.grad`` holds this pass's gradient."""
    entry = post_accumulate_hooks.get(id(leaf))
    for fn in tuple(entry[1]) if entry else ():
        fn(leaf)


def accumulate(old, g, create_graph):
    """``old + g`` as a fresh tensor object (never an alias of another tensor's ``.grad``)."""
    if old is not None:
        return run_kernel(K.ADD, old, g)
    return g._alias() if create_graph else g._alias_detached()
