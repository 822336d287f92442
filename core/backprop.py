"""The backward pass: walk the recorded nodes from the outputs back to the leaves.

Gradients travel in one of two forms, chosen once per pass:

* ``TENSORS`` (``create_graph=True``): Tensors made by the gradient rules with ops, so that
  the backward pass is itself recorded and can be differentiated again;
* ``NATIVE`` (``create_graph=False``, the usual ``loss.backward()``): the backends' native
  arrays, made by a node's native VJP where its backend registers one (``register_vjp``)
  and by its rule on wrapped Tensors otherwise. Nothing is recorded, so no Tensor is made
  between the nodes: a Tensor appears only where a user sees one (hooks, ``.grad``).
"""
from __future__ import annotations

from . import kernel_names as K
from .engine import _mode, run_kernel, set_grad_enabled
from .registry import _kernels, get_vjp
from .shapes import sum_axes_for_broadcast
from .tensor import Tensor

_wrap = Tensor._wrap


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
    def grads(node, dy):
        return rule_grads(node, dy)

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
    def grads(node, dy):
        be = node.outs[0][2]
        vjp = get_vjp(node.name, be.name, node.rule) if node.rule is not None else None
        if vjp is not None:
            return vjp(dy, node.native_saved(), node)
        dy = _wrap(dy, be) if type(dy) is not tuple else tuple([_wrap(g, o[2]) for g, o in zip(dy, node.outs)])
        grads = rule_grads(node, dy)   # fitted here, as Tensors: a rule's result may be on another backend
        if len(grads) != len(node.next):
            return grads
        return tuple([None if g is None else fit(g, s, d, node.name)._data
                      for g, s, d in zip(grads, node.shapes, node.dtypes)])

    @staticmethod
    def add(a, b, backend):
        return _kernels[(K.ADD, backend.name)](a, b)

    @staticmethod
    def zeros(shape, dtype, backend):
        return _kernels[(K.FILL, backend.name)](shape=tuple(shape), value=0, dtype=dtype)

    @staticmethod
    def tensor(g, backend):
        return _wrap(g, backend)

    @staticmethod
    def value(t):
        return t._data


def _native_sum_to(g, shape, backend, name):
    axes, keepdim = _sum_plan(tuple(g.shape), shape, name)
    g = _kernels[(K.SUM, backend.name)](g, axes=axes, keepdim=keepdim)
    return _kernels[(K.RESHAPE, backend.name)](g, shape=tuple(shape)) if g.shape != shape else g


def _topo_counts(roots):
    """How many edges point at each node reachable from ``roots``."""
    deps, stack, seen = {}, list(roots), set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for e in node.next:
            if e is not None and e[1] >= 0:
                deps[e[0]] = deps.get(e[0], 0) + 1
                stack.append(e[0])
    return deps


def _plus(mode, a, b, backend):
    return b if a is None else (a if b is None else mode.add(a, b, backend))


def run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=None):
    """Propagate ``grad_tensors`` back from ``tensors``. Leaves accumulate into ``.grad``,
    unless ``capture`` (a dict edge -> None) is given: then the gradients reaching those
    edges are stored there (as Tensors) and no ``.grad`` is touched."""
    mode = TENSORS if create_graph else NATIVE
    pending, leaves, roots = {}, {}, []
    for t, g in zip(tensors, grad_tensors):
        if not t.requires_grad:
            raise RuntimeError("element of the tensors passed to backward does not require grad and does not "
                               "have a grad_fn (did you create it under no_grad, or forget requires_grad=True?)")
        if g.shape != t.shape:
            raise RuntimeError(f"backward: gradient has shape {tuple(g.shape)} but the output has shape "
                               f"{tuple(t.shape)}")
        g = mode.value(g)
        if t.grad_fn is None:
            _to_leaf(mode, leaves, t, g)
        else:
            slots = pending.setdefault(t.grad_fn, [None] * len(t.grad_fn.outs))
            slots[t._out_index] = _plus(mode, slots[t._out_index], g, t._backend)
            roots.append(t.grad_fn)
    deps = _topo_counts(set(roots))
    ready = [n for n in dict.fromkeys(roots) if deps.get(n, 0) == 0]
    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            _step(mode, node, pending.pop(node), pending, leaves, deps, ready, retain_graph, capture)
        for leaf, g in leaves.values():
            _deliver_leaf(leaf, mode.tensor(g, leaf._backend), create_graph, capture)


def _to_leaf(mode, leaves, leaf, g):
    prev = leaves.get(id(leaf))
    leaves[id(leaf)] = (leaf, g) if prev is None else (leaf, mode.add(prev[1], g, leaf._backend))


def _step(mode, node, grads, pending, leaves, deps, ready, retain_graph, capture):
    """Run one node: its outputs' gradients in, each input's gradient sent along its edge,
    into a leaf's total or a producer node's slot (which is ready when its last consumer has run)."""
    if node.hooks or node.retained or capture is not None:
        grads = _output_hooks(mode, node, grads, capture)
    nxt = node.next
    if len(grads) == 1:
        dy = grads[0]
        live = dy is not None
    else:
        live = any(g is not None for g in grads)
        dy = tuple([g if g is not None else mode.zeros(*meta) for g, meta in zip(grads, node.outs)]) if live else None
    if live:
        in_grads = mode.grads(node, dy)
        if len(in_grads) != len(nxt):
            raise RuntimeError(f"the gradient of kernel '{node.name}' returned {len(in_grads)} gradients for "
                               f"{len(nxt)} inputs")
        if not retain_graph and node.saved:
            node.saved = None
    else:
        in_grads = (None,) * len(nxt)
    native = mode is NATIVE
    for edge, g, shape, dtype in zip(nxt, in_grads, node.shapes, node.dtypes):
        if edge is None:
            continue
        target, idx = edge
        if g is not None:
            if native:
                if g.shape != shape:
                    g = _native_sum_to(g, shape, node.outs[0][2], node.name)
            elif g._dtype is not dtype or g._data.shape != shape:
                g = fit(g, shape, dtype, node.name)
        if idx < 0:
            if g is not None:
                _to_leaf(mode, leaves, target, g)
            continue
        slots = pending.get(target)
        if slots is None:
            slots = pending[target] = [None] * len(target.outs)
        if g is not None:
            old = slots[idx]
            slots[idx] = g if old is None else mode.add(old, g, target.outs[idx][2])
        left = deps[target] - 1
        deps[target] = left
        if not left:
            ready.append(target)


def _output_hooks(mode, node, grads, capture):
    """Run the tensor hooks and fill the retained grads of the node's outputs (and ``capture``),
    which see Tensors; the (possibly hook-replaced) gradients go on in ``mode``'s form."""
    grads = [None if g is None else mode.tensor(g, meta[2]) for g, meta in zip(grads, node.outs)]
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


def _deliver_leaf(leaf, g, create_graph, capture):
    for fn in leaf._hooks or ():
        r = fn(g)
        g = g if r is None else r
    if capture is not None:
        if (leaf, -1) in capture:
            capture[(leaf, -1)] = _plus(TENSORS, capture[(leaf, -1)], g, None)
        return
    leaf.grad = accumulate(leaf.grad, g, create_graph)


def accumulate(old, g, create_graph):
    """``old + g`` as a fresh tensor object (never an alias of another tensor's ``.grad``)."""
    if old is not None:
        return run_kernel(K.ADD, old, g)
    return g._alias() if create_graph else g._alias_detached()
