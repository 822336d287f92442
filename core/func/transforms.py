"""PyTorch's function transforms (``torch.func``'s ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``linearize``, ``jacrev``, ``jacfwd``, ``hessian``) on webgrad's reverse-mode engine.

webgrad has no forward-mode AD: ``jvp`` and ``linearize`` use the double-backward trick (as
``torch.autograd.functional.jvp`` does: the vjp ``u -> J^T u`` is linear in ``u``, so its vjp
with a tangent ``t`` is ``J t``), and ``jacfwd`` computes the Jacobian row by row by reverse
mode: the same values, one backward pass per output element.
"""
from __future__ import annotations

import functools

from ..autograd import grad as _autograd_grad
from ..engine import enable_grad
from ..ops.creation import zeros_like
from ..ops.movement import stack
from ..tensor import Tensor
from .levels import grad_enabled, leave, level_input, reaches_outside
from .pytree import describe, tree_flatten, tree_map, tree_unflatten
from .randomness import check_randomness, random_guard


class Level:
    """One transform's call: the tensors standing for its inputs, and whether grad mode was on."""

    def __init__(self, who: str):
        self.who, self.outer, self.inner, self._held = who, grad_enabled(), set(), []

    def enter(self, x) -> Tensor:
        t = level_input(x, self.outer, self.who)
        self.leaf(t)
        return t

    def leaf(self, t: Tensor) -> Tensor:
        """Count ``t`` (a leaf made here) as inside the level."""
        self.inner.add(id(t))
        self._held.append(t)
        return t

    def enter_tree(self, tree):
        """(``tree`` with its tensors entered, the entered tensors, the tree's spec)."""
        leaves, spec = tree_flatten(tree)
        entered = [self.enter(x) for x in leaves]
        return tree_unflatten(entered, spec), entered, spec

    def create_graph(self, tensors) -> bool:
        """Whether the inner pass must be recorded: grad mode was on and ``tensors`` reach outside."""
        return self.outer and reaches_outside(tensors, self.inner)

    def out(self, tree):
        """``tree`` as the transform returns it (see ``levels.leave``)."""
        return tree_map(lambda t: leave(t, self.inner, self.outer), tree)


def grads_or_zeros(outputs, inputs, cotangents=None, create_graph=False, retain_graph=None) -> list:
    """``autograd.grad`` of ``outputs`` (those that require grad) w.r.t. ``inputs``, with zeros for
    the inputs they do not reach."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs)) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    grads = _autograd_grad([o for o, _ in pairs], list(inputs), [c for _, c in pairs], retain_graph=retain_graph,
                           create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


# ---------------------------------------------------------------- argnums and aux


def normalize_argnums(argnums, n: int) -> tuple:
    """``argnums`` (an int or a non-empty tuple of distinct ints, negative from the end) as indices."""
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not all(isinstance(i, int) for i in nums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for i in nums:
        if not -n <= i < n:
            raise RuntimeError(f"Got argnum={i}, but only {n} positional inputs")
    out = tuple(i % n for i in nums)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return out


def split_aux(result, has_aux: bool, who: str) -> tuple:
    """(output, aux) of a function's result (aux None without ``has_aux``)."""
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{who}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return result


def tensors_only(leaves, who: str, what: str = "f(*primals)") -> list:
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{who}: expected {what} to return only tensors, got unsupported type {type(t)}")
    return leaves


class ArgLevel:
    """A call ``f(*args)`` with the arguments ``argnums`` entered into a level."""

    def __init__(self, who: str, args, argnums):
        self.level = Level(who)
        self.nums = normalize_argnums(argnums, len(args))
        self.single = not isinstance(argnums, tuple)
        args = list(args)
        self.specs, self.inputs = [], []
        for i in self.nums:
            args[i], entered, spec = self.level.enter_tree(args[i])
            self.specs.append((len(self.inputs), len(entered), spec))
            self.inputs += entered
        self.args = args

    def per_argnum(self, flat: list):
        """Values, one per entered input (in order), regrouped as the argnums' trees."""
        trees = tuple(tree_unflatten(flat[start:start + count], spec) for start, count, spec in self.specs)
        return trees[0] if self.single else trees


# ---------------------------------------------------------------- grad


def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient w.r.t. its argument(s) ``argnums`` and its value (PyTorch's
    ``torch.func.grad_and_value``): the wrapped call returns ``(grad, value)``, or
    ``(grad, (value, aux))`` with ``has_aux``. ``func`` returns a scalar tensor; an argument may be
    a tree (dict, tuple, list) of tensors, and its gradient is the same tree.

    >>> import webgrad as wg
    >>> g, v = wg.func.grad_and_value(lambda x: (x ** 2).sum())(wg.tensor([1.0, 2.0]))
    >>> g.tolist(), v.item()
    ([2.0, 4.0], 5.0)
    """
    who = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        call = ArgLevel(who, args, argnums)
        with enable_grad():
            output, aux = split_aux(func(*call.args, **kwargs), has_aux, who)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{who}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{who}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = grads_or_zeros([output], call.inputs, create_graph=call.level.create_graph([output]))
        level = call.level
        grads, value = call.per_argnum(level.out(grads)), level.out(output)
        return (grads, (value, level.out(aux))) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The function computing ``func``'s gradient w.r.t. its argument(s) ``argnums`` (PyTorch's
    ``torch.func.grad``); with ``has_aux`` it returns ``(grad, aux)``. Composes with itself, with
    ``vmap`` (per-sample gradients) and with ``backward`` (the result keeps its graph to tensors
    outside that require grad); works under ``no_grad``; leaves every ``.grad`` alone.

    >>> import webgrad as wg
    >>> d2 = wg.func.grad(wg.func.grad(lambda x: x ** 3))
    >>> d2(wg.tensor(2.0)).item()
    12.0
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# ---------------------------------------------------------------- vjp


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (PyTorch's ``torch.func.vjp``): ``vjp_fn(cotangents)``, with
    cotangents shaped as the output tree, returns a tuple with one gradient tree per primal.
    ``vjp_fn`` may be called again (``retain_graph=True`` is its default). With ``has_aux``:
    ``(output, vjp_fn, aux)``.

    >>> import webgrad as wg
    >>> out, vjp_fn = wg.func.vjp(lambda x: x * x, wg.tensor([1.0, 3.0]))
    >>> vjp_fn(wg.ones(2))[0].tolist()
    [2.0, 6.0]
    """
    who = "vjp(f, *primals)"
    level = Level(who)
    entered, specs = [], []
    with enable_grad():
        args = []
        for p in primals:
            tree, leaves, spec = level.enter_tree(p)
            args.append(tree)
            specs.append((len(entered), len(leaves), spec))
            entered += leaves
        output, aux = split_aux(func(*args), has_aux, who)
        outs, out_spec = tree_flatten(output)
        tensors_only(outs, who)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        cots, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {describe(cot_spec)}, primal output: {describe(out_spec)}")
        for i, (c, o) in enumerate(zip(cots, outs)):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(c.shape)} and "
                                   f"output[{i}] has a shape of {tuple(o.shape)}.")
        outer = grad_enabled()
        if create_graph is None:
            create_graph = outer and (reaches_outside(outs, level.inner) or any(c.requires_grad for c in cots))
        with enable_grad():
            grads = grads_or_zeros(outs, entered, cots, create_graph=create_graph, retain_graph=retain_graph)
        grads = [leave(g, level.inner, outer) for g in grads]
        return tuple(tree_unflatten(grads[start:start + n], spec) for start, n, spec in specs)

    result = (level.out(output), vjp_fn)
    return result + (level.out(aux),) if has_aux else result


# ---------------------------------------------------------------- forward mode by the double-backward trick


class Tangents:
    """The Jacobian-vector products of ``outs`` (computed from ``inputs`` inside ``level``) by the
    double-backward trick: ``g(u) = J^T u`` is recorded once with ``u`` a zero leaf; ``apply(t)``
    is the vjp of ``g`` with ``t``, which is ``J t``."""

    def __init__(self, level: Level, inputs, outs):
        self.level, self.outs = level, outs
        self.us = [level.leaf(zeros_like(o, requires_grad=True)) for o in outs]
        with enable_grad():
            gs = grads_or_zeros(outs, inputs, self.us, create_graph=True, retain_graph=True)
        self.pairs = [(g, i) for i, g in enumerate(gs) if g.requires_grad]

    def apply(self, tangents, retain_graph: bool) -> list:
        """``J t`` for each output (``tangents``: one per input)."""
        pairs = self.pairs
        outer = grad_enabled()
        create = outer and (reaches_outside([g for g, _ in pairs], self.level.inner)
                            or any(t.requires_grad for t in tangents))
        with enable_grad():
            outs = grads_or_zeros([g for g, _ in pairs], self.us, [tangents[i] for _, i in pairs],
                                  create_graph=create, retain_graph=retain_graph or create) if pairs else \
                [zeros_like(o) for o in self.outs]
        return [leave(t, self.level.inner, outer) for t in outs]


def _forward(func, primals, level: Level, has_aux: bool, who: str):
    """Run ``func(*primals)`` with the primals' tensors entered: (entered, primals spec, output,
    output leaves, output spec, aux)."""
    leaves, spec = tree_flatten(tuple(primals))
    tensors_only(leaves, who, "primals")
    entered = [level.enter(x) for x in leaves]
    with enable_grad():
        output, aux = split_aux(func(*tree_unflatten(entered, spec)), has_aux, who)
    outs, out_spec = tree_flatten(output)
    tensors_only(outs, who)
    return entered, spec, output, outs, out_spec, aux


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` (PyTorch's ``torch.func.jvp``; with ``has_aux`` also the
    aux). webgrad has no forward-mode AD: the product is computed by the double-backward trick
    (two reverse passes, the values forward mode gives). ``strict`` is accepted, as in PyTorch
    (where it does nothing either).

    >>> import webgrad as wg
    >>> out, jv = wg.func.jvp(lambda x: x ** 2, (wg.tensor([1.0, 3.0]),), (wg.ones(2),))
    >>> jv.tolist()
    [2.0, 6.0]
    """
    who = "jvp(f, primals, tangents)"
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"{who}: Expected {name} to be a tuple. E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if not p_leaves:
        raise RuntimeError(f"{who}: Expected primals to contain at least one Tensor.")
    if p_spec != t_spec:
        raise RuntimeError(f"{who}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{describe(p_spec)} and tangents with structure {describe(t_spec)}")
    _check_tangents(t_leaves, p_leaves, who)
    level = Level(who)
    entered, _, output, outs, out_spec, aux = _forward(func, primals, level, has_aux, who)
    jv = Tangents(level, entered, outs).apply(t_leaves, retain_graph=False)
    result = (level.out(output), tree_unflatten(jv, out_spec))
    return result + (level.out(aux),) if has_aux else result


def _check_tangents(tangents, primals, who: str) -> None:
    for i, (t, p) in enumerate(zip(tangents, primals)):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{who}: expected tangents to be tensors, got {type(t)} at position {i}")
        if tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(f"{who}: tangent:{i} with shape {tuple(t.shape)} in flattened pytree doesn't match "
                               f"the shape {tuple(p.shape)} of the corresponding primal.")


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` (PyTorch's ``torch.func.linearize``): ``jvp_fn(*tangents)``
    gives ``J @ tangents`` at the primals without running ``func`` again (the double-backward
    trick, recorded once).

    >>> import webgrad as wg
    >>> out, jvp_fn = wg.func.linearize(lambda x: x ** 3, wg.tensor([1.0, 2.0]))
    >>> jvp_fn(wg.ones(2)).tolist()
    [3.0, 12.0]
    """
    who = "linearize"
    level = Level(who)
    entered, p_spec, output, outs, out_spec, _ = _forward(func, primals, level, False, who)
    products = Tangents(level, entered, outs)

    def jvp_fn(*tangents):
        t_leaves, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {describe(t_spec)} to have the same argspec as the primals "
                               f"{describe(p_spec)}")
        _check_tangents(t_leaves, entered, who)
        return tree_unflatten(products.apply(t_leaves, retain_graph=True), out_spec)
    return level.out(output), jvp_fn


# ---------------------------------------------------------------- Jacobians


def jacobian_rows(outs, inputs, level: Level) -> list:
    """[[d out_k / d input_j for each input] for each output]: one reverse pass per output
    element, each of shape ``out.shape + input.shape``."""
    create = level.create_graph(outs)
    table = []
    for o in outs:
        flat = o.reshape(-1)
        rows = [grads_or_zeros([flat[e]], inputs, create_graph=create, retain_graph=True) for e in range(flat.numel())]
        table.append([_rows_to_jacobian([r[j] for r in rows], o, x) for j, x in enumerate(inputs)])
    return table


def _rows_to_jacobian(rows, out, x) -> Tensor:
    shape = tuple(out.shape) + tuple(x.shape)
    return stack(rows).reshape(shape) if rows else x.new_zeros(shape)


def _jacobian_transform(func, argnums, has_aux, who):
    def wrapper(*args, **kwargs):
        call = ArgLevel(who, args, argnums)
        with enable_grad():
            output, aux = split_aux(func(*call.args, **kwargs), has_aux, who)
            outs, out_spec = tree_flatten(output)
            tensors_only(outs, "vjp(f, *primals)")
            table = jacobian_rows(outs, call.inputs, call.level)
        jac = tree_unflatten([call.per_argnum(call.level.out(row)) for row in table], out_spec)
        return (jac, call.level.out(aux)) if has_aux else jac
    return functools.wraps(func)(wrapper)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` w.r.t. argument(s) ``argnums`` by reverse mode (PyTorch's
    ``torch.func.jacrev``): for each output tensor, ``out.shape + input.shape``; trees as PyTorch
    nests them (outputs outside, argnums inside). ``chunk_size`` (how many rows PyTorch's vmap
    computes at once) is accepted: rows are computed one at a time here, the same values.

    >>> import webgrad as wg
    >>> wg.func.jacrev(lambda x: x ** 2)(wg.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_transform(func, argnums, has_aux, "jacrev")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` w.r.t. argument(s) ``argnums`` (PyTorch's ``torch.func.jacfwd``):
    the same values and structure as ``jacrev``. webgrad has no forward-mode AD, so it is computed
    by reverse mode (one backward pass per output element). ``randomness`` as ``vmap``'s:
    'error' raises if ``func`` draws from the default generator.

    >>> import webgrad as wg
    >>> wg.func.jacfwd(lambda x: x.sin())(wg.tensor([0.0])).tolist()
    [[1.0]]
    """
    check_randomness(randomness)
    inner = _jacobian_transform(func, argnums, has_aux, "jacfwd")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with random_guard(randomness):
            return inner(*args, **kwargs)
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func`` w.r.t. argument(s) ``argnums`` (PyTorch's ``torch.func.hessian``,
    ``jacfwd(jacrev(func))``; computed as ``jacrev(jacrev(func))`` here, the same values).

    >>> import webgrad as wg
    >>> wg.func.hessian(lambda x: (x ** 3).sum())(wg.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(func, argnums), argnums)
