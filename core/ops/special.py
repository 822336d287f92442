"""Special functions of ``torch`` and ``torch.Tensor``: the error-function family (``erfc``,
``erfinv``) and their in-place forms. ``webgrad.special`` (``core/special.py``) gathers them with
the rest of ``torch.special``'s names.

Integer and bool input works on a copy in the default float dtype, as in PyTorch.
"""
from __future__ import annotations

from .. import kernel_names as K
from .common import inplace_method
from .unary import _unary

# name: (kernel, summary, example input, example output)
_TABLE = {
    "erfc": (K.ERFC, "The complementary error function ``1 - erf(input)``, accurate where erf nears 1.",
             "[0.0, -3.0]", "[1.0, 1.999977946281433]"),
    "erfinv": (K.ERFINV, "The inverse error function: ``erf(erfinv(y)) == y`` on [-1, 1] (+-inf at +-1, NaN "
                         "beyond).", "[0.0, 1.0]", "[0.0, inf]"),
}

for _name, (_kernel, _summary, _example, _result) in _TABLE.items():
    globals()[_name] = _unary(_name, _kernel, True, _summary, _example, _result)

erfc_ = inplace_method("erfc_", erfc)        # noqa: F821  (made from _TABLE above)
erfinv_ = inplace_method("erfinv_", erfinv)  # noqa: F821

METHODS = {**{name: globals()[name] for name in _TABLE}, "erfc_": erfc_, "erfinv_": erfinv_}

__all__ = list(_TABLE)   # torch.erfc_ and the other torch.* in-place aliases: the shapes session's
