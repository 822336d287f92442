"""``Parameter``: a tensor that a ``Module`` registers as one of its learnable weights."""
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


__all__ = ["Parameter"]
