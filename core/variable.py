"""``Variable``: PyTorch's pre-0.4 wrapper, kept as PyTorch 2 keeps it for old scripts.
``Variable(t, requires_grad=...)`` gives a leaf tensor sharing ``t``'s data (``t.detach()``) with
``requires_grad`` set, and every tensor is an instance of ``Variable``."""
from __future__ import annotations

import warnings

from .ops.creation import empty
from .tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a leaf tensor sharing ``tensor``'s data, as in
    PyTorch (where Variable and Tensor merged in 0.4); ``volatile`` is accepted with PyTorch's warning.

    >>> import webgrad as wg
    >>> from webgrad.autograd import Variable
    >>> x = Variable(wg.ones(2), requires_grad=True)
    >>> x.requires_grad, x.is_leaf, isinstance(x, Variable)
    (True, True, True)
    """
