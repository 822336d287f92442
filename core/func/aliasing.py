"""``functionalize`` and ``debug_unwrap``: PyTorch's transforms about how tensors are held, with
their observable meaning on webgrad's eager tensors.

PyTorch's ``functionalize`` rewrites a program without in-place ops (and, with
``remove='mutations_and_views'``, without views) for its compilers; what a caller sees is the same
values, the inputs' mutations applied back to them, and outputs that do not alias a mutated input
(nor, with 'mutations_and_views', any input through a view). That is what this one gives: ``func``
runs as it is, and an output sharing storage with such an input is returned as a copy.
"""
from __future__ import annotations

import functools

from ..tensor import Tensor
from ..views import root_of
from .pytree import tree_flatten, tree_map

_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """``func`` with PyTorch's ``torch.func.functionalize`` semantics (see the module's text):
    the same values and input mutations; an output that aliases an input mutated inside
    ``func`` (or, with ``remove='mutations_and_views'``, a view of any input) is a fresh copy.

    >>> import webgrad as wg
    >>> def f(a):
    ...     a.add_(1)
    ...     return a
    >>> x = wg.zeros(2)
    >>> y = wg.func.functionalize(f)(x)
    >>> _ = y.add_(5); x.tolist(), y.tolist()
    ([1.0, 1.0], [6.0, 6.0])
    """
    if remove not in _REMOVE:
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           f"Valid options are 'mutations' (in-place and out= operators replaced by their "
                           f"out-of-place equivalents) and 'mutations_and_views' (views replaced too)")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)]
        versions = [t._version for t in inputs]
        out = func(*args, **kwargs)
        by_root = {}
        for t, v in zip(inputs, versions):
            by_root.setdefault(id(root_of(t)), []).append((t, t._version != v))

        def unaliased(o):
            if not isinstance(o, Tensor):
                return o
            sharing = by_root.get(id(root_of(o)), ())
            mutated = any(changed for _, changed in sharing)
            viewed = remove == "mutations_and_views" and any(o is not t for t, _ in sharing)
            return o.clone() if sharing and (mutated or viewed) else o
        return tree_map(unaliased, out)
    return wrapped


def debug_unwrap(tensor, *, recurse=True):
    """``tensor`` itself: PyTorch's ``torch.func.debug_unwrap`` takes the functorch wrappers off
    a tensor seen inside a transform; webgrad's transforms do not wrap tensors.

    >>> import webgrad as wg
    >>> x = wg.ones(2); wg.func.debug_unwrap(x) is x
    True
    """
    return tensor
