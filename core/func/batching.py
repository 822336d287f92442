"""``vmap`` (PyTorch's ``torch.func.vmap``, also ``torch.vmap``) without batching rules: the
function runs once per batch element, on the arguments' slices (``select`` along each ``in_dim``,
views, so gradients flow back), and the results are stacked along ``out_dims``. The values are
PyTorch's; the time is a Python loop's (B calls of ``func``), not one batched kernel per op.
"""
from __future__ import annotations

import functools

from ..ops.movement import stack
from ..tensor import Tensor
from .pytree import LEAF, describe, num_leaves, tree_flatten, tree_unflatten
from .randomness import Draws, check_randomness


def _name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def _prefix_dims(prefix, spec):
    """One dim per leaf of a tree of ``spec``, broadcasting the ``prefix`` tree's leaves over
    subtrees; None when the prefix does not match the tree's structure."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * num_leaves(spec)
    if spec is LEAF:
        return None
    kind, keys, children = spec
    if isinstance(prefix, dict) != (keys is not None) or isinstance(prefix, list) != issubclass(kind, list):
        return None
    if keys is not None:
        if set(prefix) != set(keys):
            return None
        parts = [_prefix_dims(prefix[k], c) for k, c in zip(keys, children)]
    else:
        if len(prefix) != len(children):
            return None
        parts = [_prefix_dims(p, c) for p, c in zip(prefix, children)]
    return None if any(p is None for p in parts) else [d for p in parts for d in p]


def _prefix_spec(prefix) -> str:
    return describe(tree_flatten(prefix)[1]) if isinstance(prefix, (tuple, list, dict)) else "*"


def _in_dims(func, in_dims, args, spec) -> list:
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    dims = _prefix_dims(in_dims, spec)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{_prefix_spec(in_dims)} but inputs has structure {describe(spec)}.")
    return dims


def _batch_size(func, in_dims, leaves, dims) -> int:
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension "
                             f"or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                             f"vmap over non-Tensor arguments, please use None as the respective in_dim")
        if not -x.dim() <= d < x.dim():
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{x.dim()} so expected in_dim to satisfy {-x.dim()} <= in_dim < {x.dim()}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"{where}: at least one input must be a Tensor batched along an in_dim (all in_dims are "
                         f"None); vmap needs something to map over")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _element(leaves, dims, b):
    """The arguments' leaves of batch element ``b`` (``b`` None: a zero element, for a batch of 0)."""
    if b is None:
        return [x if d is None else x.new_zeros(tuple(s for i, s in enumerate(x.shape) if i != d % x.dim()))
                for x, d in zip(leaves, dims)]
    return [x if d is None else x.select(d, b) for x, d in zip(leaves, dims)]


def _out_dims(func, out_dims, spec) -> list:
    if not isinstance(out_dims, (int, tuple)) and out_dims is not None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): expected `out_dims` to be int or a tuple "
                         f"of int representing where in the outputs the vmapped dimension should appear, got "
                         f"{type(out_dims)}")
    dims = _prefix_dims(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {_prefix_spec(out_dims)} but outputs "
                         f"has structure {describe(spec)}.")
    return dims


def _stacked(func, results, dims, empty: bool) -> list:
    """Each output leaf's values over the batch, stacked along its out_dim (None: the first's)."""
    out = []
    for k, d in enumerate(dims):
        values = [r[k] for r in results]
        if d is None:
            out.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(values[0])}. Did you mean to set out_dims= to None for output?")
        rank = values[0].dim() + 1
        if not -rank <= d < rank:
            raise IndexError(f"vmap: out_dim {d} is out of range for an output of {rank - 1} dims (expected to be in "
                             f"range of [{-rank}, {rank - 1}], but got {d})")
        joined = stack(values, dim=d)
        out.append(joined.narrow(d, 0, 0) if empty else joined)
    return out


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a batch dimension of its arguments (PyTorch's ``torch.func.vmap``):
    ``in_dims`` names, per argument (an int for all, a tuple with one entry per argument, nested to
    match an argument's tree; None: not mapped), the dim to map over; ``out_dims`` where the batch
    dim goes in each output. Keyword arguments are passed unmapped. ``randomness``: 'error' raises
    if ``func`` draws from the default generator, 'same' gives every element the same draws,
    'different' its own. ``chunk_size`` (how many elements PyTorch batches at once) is accepted.

    webgrad has no batching rules: ``func`` runs once per batch element and the results are
    stacked (PyTorch's values; a loop's speed). Composes with ``grad`` (``vmap(grad(f))``: per-sample
    gradients), with itself and with ``backward``. Unlike PyTorch, ``.item()`` and data-dependent
    Python control flow work inside, and an output with ``out_dims=None`` is the first element's.

    >>> import webgrad as wg
    >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> wg.vmap(lambda row: row.dot(row))(x).tolist()
    [5.0, 25.0]
    >>> wg.vmap(lambda a, b: a * b, in_dims=(1, None))(x, wg.tensor(10.0)).tolist()
    [[10.0, 30.0], [20.0, 40.0]]
    """
    check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                             f"are trying to vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = tree_flatten(args)
        dims = _in_dims(func, in_dims, args, spec)
        size = _batch_size(func, in_dims, leaves, dims)
        draws, results, out_spec = Draws(randomness), [], None
        for b in range(size) if size else (None,):
            draws.start(b or 0)
            output = func(*tree_unflatten(_element(leaves, dims, b), spec), **kwargs)
            draws.check()
            outs, this_spec = tree_flatten(output)
            if out_spec is not None and this_spec != out_spec:
                raise ValueError(f"vmap({_name(func)}): the function returned {describe(this_spec)} for batch element "
                                 f"{b} but {describe(out_spec)} for the first; its outputs must keep one structure")
            out_spec = this_spec
            results.append(outs)
        stacked = _stacked(func, results, _out_dims(func, out_dims, out_spec), empty=not size)
        return tree_unflatten(stacked, out_spec)
    return wrapped
