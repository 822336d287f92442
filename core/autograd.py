"""Reverse-mode differentiation over the recorded nodes, with PyTorch's semantics,
plus the functional forms (``grad(f)``, ``value_and_grad(f)``), ``custom_grad`` and ``Function``."""
from __future__ import annotations

import functools

from . import kernel_names as K
from .engine import no_grad, record_function, run_kernel, set_grad_enabled, _mode
from .shapes import sum_axes_for_broadcast
from .tensor import Tensor, tensor


def _fit(g, shape, dtype, name):
    """Sum a gradient that came back in a broadcast shape down to its input's ``shape``, and
    cast it to the input's ``dtype`` (as PyTorch's engine does)."""
    if g._dtype is not dtype:
        g = run_kernel(K.CAST, g, dtype=dtype)
    if g.shape == shape:
        return g
    gs = tuple(g.shape)
    lead = len(gs) - len(shape)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(shape, gs[lead:])):
        raise RuntimeError(f"the gradient of kernel '{name}' returned shape {gs} for an input of shape "
                           f"{tuple(shape)}")
    axes = sum_axes_for_broadcast(gs, shape)
    if len(axes) == lead:   # only leading dims to drop (a bias's gradient): one kernel
        return run_kernel(K.SUM, g, axes=axes, keepdim=False)
    g = run_kernel(K.SUM, g, axes=axes, keepdim=True)
    return run_kernel(K.RESHAPE, g, shape=tuple(shape)) if g.shape != shape else g


def _add(a, b):
    return b if a is None else (a if b is None else run_kernel(K.ADD, a, b))


def _ones_like(t):
    return run_kernel(K.FILL, backend=t._backend, shape=tuple(t.shape), value=1, dtype=t._dtype)


def _zeros(shape, dtype, backend):
    return run_kernel(K.FILL, backend=backend, shape=tuple(shape), value=0, dtype=dtype)


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


def _run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=None):
    """Propagate ``grad_tensors`` back from ``tensors``. Leaves accumulate into ``.grad``,
    unless ``capture`` (a dict edge -> None) is given: then the gradients reaching those
    edges are stored there and no ``.grad`` is touched."""
    pending, leaves, roots = {}, {}, []
    for t, g in zip(tensors, grad_tensors):
        if not t.requires_grad:
            raise RuntimeError("element of the tensors passed to backward does not require grad and does not "
                               "have a grad_fn (did you create it under no_grad, or forget requires_grad=True?)")
        if g.shape != t.shape:
            raise RuntimeError(f"backward: gradient has shape {tuple(g.shape)} but the output has shape "
                               f"{tuple(t.shape)}")
        if t.grad_fn is None:
            _collect_leaf(leaves, t, g)
        else:
            slots = pending.setdefault(t.grad_fn, [None] * len(t.grad_fn.outs))
            slots[t._out_index] = _add(slots[t._out_index], g)
            roots.append(t.grad_fn)
    deps = _topo_counts(set(roots))
    ready = [n for n in dict.fromkeys(roots) if deps.get(n, 0) == 0]
    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            grads = pending.pop(node)
            _step(node, grads, pending, leaves, deps, ready, retain_graph, capture)
        for leaf, g in leaves.values():
            _deliver_leaf(leaf, g, create_graph, capture)


def _collect_leaf(leaves, t, g):
    prev = leaves.get(id(t))
    leaves[id(t)] = (t, g if prev is None else _add(prev[1], g))


def _step(node, grads, pending, leaves, deps, ready, retain_graph, capture):
    if node.hooks or node.retained or capture is not None:
        grads = _output_hooks(node, grads, capture)
    nxt = node.next
    if len(grads) == 1:
        dy = grads[0]
        live = dy is not None
    else:
        live = any(g is not None for g in grads)
        dy = tuple(g if g is not None else _zeros(*meta) for g, meta in zip(grads, node.outs)) if live else None
    if not live:
        return _release(node, (None,) * len(nxt), pending, leaves, deps, ready)
    rule = node.rule
    if rule is None:
        raise RuntimeError(f"no gradient is registered for kernel '{node.name}'; register one with "
                           f"webgrad.register_gradient({node.name!r}, ...)")
    in_grads = rule.fn(dy, node.unpack_saved(), node.attrs)
    if type(in_grads) is not tuple:
        in_grads = tuple(in_grads) if isinstance(in_grads, list) else (in_grads,)
    if len(in_grads) != len(nxt):
        raise RuntimeError(f"the gradient of kernel '{node.name}' returned {len(in_grads)} gradients for "
                           f"{len(nxt)} inputs")
    if not retain_graph and node.saved:
        node.saved = None
    _release(node, in_grads, pending, leaves, deps, ready)


def _release(node, in_grads, pending, leaves, deps, ready):
    """Send each input's gradient along its edge: into a leaf's total, or a producer node's slot."""
    for edge, g, shape, dtype in zip(node.next, in_grads, node.shapes, node.dtypes):
        if edge is None:
            continue
        target, idx = edge
        if g is not None and (g._dtype is not dtype or g._data.shape != shape):
            g = _fit(g, shape, dtype, node.name)
        if idx < 0:
            if g is not None:
                key = id(target)
                prev = leaves.get(key)
                leaves[key] = (target, g) if prev is None else (target, run_kernel(K.ADD, prev[1], g))
            continue
        slots = pending.get(target)
        if slots is None:
            slots = pending[target] = [None] * len(target.outs)
        if g is not None:
            old = slots[idx]
            slots[idx] = g if old is None else run_kernel(K.ADD, old, g)
        left = deps[target] - 1
        deps[target] = left
        if not left:
            ready.append(target)


def _output_hooks(node, grads, capture):
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
                t.grad = _accumulate(t.grad, grads[i], _mode.enabled)
    if capture is not None:
        for i, g in enumerate(grads):
            if (node, i) in capture:
                capture[(node, i)] = _add(capture[(node, i)], g)
    return grads


def _deliver_leaf(leaf, g, create_graph, capture):
    for fn in leaf._hooks or ():
        r = fn(g)
        g = g if r is None else r
    if capture is not None:
        if (leaf, -1) in capture:
            capture[(leaf, -1)] = _add(capture[(leaf, -1)], g)
        return
    leaf.grad = _accumulate(leaf.grad, g, create_graph)


def _accumulate(old, g, create_graph):
    """``old + g`` as a fresh tensor object (never an alias of another tensor's ``.grad``)."""
    if old is not None:
        return run_kernel(K.ADD, old, g)
    return g._alias() if create_graph else g._alias_detached()


def _as_list(x):
    return [x] if isinstance(x, Tensor) else list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate into the leaves' ``.grad`` the gradients of ``tensors`` (PyTorch's
    ``torch.autograd.backward``); given ``inputs``, only into those tensors' ``.grad``.
    ``Tensor.backward`` calls this.

    >>> import webgrad as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> wg.autograd.backward((x * x).sum())
    >>> x.grad.tolist()
    [2.0, 4.0]
    """
    tensors = _as_list(tensors)
    grad_tensors = _root_grads(tensors, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        return _run_backward(tensors, grad_tensors, retain_graph, create_graph)
    inputs = _as_list(inputs)
    grads = grad(tensors, inputs, grad_tensors, retain_graph, create_graph, allow_unused=True)
    for t, g in zip(inputs, grads):
        if g is not None:
            t.grad = _accumulate(t.grad, g, create_graph)


def _root_grads(outputs, grads, who):
    if grads is None or isinstance(grads, Tensor):
        grads = [grads] * len(outputs) if grads is None else [grads]
    grads = list(grads)
    out = []
    for t, g in zip(outputs, grads):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"{who}: grad can be implicitly created only for scalar outputs; this "
                                   f"output has shape {tuple(t.shape)}, so pass gradient= (a tensor of that shape)")
            g = _ones_like(t)
        elif not isinstance(g, Tensor):
            g = tensor(g, dtype=t.dtype, backend=t._backend)
        elif g._dtype is not t._dtype:
            g = run_kernel(K.CAST, g, dtype=t._dtype)
        out.append(g)
    return out


def grad(outputs, inputs=None, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False,
         *, argnums=0):
    """Gradients of ``outputs`` with respect to ``inputs``, returned without touching ``.grad``
    (PyTorch's ``torch.autograd.grad``); or, given a function, the function computing
    its gradient (the TF.js/JAX functional form, w.r.t. argument ``argnums``).

    >>> import webgrad as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> (gx,) = wg.grad(x ** 3, x, create_graph=True)
    >>> gx.item(), wg.grad(gx, x)[0].item()
    (27.0, 18.0)
    >>> wg.grad(lambda t: (t * t).sum())(wg.tensor([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    if callable(outputs) and inputs is None:
        vg = value_and_grad(outputs, argnums=argnums)
        return functools.wraps(outputs)(lambda *a, **kw: vg(*a, **kw)[1])
    outputs, inputs = _as_list(outputs), _as_list(inputs)
    edges = []
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("grad: one of the differentiated tensors does not require grad")
        edges.append((t, -1) if t.grad_fn is None else (t.grad_fn, t._out_index))
    capture = dict.fromkeys(edges)
    if retain_graph is None:
        retain_graph = create_graph
    _run_backward(outputs, _root_grads(outputs, grad_outputs, "grad"), retain_graph, create_graph, capture)
    result = []
    for t, e in zip(inputs, edges):
        g = capture[e]
        if g is None and not allow_unused:
            raise RuntimeError(f"grad: one of the differentiated tensors (shape {tuple(t.shape)}) appears to not "
                               f"have been used in the graph; set allow_unused=True if this is the desired behavior")
        result.append(g if g is None or create_graph else g._alias_detached())
    return tuple(result)


def value_and_grad(f, argnums=0):
    """Wrap ``f`` so that it returns ``(f(*args), gradient of f w.r.t. args[argnums])``
    (a tuple of gradients when ``argnums`` is a tuple). ``f`` must return a scalar tensor.

    >>> import webgrad as wg
    >>> v, g = wg.value_and_grad(lambda x: (x ** 2).sum())(wg.tensor([3.0]))
    >>> v.item(), g.tolist()
    (9.0, [6.0])
    """
    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        args = list(args)
        nested = any(args[i].requires_grad for i in nums)
        for i in nums:
            if not args[i].requires_grad:
                args[i] = args[i].detach().requires_grad_()
        with set_grad_enabled(True):
            value = f(*args, **kwargs)
            grads = grad(value, [args[i] for i in nums], create_graph=nested and _mode.enabled)
        return value, (grads[0] if isinstance(argnums, int) else grads)
    return wrapped


def custom_grad(f):
    """Give ``f`` its own gradient (TF.js's ``customGrad``): ``f(*inputs)`` returns
    ``(value, grad_fn)`` and ``grad_fn(dy)`` returns one gradient per tensor input.
    The ops inside ``f`` are not recorded; the call is one node.

    >>> import webgrad as wg
    >>> @wg.custom_grad
    ... def clipped_identity(x):
    ...     return x * 1.0, lambda dy: dy.clamp(-1, 1)
    >>> x = wg.tensor([5.0], requires_grad=True)
    >>> (clipped_identity(x) * 10).sum().backward()
    >>> x.grad.tolist()
    [1.0]
    """

    @functools.wraps(f)
    def wrapped(*args):
        inputs = [a for a in args if isinstance(a, Tensor)]
        with no_grad():
            value, grad_fn = f(*args)
        outs = value if isinstance(value, tuple) else (value,)
        outs = tuple(o._alias_detached() for o in outs)

        def backward_fn(dy, saved, attrs):
            return grad_fn(dy)
        record_function(getattr(f, "__name__", "CustomGrad"), backward_fn, inputs, outs)
        return outs if isinstance(value, tuple) else outs[0]
    return wrapped


class FunctionCtx:
    """The ``ctx`` of a ``Function``: ``save_for_backward(*tensors)``, ``saved_tensors``,
    ``needs_input_grad``, and any attributes you set on it."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        return self._saved


class Function:
    """PyTorch-style custom autograd function: subclass with static ``forward(ctx, *args)``
    and ``backward(ctx, *grad_outputs)``, call with ``.apply(*args)``.

    >>> import webgrad as wg
    >>> class Cube(wg.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, dy):
    ...         (x,) = ctx.saved_tensors
    ...         return dy * 3 * x ** 2
    >>> x = wg.tensor(2.0, requires_grad=True)
    >>> Cube.apply(x).backward()
    >>> x.grad.item()
    12.0
    """

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx._to_save = ()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        outs = tuple(o._alias_detached() for o in (out if isinstance(out, tuple) else (out,)))
        originals = out if isinstance(out, tuple) else (out,)
        to_save = tuple(outs[originals.index(t)] if any(t is o for o in originals) else t for t in ctx._to_save)
        tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        del ctx._to_save

        def backward_fn(dy, saved, attrs):
            ctx._saved = tuple(saved)
            try:
                grads = cls.backward(ctx, *(dy if isinstance(dy, tuple) else (dy,)))
            finally:
                ctx._saved = ()
            grads = grads if isinstance(grads, tuple) else (grads,)
            if len(grads) != len(args):
                raise RuntimeError(f"{cls.__name__}.backward returned {len(grads)} gradients; forward took "
                                   f"{len(args)} arguments (return None for the non-tensor ones)")
            return tuple(grads[i] for i in tensor_pos)
        record_function(cls.__name__, backward_fn, [args[i] for i in tensor_pos], outs, saved=to_save)
        return outs if isinstance(out, tuple) else outs[0]

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("subclasses of webgrad.Function implement forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of webgrad.Function implement backward(ctx, *grad_outputs)")
