"""``Parameter``: a tensor that a ``Module`` registers as one of its learnable weights; ``Buffer``:
one it registers as a buffer; the lazy modules' ``UninitializedParameter``/``UninitializedBuffer``."""
from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and that ``Module`` attributes register.

    >>> import webgrad as wg
    >>> p = wg.nn.Parameter(wg.zeros(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            from ..tensor import tensor
            data = tensor(data)
        p = cls._wrap(data._data, data._backend)
        return p.requires_grad_(requires_grad) if requires_grad else p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __deepcopy__(self, memo: dict) -> "Parameter":
        """As PyTorch's: a Parameter over a clone of the data, with ``requires_grad``; no ``.grad``."""
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.data.clone(), self.requires_grad)
        return memo[id(self)]

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """A tensor that, assigned as a ``Module`` attribute, registers as a buffer (``persistent``: in
    ``state_dict``), as PyTorch 2.5's ``nn.Buffer``. It holds ``data``'s values (as ``Parameter``
    does) and keeps its ``requires_grad``. (PyTorch's ``Buffer(...)`` gives a plain Tensor marked as a buffer; webgrad's
    is a Tensor subclass, and every op on it gives a plain Tensor.)

    >>> import webgrad as wg
    >>> m = wg.nn.Module(); m.steps = Buffer(wg.zeros(1)); m.tmp = Buffer(wg.ones(1), persistent=False)
    >>> list(m.state_dict()), [n for n, _ in m.named_buffers()]
    (['steps'], ['steps', 'tmp'])
    """

    __slots__ = ("persistent",)

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            from ..tensor import tensor
            data = tensor(data)
        b = cls._wrap(data._data, data._backend)
        b.persistent = persistent
        return b.requires_grad_(True) if data.requires_grad else b

    def __init__(self, data=None, *, persistent=True):
        pass


class UninitializedTensorMixin:
    """A lazy module's tensor whose shape is not known yet; ``materialize(shape)`` gives it storage
    and turns it into its ``cls_to_become``."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give this tensor ``shape`` (uninitialized values) and make it a ``cls_to_become``."""
        from ..ops.creation import empty
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = empty(*shape, device=self.device if device is None else device,
                          dtype=self.dtype if dtype is None else dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module before its first input tells its shape; it becomes a
    ``Parameter`` (the same object, so an optimizer built before keeps it) on ``materialize``.

    >>> p = UninitializedParameter(); p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', webgrad.Size([2, 3]))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ..ops.creation import empty
        return super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer of a lazy module before its first input tells its shape; it becomes a ``Buffer``
    on ``materialize``.

    >>> b = UninitializedBuffer(); b.materialize(4)
    >>> type(b).__name__, b.shape, b.requires_grad
    ('Buffer', webgrad.Size([4]), False)
    """

    __slots__ = ()
    cls_to_become = Buffer

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ..ops.creation import empty
        b = super().__new__(cls, empty(0, device=device, dtype=dtype), persistent=persistent)
        return b.requires_grad_(True) if requires_grad else b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]
