"""``copy.deepcopy`` of tensors, as PyTorch's: new storage with the same values, views of one storage
copied as views of one new storage, ``requires_grad``, ``.grad`` and a subclass's attributes kept.

A tensor's data lives on a backend object that is shared, never copied: a deep copy clones the data
on the same backend (which is why ``copy.deepcopy(model)`` gives a model that runs where the original did).
"""
from __future__ import annotations

import copy

from .engine import no_grad
from .views import make_view, read_at, root_of

_NOT_A_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
               "the moment; deepcopy {} before it takes part in a graph, or deepcopy its detach()")


def deepcopy_tensor(t, memo: dict):
    """The deep copy of ``t`` for ``copy.deepcopy`` (``memo`` is deepcopy's).

    >>> import copy, webgrad as wg
    >>> w = wg.ones(2, 2, requires_grad=True); row = w.data[0]
    >>> w2, row2 = copy.deepcopy((w, row))
    >>> _ = row2.fill_(5.0); w2.tolist(), w.tolist()
    ([[5.0, 5.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]])
    """
    if id(t) in memo:
        return memo[id(t)]
    if t.grad_fn is not None:
        raise RuntimeError(_NOT_A_LEAF.format("the tensor"))
    root = root_of(t)
    new_root = _copy_storage(root, memo)
    new = new_root if t is root else _view_of(new_root, t)
    new.requires_grad = t.requires_grad
    memo[id(t)] = new
    if t.grad is not None:
        new.grad = copy.deepcopy(t.grad, memo)
    if hasattr(t, "__dict__"):
        new.__dict__.update(copy.deepcopy(t.__dict__, memo))
    return new


def _copy_storage(root, memo: dict):
    """The copy of ``root``'s storage, made once per deepcopy call: a tensor of ``root``'s class
    holding a clone of its data (it becomes ``root``'s own copy if ``root`` is copied too)."""
    key = ("webgrad storage", id(root))
    if key not in memo:
        with no_grad():
            data = root.detach().clone()
        memo[key] = type(root)._wrap(data._data, data._backend)
    return memo[key]


def _view_of(new_root, t):
    """A new tensor of ``t``'s class viewing ``new_root`` at ``t``'s layout."""
    layout = t._view.layout
    with no_grad():
        value = read_at(new_root, layout)
    out = type(t)._wrap(value._data, value._backend)
    return make_view(new_root, out, layout, own_version=t._view.versions is t)


__all__ = ["deepcopy_tensor"]
