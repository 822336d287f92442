"""The backward pass: walk the recorded nodes from the outputs back to the leaves.

Gradients travel in one of two forms, chosen once per pass:

* ``TENSORS`` (``create_graph=True``): Tensors made by the gradient rules with ops, so that
  the backward pass is itself recorded and can be differentiated again;
* ``NATIVE`` (``create_graph=False``, the usual ``loss.backward()``): the backends' native
  arrays, made by a node's native VJP where its backend registers one (``register_vjp``)
  and by its rule on wrapped Tensors otherwise. Nothing is recorded, so no Tensor is made
  between the nodes: a Tensor appears only where a user sees one (hooks, ``.grad``).
  Each backend's VJPs run inside its ``gradient_scope`` (cpu: numpy's warnings off), entered
  once per pass, and gradients meeting at a tensor are summed by its ``add_gradients``.

Each mode has its step (``_step``, and ``_run_native``'s loop body); both send a node's input
gradients along its edges, into a leaf's total or a producer node's slot.
"""
from __future__ import annotations

from heapq import heappop, heappush
from operator import attrgetter, itemgetter

from . import kernel_names as K
from .engine import _mode, run_kernel
from .registry import _NONE, _kernels, _vjps
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
    axes, keepdim = _sum_plan(tuple(g.shape), shape, name)
    g = run_kernel(K.SUM, g, axes=axes, keepdim=keepdim)
    return run_kernel(K.RESHAPE, g, shape=tuple(shape)) if g._data.shape != shape else g


def rule_grads(node, dy) -> tuple:
    """The input gradients from the node's rule (``dy`` is a Tensor, or a tuple of them), one per input."""
    rule = node.rule
    if rule is None:
        raise RuntimeError(f"no gradient is registered for kernel '{node.name}'; register one with "
                           f"webgrad.register_gradient({node.name!r}, ...)")
    grads = rule.fn(dy, node.unpack_saved(), node.attrs)
    if type(grads) is not tuple:
        grads = tuple(grads) if isinstance(grads, list) else (grads,)
    return grads


class TENSORS:
    """Gradients as Tensors, from the rules (the backward pass records when grad mode is on)."""

    @staticmethod
    def add(a, b, backend):
        return run_kernel(K.ADD, a, b)

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
    """Gradients as native arrays, from native VJPs where registered (nothing is recorded)."""

    @staticmethod
    def add(a, b, backend):
        return _kernels[backend.name][K.ADD](a, b)

    @staticmethod
    def zeros(shape, dtype, backend):
        return _kernels[backend.name][K.FILL](shape=tuple(shape), value=0, dtype=dtype)

    tensor = staticmethod(_wrap)                        # (g, backend) -> a Tensor holding g
    value = staticmethod(attrgetter("_data"))           # (t) -> its native data


def _native_rule_grads(node, dy) -> tuple:
    """The input gradients from the node's rule, for a native pass: run on wrapped Tensors, each
    fitted to its input (as Tensors: a rule's result may be on another backend), as native data."""
    be = node.backend
    dy = _wrap(dy, be) if type(dy) is not tuple else tuple([None if g is None else _wrap(g, be) for g in dy])
    grads = rule_grads(node, dy)
    if len(grads) != len(node.next):
        return grads
    return tuple([None if g is None else fit(g, s, d, node.name)._data
                  for g, s, d in zip(grads, node.shapes, node.dtypes)])


def _native_sum_to(g, shape, backend, name):
    axes, keepdim = _sum_plan(tuple(g.shape), shape, name)
    g = _kernels[backend.name][K.SUM](g, axes=axes, keepdim=keepdim)
    return _kernels[backend.name][K.RESHAPE](g, shape=tuple(shape)) if g.shape != shape else g


def _plus(mode, a, b, backend):
    return b if a is None else (a if b is None else mode.add(a, b, backend))


def run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=None):
    """Propagate ``grad_tensors`` back from ``tensors``. Leaves accumulate into ``.grad``,
    unless ``capture`` (a dict edge -> None) is given: then the gradients reaching those
    edges are stored there (as Tensors) and no ``.grad`` is touched.

    The schedule: a node runs once every gradient bound for it has arrived, which is when
    every node made after it has run (its consumers were all made after it), so the nodes
    that have a gradient waiting run newest first (a heap on ``Node.order``)."""
    mode = TENSORS if create_graph else NATIVE
    pending, leaves, queue = {}, {}, []
    for t, g in zip(tensors, grad_tensors):
        if not t.requires_grad:
            raise RuntimeError("element of the tensors passed to backward does not require grad and does not "
                               "have a grad_fn (did you create it under no_grad, or forget requires_grad=True?)")
        if g._data.shape != t._data.shape:
            raise RuntimeError(f"backward: gradient has shape {tuple(g.shape)} but the output has shape "
                               f"{tuple(t.shape)}")
        g = mode.value(g)
        if t.grad_fn is None:
            _to_leaf(mode, leaves, t, g)
        else:
            _to_node(mode, pending, queue, t.grad_fn, t._out_index, g)
    ready = hooked_leaves(queue) if post_accumulate_hooks and capture is None else None
    recording, _mode.enabled = _mode.enabled, create_graph   # set_grad_enabled's work, without its object
    try:
        if mode is NATIVE:
            _run_native(pending, leaves, queue, retain_graph, capture, ready)
        else:
            while queue:
                if ready and ready[-1][0] < queue[0][0]:
                    _deliver_ready(ready, queue, leaves, mode, create_graph)
                node = heappop(queue)[1]
                _step(node, pending.pop(node), pending, leaves, queue, retain_graph, capture)
        for leaf, g in leaves.items():
            _deliver_leaf(leaf, mode.tensor(g, leaf._backend), create_graph, capture, mode is NATIVE)
    finally:
        _mode.enabled = recording


def _to_node(mode, pending, queue, node, index, g):
    """Add ``g`` to the gradient waiting for output ``index`` of ``node`` (queued on its first)."""
    slots = pending.get(node)
    if slots is None:
        slots = pending[node] = [None] * len(node.outs)
        heappush(queue, (node.order, node))
    old = slots[index]
    slots[index] = g if old is None else mode.add(old, g, node.backend)


def _to_leaf(mode, leaves, leaf, g):
    old = leaves.get(leaf)   # keyed by the tensor itself: its hash is its identity's
    leaves[leaf] = g if old is None else mode.add(old, g, leaf._backend)


def _output_grads(mode, node, grads, capture):
    """The node's output gradients as one ``dy`` for its rule (a tuple for several outputs, zeros
    standing in for the missing, None for non-differentiable ones), after its hooks; None when no
    gradient reached it."""
    if node.hooks or node.retained or capture is not None:
        grads = _output_hooks(mode, node, grads, capture)
    if len(grads) == 1:
        return grads[0]
    if any(g is not None for g in grads):
        return tuple([g if g is not None or meta is None else mode.zeros(*meta, node.backend)
                      for g, meta in zip(grads, node.outs)])
    return None


def _checked(node, in_grads, retain_graph) -> tuple:
    """``in_grads`` once their count is checked; the node's saved tensors are freed unless retained."""
    if len(in_grads) != len(node.next):
        raise RuntimeError(f"the gradient of kernel '{node.name}' returned {len(in_grads)} gradients for "
                           f"{len(node.next)} inputs")
    if not retain_graph and node.saved:
        node.saved = None
    return in_grads


def _step(node, grads, pending, leaves, queue, retain_graph, capture):
    """Run one node of a recorded pass: its rule on its outputs' gradients, each input's gradient
    (fitted to the input's shape and dtype) sent along its edge, into a leaf's total or a producer
    node's slot."""
    dy = _output_grads(TENSORS, node, grads, capture)
    if dy is None:
        return
    in_grads = _checked(node, rule_grads(node, dy), retain_graph)
    for edge, g, shape, dtype in zip(node.next, in_grads, node.shapes, node.dtypes):
        if edge is None or g is None:
            continue
        if g._dtype is not dtype or g._data.shape != shape:
            g = fit(g, shape, dtype, node.name)
        target, index = edge
        if index < 0:
            _to_leaf(TENSORS, leaves, target, g)
        else:
            _to_node(TENSORS, pending, queue, target, index, g)


def _run_native(pending, leaves, queue, retain_graph, capture, ready=None):
    """The nodes of a native pass: ``_step``'s work, with each node's native VJP where one stands
    for its rule (the rule otherwise), and ``_to_leaf``'s and ``_to_node``'s routing written out
    (this loop runs per node). Each backend's VJPs run inside its ``gradient_scope`` (cpu: numpy's
    warnings off), entered on the first node of that backend and left at the end. ``ready``: see
    ``hooked_leaves``."""
    backends, scopes = {}, []   # backend -> (its native VJPs, how it sums two gradients); the scopes entered
    try:
        while queue:
            if ready and ready[-1][0] < queue[0][0]:
                _deliver_ready(ready, queue, leaves, NATIVE, False)
            node = heappop(queue)[1]
            grads = pending.pop(node)
            be = node.backend
            vjps, add = backends.get(be) or _enter(be, backends, scopes)
            if len(grads) == 1 and not (node.hooks or node.retained or capture is not None):
                dy = grads[0]   # _output_grads' usual case, inlined
            else:
                dy = _output_grads(NATIVE, node, grads, capture)
                if dy is None:
                    continue
            vjp = vjps.get(node.name)   # (fn of the rule it stands for, the VJP)
            if vjp is not None and node.rule is not None and vjp[0] is node.rule.fn:
                in_grads = vjp[1](dy, node.native_saved(), node)
            else:
                in_grads = _native_rule_grads(node, dy)
            for edge, g, shape in zip(node.next, _checked(node, in_grads, retain_graph), node.shapes):
                if edge is None or g is None:
                    continue
                if g.shape != shape:
                    g = _native_sum_to(g, shape, be, node.name)
                target, index = edge
                if index < 0:
                    old = leaves.get(target)
                    leaves[target] = g if old is None else add(old, g)
                    continue
                slots = pending.get(target)
                if slots is None:
                    slots = pending[target] = [None] * len(target.outs)
                    heappush(queue, (target.order, target))
                old = slots[index]
                slots[index] = g if old is None else add(old, g)
    finally:
        for scope in reversed(scopes):
            scope.__exit__(None, None, None)


def _enter(backend, backends, scopes) -> tuple:
    """What a native pass uses of ``backend``: its native VJPs, and how it sums two gradients (its
    ``add_gradients``, else its Add kernel); on the way in, it enters the backend's ``gradient_scope``."""
    scope = getattr(backend, "gradient_scope", None)
    if scope is not None:
        scope = scope()
        scope.__enter__()
        scopes.append(scope)
    add = getattr(backend, "add_gradients", None) or _kernels[backend.name][K.ADD]
    backends[backend] = (_vjps.get(backend.name, _NONE), add)
    return backends[backend]


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


def _deliver_ready(ready, queue, leaves, mode, create_graph):
    """Deliver the hooked leaves whose every gradient has arrived (the next node is older than
    their oldest consumer; see ``hooked_leaves``)."""
    while ready and ready[-1][0] < queue[0][0]:
        leaf = ready.pop()[1]
        g = leaves.pop(leaf, None)
        if g is not None:
            _deliver_leaf(leaf, mode.tensor(g, leaf._backend), create_graph, None, mode is NATIVE)


def _output_hooks(mode, node, grads, capture):
    """Run the tensor hooks and fill the retained grads of the node's outputs (and ``capture``),
    which see Tensors; the (possibly hook-replaced) gradients go on in ``mode``'s form."""
    grads = [None if g is None else mode.tensor(g, node.backend) for g in grads]
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
    return [None if g is None else mode.value(g) for g in grads]


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
