"""Nested Python containers of tensors (PyTorch's pytrees): tuples, lists, dicts (and their
subclasses: namedtuples, OrderedDicts) are nodes, everything else is a leaf.

>>> leaves, spec = tree_flatten({"a": (1, 2), "b": [3]})
>>> leaves
[1, 2, 3]
>>> tree_unflatten([x * 10 for x in leaves], spec)
{'a': (10, 20), 'b': [30]}
"""
from __future__ import annotations

LEAF = None   # the spec of a leaf


def tree_flatten(tree) -> tuple:
    """(the leaves in order, a spec that ``tree_unflatten`` rebuilds the tree from)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        keys = list(tree)
        return (type(tree), keys, [_flatten(tree[k], leaves) for k in keys])
    if isinstance(tree, (tuple, list)):
        return (type(tree), None, [_flatten(v, leaves) for v in tree])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec):
    """The tree of ``spec`` holding ``leaves`` (in the order ``tree_flatten`` gave them)."""
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec is LEAF:
        return next(it)
    kind, keys, children = spec
    values = [_unflatten(it, c) for c in children]
    if keys is not None:
        out = kind() if kind is not dict else {}
        out.update(zip(keys, values))
        return out
    if _is_namedtuple_type(kind):
        return kind(*values)
    return kind(values)


def _is_namedtuple_type(kind) -> bool:
    return issubclass(kind, tuple) and hasattr(kind, "_fields")


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf.

    >>> tree_map(lambda v: v + 1, [1, (2, 3)])
    [2, (3, 4)]
    """
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(v) for v in leaves], spec)


def num_leaves(spec) -> int:
    """How many leaves a tree of ``spec`` holds."""
    return 1 if spec is LEAF else sum(num_leaves(c) for c in spec[2])


def describe(spec) -> str:
    """A short text for ``spec`` in error messages, e.g. ``(*, [*, *])``."""
    if spec is LEAF:
        return "*"
    kind, keys, children = spec
    inner = ", ".join((f"{k!r}: " if keys is not None else "") + describe(c) for k, c in zip(keys or children, children))
    return {dict: "{%s}", list: "[%s]"}.get(kind, "(%s)") % inner if kind in (dict, list, tuple) else \
        f"{kind.__name__}({inner})"
