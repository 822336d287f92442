"""Views: tensors that share storage with a base, as users observe it in PyTorch.

Inside the engine a tensor's data is a value that no op mutates; an in-place op computes its result
out of place and rebinds the tensor to it (``Tensor._assign``). What users see is PyTorch's: views
(``detach()``, ``.data``, ``view``/``reshape`` of contiguous tensors, ``transpose``/``permute``,
slicing, ``narrow``, ``select``, ``split``/``chunk``/``unbind``, ``diagonal``, ``expand``, ...) share
storage with their base, so an in-place change through one is seen through all of them.

A view records its *root* (the tensor holding the storage: views of views point at it too) and its
``Layout`` there (shape, strides, offset, as PyTorch's strided views). The root keeps weak references
to its live views. An in-place change

* of a view writes the view's new elements into the root (``AsStridedScatter``, recorded for autograd
  when the view takes part in it), then
* of the root, or after the above, every other live view reads its elements again from the root
  (``AsStrided``), so all of them see the change.

Views share their root's version counter (``.data`` starts a counter of its own, as in PyTorch), so
autograd's checks of saved tensors hold across them.

A view may also see its root's elements through a *codec* (``view_as_real``, ``view_as_complex``,
``.real``, ``.imag``: another dtype over the same storage): it reads ``codec.decode(elements)`` and
writes ``codec.encode(new, elements)``. Such a view is the root of its own views (their layouts are
in its elements), and a write into it goes on into its own root.
"""
from __future__ import annotations

from weakref import ref

from . import kernel_names as K
from .engine import _mode, bump_version, run_kernel, set_grad_enabled
from .strides import Layout, contiguous, covers_base, is_contiguous, overlaps

_PRUNE_AT = 16   # a root's list of views is cleared of dead ones when it grows past twice its last live count


class ViewInfo:
    """What a view knows of its storage: the root tensor, its layout there, and the tensor whose
    version counter it shares (the root's, or a ``.data`` alias's own)."""

    __slots__ = ("root", "layout", "versions", "codec")

    def __init__(self, root, layout: Layout, versions, codec=None):
        self.root, self.layout, self.versions, self.codec = root, layout, versions, codec


def layout_of(t) -> Layout:
    """``t``'s layout in its root's storage (a root's is row-major, offset 0).

    >>> import webgrad as wg
    >>> layout_of(wg.zeros(2, 3).t())
    Layout(shape=(3, 2), strides=(1, 3), offset=0)
    """
    info = t._view
    return info.layout if info is not None and info.codec is None else contiguous(t._data.shape)


def root_of(t):
    """The tensor holding ``t``'s elements: its root, or ``t`` itself for a root or a codec view."""
    info = t._view
    return info.root if info is not None and info.codec is None else t


def _version_owner(t):
    return t._view.versions if t._view is not None else t


def make_view(base, out, layout: Layout, own_version: bool = False, codec=None):
    """Register ``out`` (a new tensor holding ``base``'s elements at ``layout``, seen through ``codec``
    when given) as a view of ``base``'s storage and return it. ``own_version``: ``out`` starts a
    version counter of its own (``.data``); otherwise it shares ``base``'s."""
    if out is base:
        return out
    root = root_of(base)
    owner = out if own_version else _version_owner(base)
    out._view = ViewInfo(root, layout, owner, codec)
    out._version = 0 if own_version else owner._version
    live = root._views
    if live is None:
        live = root._views = []
    elif len(live) >= _PRUNE_AT and len(live) & (len(live) - 1) == 0:   # at 16, 32, 64, ...: drop the dead
        live[:] = [w for w in live if w() is not None]
    live.append(ref(out))
    return out


def alias(t, *, detached: bool, own_version: bool = False):
    """A new tensor viewing all of ``t``: ``detach()`` (``detached``) and ``.data`` (``own_version`` too)."""
    out = t._alias_detached() if detached else t._alias()
    return make_view(t, out, layout_of(t), own_version)


def live_views(root) -> list:
    views = [w() for w in root._views or ()]
    return [v for v in views if v is not None]


# ---------------------------------------------------------------- writing


_ONE_VALUE_WRITES = {"fill_", "zero_"}   # the elements that share a place get the same value: PyTorch allows them


def write(view, new, op: str) -> None:
    """Make ``view`` hold ``new`` (of its shape and dtype) by writing ``new`` into its root's
    storage; then every view of that root sees it."""
    info = view._view
    root, layout = info.root, info.layout
    new_value = new
    tracked = _mode.enabled and (view.requires_grad or new.requires_grad)
    if tracked and root.requires_grad and root.grad_fn is None:
        raise RuntimeError(f"{op}: a view of a leaf Variable that requires grad is being used in an in-place "
                           f"operation (the base is a leaf; change it under `with webgrad.no_grad():`, or "
                           f"clone() the view first)")
    if overlaps(layout) and op not in _ONE_VALUE_WRITES:
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the written-to tensor refers "
                           f"to a single memory location (a view made by expand); clone() it before writing")
    with set_grad_enabled(tracked):
        if info.codec is not None:
            new = info.codec.encode(new, read_at(root, layout))
        if covers_base(layout, root._data.shape) and (new.requires_grad or not (tracked and root.requires_grad)):
            new_root = run_kernel(K.RESHAPE, new, shape=tuple(root._data.shape))
            # (a value needing no grad over all of a root that needs it goes through the scatter below,
            # so the root keeps requiring grad and its old history gets a zero gradient, as PyTorch's)
        else:
            new_root = run_kernel(K.AS_STRIDED_SCATTER, root, run_kernel(K.RESHAPE, new, shape=layout.shape),
                                  shape=layout.shape, strides=layout.strides, offset=layout.offset)
    if root._view is not None:   # a codec view's own view: the write goes on into the codec view's root
        write(root, new_root, op)
    else:
        _rebind(root, new_root, tracked)
    if not tracked:
        _rebind(view, new_value, False)
    changed(root, writer=view, op=op, skip=None if tracked else view)
    if view._views:   # a codec view is the root of its own views
        changed(view, writer=view, op=op)


def changed(root, writer, op: str, skip=None) -> None:
    """After ``root``'s data changed through ``writer`` (the root itself or one of its views): count
    the change in the version counter ``writer`` shares, and let every live view but ``skip`` read
    its elements again from the root."""
    views = bump_versions(root, writer, op)
    tracked = _mode.enabled and root.requires_grad
    for v in views:
        if v is not skip:
            refresh(v, tracked and (v.requires_grad or v is writer))


def bump_versions(root, writer, op: str) -> list:
    """Count a change through ``writer`` in the version counter it shares (every tensor of ``root``'s
    family on that counter); return ``root``'s live views."""
    owner = _version_owner(writer)
    views = live_views(root) if root._views else []
    for t in (root, *views):
        if _version_owner(t) is owner:
            bump_version(t)
            t._modified_by = op
    return views


def refresh(view, tracked: bool) -> None:
    """Let ``view`` read its elements from its root's current data (recorded when ``tracked``)."""
    info = view._view
    root, layout = info.root, info.layout
    if root._backend is not view._backend:   # the root moved away (Module.to): the view keeps its value
        return detach_view(view)
    with set_grad_enabled(tracked):
        value = read_at(root, layout)
        if info.codec is not None:
            value = info.codec.decode(value)
    _rebind(view, value, tracked)
    if view._views:   # a codec view's own views read from it
        for v in live_views(view):
            refresh(v, tracked and v.requires_grad)


def read_at(root, layout: Layout):
    """``root``'s elements at ``layout``: a reshape where the layout covers the root in order."""
    if covers_base(layout, root._data.shape):
        return run_kernel(K.RESHAPE, root, shape=layout.shape)
    return strided_read(root, layout)


def strided_read(root, layout: Layout):
    """``root``'s elements at ``layout``: one AsStrided, then an Expand where the layout repeats elements."""
    core = layout
    if overlaps(layout):
        core = Layout(tuple(1 if s == 0 else n for n, s in zip(layout.shape, layout.strides)), layout.strides,
                      layout.offset)
    out = run_kernel(K.AS_STRIDED, root, shape=core.shape, strides=core.strides, offset=core.offset)
    return out if core is layout else run_kernel(K.EXPAND, out, shape=layout.shape)


def _rebind(t, value, graph: bool) -> None:
    t._data = value._data
    if graph:
        t.requires_grad, t.grad_fn, t._out_index = value.requires_grad, value.grad_fn, value._out_index


# ---------------------------------------------------------------- leaving a family


def detach_view(view) -> None:
    """Make ``view`` a tensor of its own (it keeps its current value; its root stops updating it)."""
    view._view = None


def set_data(t, value) -> None:
    """``t.data = value``: ``t`` holds ``value``'s data from now on (shape, dtype and backend included),
    as PyTorch's ``.data`` setter swaps the storage; the views of the old storage keep the old values."""
    if t._view is not None:
        root = t._view.root
        detach_view(t)
        if root._views:
            root._views = [w for w in root._views if w() is not t] or None
    for v in live_views(t) if t._views else ():
        detach_view(v)
    t._views = None
    t._data, t._backend, t._dtype = value._data, value._backend, value._dtype


def is_view_contiguous(t) -> bool:
    return t._view is None or is_contiguous(t._view.layout)


__all__ = ["ViewInfo", "layout_of", "root_of", "make_view", "alias", "write", "changed", "bump_versions", "refresh",
           "read_at", "strided_read", "set_data", "detach_view", "is_view_contiguous"]
