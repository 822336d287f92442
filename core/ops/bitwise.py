"""Bitwise ops on integer and bool tensors, as PyTorch's: ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``
(reflected and in-place forms too), ``bitwise_and/or/xor/not/left_shift/right_shift`` and their
``Tensor`` methods with ``_`` in-place forms. Operands promote as in arithmetic; a floating result
dtype is refused with PyTorch's ``NotImplementedError`` (a RuntimeError), bool is refused by the
shifts. Shifts are PyTorch's: ``<<`` gives 0 for a shift outside ``[0, bit width)``, ``>>`` is
arithmetic and fills with the sign there. On the GPU backends int64 is held in 32 bits, so a value
shifted out of 32 bits is lost there (as any int64 overflow of 32 bits is)."""
from __future__ import annotations

from .. import kernel_names as K
from ..dtypes import bool_
from ..engine import run_kernel
from ..shapes import broadcast_shapes
from ..tensor import Tensor
from .binary import inplace
from .common import binary_operands, check_tensor


def _integer(op: str, x: Tensor, shift: bool = False) -> Tensor:
    """``x`` when ``op`` takes its dtype: integer, or bool for all but the shifts (PyTorch's
    NotImplementedError otherwise)."""
    if x._dtype.is_floating or (shift and x._dtype is bool_):
        wanted = "integer tensors" if shift else "integer and bool tensors"
        raise NotImplementedError(f"{op}: not implemented for {x._dtype.name} operands (it takes {wanted})")
    return x


def _binary(kernel: str, op: str, doc: str):
    shift = kernel in (K.LEFT_SHIFT, K.RIGHT_SHIFT)

    def fn(input, other):
        a, b = binary_operands(op, input, other)
        _integer(op, a, shift)
        if a._data.shape != b._data.shape:
            broadcast_shapes(a.shape, b.shape, op=op)
        return run_kernel(kernel, a, b)
    fn.__name__, fn.__qualname__, fn.__doc__ = op, op, doc
    return fn


bitwise_and = _binary(K.BITWISE_AND, "bitwise_and", """Elementwise AND of the bits of integer or bool tensors
    (``input & other``), broadcasting; either side may be a Python int.

    >>> import webgrad as wg
    >>> wg.bitwise_and(wg.tensor([12, -3]), wg.tensor([10, 6])).tolist()
    [8, 4]
    """)
bitwise_or = _binary(K.BITWISE_OR, "bitwise_or", """Elementwise OR of the bits of integer or bool tensors
    (``input | other``), broadcasting.

    >>> import webgrad as wg
    >>> (wg.tensor([12, -3]) | 1).tolist()
    [13, -3]
    """)
bitwise_xor = _binary(K.BITWISE_XOR, "bitwise_xor", """Elementwise XOR of the bits of integer or bool tensors
    (``input ^ other``), broadcasting.

    >>> import webgrad as wg
    >>> (wg.tensor([True, False]) ^ wg.tensor([True, True])).tolist()
    [False, True]
    """)
bitwise_left_shift = _binary(K.LEFT_SHIFT, "bitwise_left_shift", """``input << other`` on integer tensors: 0
    where ``other`` is negative or not below the bit width, as PyTorch's.

    >>> import webgrad as wg
    >>> (wg.tensor([3, -3]) << wg.tensor([2, 70])).tolist()
    [12, 0]
    """)
bitwise_right_shift = _binary(K.RIGHT_SHIFT, "bitwise_right_shift", """``input >> other`` on integer tensors,
    arithmetic (the sign fills in; a shift outside ``[0, bit width)`` leaves only the sign), as PyTorch's.

    >>> import webgrad as wg
    >>> (wg.tensor([-8, 8]) >> 1).tolist(), (wg.tensor([-8, 8]) >> 99).tolist()
    ([-4, 4], [-1, 0])
    """)


def bitwise_not(input):
    """Elementwise NOT of the bits of an integer tensor (``~input``); ``not`` on a bool tensor.

    >>> import webgrad as wg
    >>> wg.bitwise_not(wg.tensor([0, 5, -1])).tolist(), (~wg.tensor([True, False])).tolist()
    ([-1, -6, 0], [False, True])
    """
    return run_kernel(K.BITWISE_NOT, _integer("bitwise_not", check_tensor("bitwise_not", input, "input")))


def _invert(self):
    """``~self``: PyTorch refuses a floating tensor with a TypeError here (bitwise_not's is NotImplementedError)."""
    if self._dtype.is_floating:
        raise TypeError(f"~ (operator.invert): only integer and bool tensors are taken, got {self._dtype.name}")
    return bitwise_not(self)


def _in_place(name: str, fn):
    def method(self, other):
        return inplace(self, name, fn, other)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""In-place ``{fn.__name__}``: the result is written into this tensor (cast back to its dtype).

    >>> import webgrad as wg
    >>> wg.tensor([6, 3]).{name}(wg.tensor([3, 1])).dtype
    webgrad.int64
    """
    return method


def bitwise_not_(self):
    """In-place ``bitwise_not``.

    >>> import webgrad as wg
    >>> wg.tensor([0, 5]).bitwise_not_().tolist()
    [-1, -6]
    """
    return inplace(self, "bitwise_not_", bitwise_not)


def _reflected(fn):
    return lambda self, other: fn(other, self)


_FUNCTIONS = {"and": bitwise_and, "or": bitwise_or, "xor": bitwise_xor, "lshift": bitwise_left_shift,
              "rshift": bitwise_right_shift}
_NAMED = {fn.__name__: fn for fn in _FUNCTIONS.values()}

METHODS = {
    **_NAMED, **{f"{name}_": _in_place(f"{name}_", fn) for name, fn in _NAMED.items()},
    **{f"__{short}__": fn for short, fn in _FUNCTIONS.items()},
    **{f"__r{short}__": _reflected(fn) for short, fn in _FUNCTIONS.items()},
    **{f"__i{short}__": _in_place(f"__i{short}__", fn) for short, fn in _FUNCTIONS.items()},
    "bitwise_not": bitwise_not, "bitwise_not_": bitwise_not_, "__invert__": _invert,
}

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift"]
