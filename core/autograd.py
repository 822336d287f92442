"""Reverse-mode differentiation over the recorded nodes, with PyTorch's semantics,
plus the functional forms (``grad(f)``, ``value_and_grad(f)``), ``custom_grad`` and ``Function``."""
from __future__ import annotations

import functools
import warnings

from . import kernel_names as K
from .backprop import accumulate, run_backward, run_post_accumulate_hooks
from .engine import no_grad, record_function, run_kernel, set_grad_enabled, _mode
from .ops.common import scalar_tensor
from .tensor import Tensor, tensor
from .variable import Variable  # noqa: F401  (torch.autograd.Variable)


def _implicit_grad(t, who):
    """The gradient ``backward()`` makes up for a one-element output: ones like it."""
    if not t._data.shape:   # a 0-d loss: the cached constant
        return scalar_tensor(1, t._dtype, t._backend)
    if t.numel() != 1:
        raise RuntimeError(f"{who}: grad can be implicitly created only for scalar outputs; this "
                           f"output has shape {tuple(t.shape)}, so pass gradient= (a tensor of that shape)")
    return run_kernel(K.FILL, backend=t._backend, shape=tuple(t.shape), value=1, dtype=t._dtype)


def _as_list(x):
    return [x] if isinstance(x, Tensor) else list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate into the leaves' ``.grad`` the gradients of ``tensors`` (PyTorch's
    ``torch.autograd.backward``); given ``inputs``, only into those tensors' ``.grad``.
    ``Tensor.backward`` calls this. ``grad_variables`` is PyTorch's deprecated name of ``grad_tensors``.

    >>> import webgrad as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> wg.autograd.backward((x * x).sum())
    >>> x.grad.tolist()
    [2.0, 4.0]
    """
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("backward: 'grad_tensors' and 'grad_variables' (deprecated) arguments both passed; "
                               "use only 'grad_tensors'")
        grad_tensors = grad_variables
    tensors = _as_list(tensors)
    grad_tensors = _root_grads(tensors, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        return run_backward(tensors, grad_tensors, retain_graph, create_graph)
    inputs = _as_list(inputs)
    grads = grad(tensors, inputs, grad_tensors, retain_graph, create_graph, allow_unused=True)
    for t, g in zip(inputs, grads):
        if g is not None:
            t.grad = accumulate(t.grad, g, create_graph)
            run_post_accumulate_hooks(t)


def _root_grads(outputs, grads, who):
    if grads is None or isinstance(grads, Tensor):
        grads = [grads] * len(outputs) if grads is None else [grads]
    grads = list(grads)
    out = []
    for t, g in zip(outputs, grads):
        if g is None:
            g = _implicit_grad(t, who)
        elif not isinstance(g, Tensor):
            g = tensor(g, dtype=t.dtype, backend=t._backend)
        elif g._dtype is not t._dtype:
            g = run_kernel(K.CAST, g, dtype=t._dtype)
        out.append(g)
    return out


def grad(outputs, inputs=None, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False, *, argnums=0):
    """Gradients of ``outputs`` with respect to ``inputs``, returned without touching ``.grad``
    (PyTorch's ``torch.autograd.grad``); or, given a function, the function computing
    its gradient (the TF.js/JAX functional form, w.r.t. argument ``argnums``).
    ``materialize_grads`` gives zeros for unused inputs; ``only_inputs`` is PyTorch's deprecated no-op;
    ``is_grads_batched`` (PyTorch's vmap over ``grad_outputs``) is not supported and raises.

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
    allow_unused = _check_grad_options(only_inputs, allow_unused, is_grads_batched, materialize_grads)
    outputs, inputs = _as_list(outputs), _as_list(inputs)
    edges = []
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("grad: one of the differentiated tensors does not require grad")
        edges.append((t, -1) if t.grad_fn is None else (t.grad_fn, t._out_index))
    capture = dict.fromkeys(edges)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(outputs, _root_grads(outputs, grad_outputs, "grad"), retain_graph, create_graph, capture)
    result = []
    for t, e in zip(inputs, edges):
        g = capture[e]
        if g is None and not allow_unused:
            raise RuntimeError(f"grad: one of the differentiated tensors (shape {tuple(t.shape)}) appears to not "
                               f"have been used in the graph; set allow_unused=True if this is the desired behavior")
        if g is None and materialize_grads:
            g = run_kernel(K.FILL, backend=t._backend, shape=tuple(t.shape), value=0, dtype=t._dtype)
        result.append(g if g is None or create_graph else g._alias_detached())
    return tuple(result)


def _check_grad_options(only_inputs, allow_unused, is_grads_batched, materialize_grads) -> bool:
    """``allow_unused`` as PyTorch settles it (None: ``materialize_grads``), after its checks."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=3)
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched=True (a vmap over grad_outputs) is not supported; call "
                                  "grad once per row of grad_outputs")
    if materialize_grads and allow_unused is False:
        raise ValueError("grad: expected allow_unused to be True or not passed when materialize_grads=True, but "
                         "got: allow_unused=False")
    return materialize_grads if allow_unused is None else bool(allow_unused)


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


def _output_alias(t, outs, originals):
    """What ``save_for_backward(t)`` keeps: the output ``apply`` returns when forward returned ``t``
    itself (found by identity: ``==`` on tensors compares values), else ``t``."""
    return next((alias for alias, o in zip(outs, originals) if o is t), t)


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
        to_save = tuple(_output_alias(t, outs, originals) for t in ctx._to_save)
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


# torch.autograd.gradcheck's names (the checks run autograd.grad above, so they import this module)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402,F401
