"""Complex numbers: ``complex``, ``polar``, ``view_as_real``/``view_as_complex``, ``real``/``imag``,
``conj`` and its kin, ``angle``, ``sgn``; the Tensor properties ``real`` and ``imag``.

complex64/complex128 live on the cpu backend (numpy's); the GPU backends refuse them (TypeError).
``view_as_real``/``view_as_complex``/``real``/``imag`` are views sharing storage with their input, as
PyTorch's (an in-place change through one shows in the other; ``core/views.py``'s codec views); unlike
PyTorch's, their ``stride()`` counts their own elements. ``conj`` copies (PyTorch sets a lazy conjugate
bit, so ``is_conj`` is always False here).

>>> import webgrad as wg
>>> z = wg.polar(wg.tensor([2.0]), wg.tensor([0.0]))
>>> z, wg.view_as_real(z * 1j).tolist()
(tensor([2.+0.j]), [[0.0, 2.0]])
"""
from __future__ import annotations

import functools
import math

from .. import kernel_names as K
from ..dtypes import float16, float32, float64
from ..engine import run_kernel
from ..node_names import labelled
from ..tensor import Tensor
from ..views import layout_of, make_view
from . import binary, movement
from .common import check_tensor, inplace_method

_PARTS = (float32, float64)   # the parts webgrad's complex dtypes hold (PyTorch's complex32 of float16: none)


def _parts(op: str, a, b, names: tuple) -> None:
    """Refuse what PyTorch refuses for the two real parts of ``op``: non-tensors, non-float or unlike dtypes."""
    check_tensor(op, a, names[0])
    check_tensor(op, b, names[1])
    if a._dtype not in _PARTS or b._dtype not in _PARTS:
        half = " (webgrad has no complex32 for float16 parts)" if float16 in (a._dtype, b._dtype) else ""
        raise RuntimeError(f"{op}: expected both inputs to be float32 or float64 tensors but got "
                           f"{a._dtype.name} and {b._dtype.name}{half}")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"{op}: expected object of scalar type {a._dtype.name} but got scalar type "
                           f"{b._dtype.name} for argument '{names[1]}'")


def complex(real, imag) -> Tensor:  # noqa: A001  (torch.complex)
    """The complex tensor ``real + 1j * imag`` (broadcasting; float32 parts give complex64, float64 complex128).

    >>> import webgrad as wg
    >>> wg.complex(wg.tensor([1.0, 0.0]), wg.tensor([2.0, -1.0]))
    tensor([1.+2.j, 0.-1.j])
    """
    _parts("complex", real, imag, ("real", "imag"))
    return run_kernel(K.COMPLEX, real, imag)


def polar(abs, angle) -> Tensor:  # noqa: A002  (PyTorch's argument names)
    """The complex tensor ``abs * (cos(angle) + 1j * sin(angle))``, as ``torch.polar``.

    >>> import webgrad as wg
    >>> wg.polar(wg.tensor([1.0]), wg.tensor([math.pi / 2])).imag.tolist()
    [1.0]
    """
    _parts("polar", abs, angle, ("abs", "angle"))
    return labelled(run_kernel(K.COMPLEX, abs * angle.cos(), abs * angle.sin()), "PolarBackward0")


# op -> numpy's name of the complex function the ComplexMath kernel computes for it (the real input's op
# is a composition of real kernels; a complex one takes numpy's accurate complex function on cpu)
COMPLEX_FUNCTIONS = {"sinh": "sinh", "cosh": "cosh", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
                     "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "exp2": "exp2", "sinc": "sinc"}


def complex_math(op):
    """Decorate the real-valued ``op``: complex input runs the ComplexMath kernel for ``op``'s name.

    >>> import webgrad as wg
    >>> wg.asin(wg.tensor([2 + 0j])).tolist()[0].real
    1.5707963705062866
    """
    fn = COMPLEX_FUNCTIONS[op.__name__]

    @functools.wraps(op)
    def on_any(input):
        if isinstance(input, Tensor) and input._dtype.is_complex:   # (a Parameter too)
            return run_kernel(K.COMPLEX_MATH, input, fn=fn)
        return op(input)
    return on_any


def _complex_only(op: str, input) -> Tensor:
    check_tensor(op, input)
    if not input._dtype.is_complex:
        raise RuntimeError(f"{op}: is only supported for complex tensors, got {input._dtype.name}")
    return input


def _as_real(z) -> Tensor:
    return movement.stack([run_kernel(K.REAL, z), run_kernel(K.IMAG, z)], -1)


def _as_complex(x) -> Tensor:
    return run_kernel(K.COMPLEX, *movement.unbind(x, -1))


class _Codec:
    """How a view sees its root's elements (``core/views.py``): ``decode(elements)`` is the view's
    value; ``encode(new, elements)`` the elements that give the view the value ``new``."""

    def __init__(self, decode, encode):
        self.decode, self.encode = decode, encode


_AS_REAL = _Codec(_as_real, lambda new, z: _as_complex(new))
_AS_COMPLEX = _Codec(_as_complex, lambda new, x: _as_real(new))
_REAL = _Codec(lambda z: run_kernel(K.REAL, z), lambda new, z: run_kernel(K.COMPLEX, new, run_kernel(K.IMAG, z)))
_IMAG = _Codec(lambda z: run_kernel(K.IMAG, z), lambda new, z: run_kernel(K.COMPLEX, run_kernel(K.REAL, z), new))


def _view(input, codec: _Codec, label: str) -> Tensor:
    """``codec``'s view of ``input``, sharing its storage; its node named ``label`` (PyTorch's)."""
    return make_view(input, labelled(codec.decode(input), label), layout_of(input), codec=codec)


def view_as_real(input) -> Tensor:
    """A complex tensor as real pairs: shape ``[..., 2]`` holding (real, imag), as ``torch.view_as_real``:
    a view, sharing storage with ``input``.

    >>> import webgrad as wg
    >>> z = wg.tensor([1 + 2j, 3j])
    >>> r = wg.view_as_real(z); r.tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    >>> _ = r.mul_(2); z
    tensor([2.+4.j, 0.+6.j])
    """
    return _view(_complex_only("view_as_real", input), _AS_REAL, "ViewAsRealBackward0")


def view_as_complex(input) -> Tensor:
    """Real pairs (a float32 or float64 tensor whose last dim has size 2) as a complex tensor of
    the other dims, as ``torch.view_as_complex``: a view, sharing storage with ``input``.

    >>> import webgrad as wg
    >>> wg.view_as_complex(wg.tensor([[1.0, 2.0], [0.0, 3.0]]))
    tensor([1.+2.j, 0.+3.j])
    """
    check_tensor("view_as_complex", input)
    if input._dtype not in _PARTS:
        raise RuntimeError(f"view_as_complex: is only supported for float32 and float64 tensors, but got a tensor "
                           f"of dtype {input._dtype.name}")
    if not input.ndim or input.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: tensor must have a last dimension of size 2, got shape "
                           f"{tuple(input.shape)}")
    return _view(input, _AS_COMPLEX, "ViewAsComplexBackward0")


def real(input) -> Tensor:
    """The real part of a complex tensor (a view sharing its storage; a real tensor itself), as ``torch.real``.

    >>> import webgrad as wg
    >>> wg.real(wg.tensor([1 + 2j])).tolist()
    [1.0]
    """
    check_tensor("real", input)
    return _view(input, _REAL, "SelectBackward0") if input._dtype.is_complex else input   # (PyTorch's: a select
                                                                                            # of view_as_real)


def imag(input) -> Tensor:
    """The imaginary part of a complex tensor (a view sharing its storage), as ``torch.imag`` (a real
    tensor raises RuntimeError).

    >>> import webgrad as wg
    >>> wg.imag(wg.tensor([1 + 2j])).tolist()
    [2.0]
    """
    check_tensor("imag", input)
    if not input._dtype.is_complex:
        raise RuntimeError(f"imag: is not implemented for tensors with non-complex dtypes (got {input._dtype.name})")
    return _view(input, _IMAG, "SelectBackward0")


def conj(input) -> Tensor:
    """The complex conjugate (a real tensor itself), as ``torch.conj``; a copy here where PyTorch sets
    a lazy conjugate bit.

    >>> import webgrad as wg
    >>> wg.conj(wg.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    check_tensor("conj", input)
    return run_kernel(K.CONJ, input) if input._dtype.is_complex else input


def conj_physical(input) -> Tensor:
    """The complex conjugate, computed (a copy of a real tensor), as ``torch.conj_physical``.

    >>> import webgrad as wg
    >>> wg.conj_physical(wg.tensor([1j])).tolist()
    [-1j]
    """
    check_tensor("conj_physical", input)
    return labelled(run_kernel(K.CONJ if input._dtype.is_complex else K.IDENTITY, input), "ConjPhysicalBackward0")


def resolve_conj(input) -> Tensor:
    """``input`` itself: webgrad's ``conj`` computes at once, so no tensor carries a conjugate bit to resolve.

    >>> import webgrad as wg
    >>> z = wg.tensor([1j]); wg.resolve_conj(z) is z
    True
    """
    return check_tensor("resolve_conj", input)


def is_conj(input) -> bool:
    """False: webgrad's ``conj`` computes at once (PyTorch's sets a lazy bit that this reports).

    >>> import webgrad as wg
    >>> wg.is_conj(wg.tensor([1j]).conj())
    False
    """
    check_tensor("is_conj", input)
    return False


def conj_physical_(input) -> Tensor:
    """In-place ``conj_physical``: writes the conjugate into ``input`` and returns it.

    >>> import webgrad as wg
    >>> z = wg.tensor([1j]); _ = wg.conj_physical_(z); z.tolist()
    [-1j]
    """
    return METHODS["conj_physical_"](input)


def angle(input) -> Tensor:
    """The argument of each element in radians, as ``torch.angle``: ``atan2(imag, real)`` for complex
    input; pi for negative real numbers, 0 otherwise (NaN stays NaN; integers give float32).

    >>> import webgrad as wg
    >>> wg.angle(wg.tensor([1j, -1.0 + 0j])).tolist()
    [1.5707963705062866, 3.1415927410125732]
    """
    check_tensor("angle", input)
    if input._dtype.is_complex:
        return labelled(binary.atan2(_IMAG.decode(input), _REAL.decode(input)), "AngleBackward0")
    x = input if input._dtype.is_floating else input.float()
    return labelled(binary.where(x != x, x, binary.where(x < 0, math.pi, 0.0).to(x._dtype)), "AngleBackward0")


def sgn(input) -> Tensor:
    """``input / abs(input)`` (0 at 0) for complex input, ``sign(input)`` for real, as ``torch.sgn``.

    >>> import webgrad as wg
    >>> wg.sgn(wg.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    check_tensor("sgn", input)
    if not input._dtype.is_complex:
        return run_kernel(K.SIGN, input)
    size = run_kernel(K.ABS, input)
    zero = size == 0
    return labelled(binary.where(zero, 0.0, input / binary.where(zero, 1.0, size)), "SgnBackward0")


def _setter(part):
    """``t.real = value``: ``value`` copied into the part (PyTorch's setter)."""
    def set_part(self, value):
        part(self).copy_(value)
    return set_part


METHODS = {
    "real": property(real, _setter(real), doc="The real part (``torch.Tensor.real``), a view; assignable."),
    "imag": property(imag, _setter(imag), doc="The imaginary part (``torch.Tensor.imag``), a view; assignable."),
    "conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj, "is_conj": is_conj,
    "angle": angle, "sgn": sgn, "conj_physical_": inplace_method("conj_physical_", conj_physical),
}

__all__ = ["complex", "polar", "view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical",
           "resolve_conj", "is_conj", "conj_physical_", "angle", "sgn"]
