"""PyTorch's ``layout`` and ``memory_format`` objects, and the checks of the ``layout=``,
``memory_format=`` and ``pin_memory=`` arguments creation ops take.

webgrad's tensors are all dense and strided (``webgrad.strided``), kept row-major: a memory format
(``channels_last``, ...) is accepted and has no effect, since no result depends on it (``stride()``
stays row-major). ``pin_memory`` is accepted without effect too: uploads to the GPU backends need
no pinned host memory. Sparse layouts do not exist here.

>>> import webgrad as wg
>>> wg.zeros(2, layout=wg.strided, pin_memory=True).tolist()
[0.0, 0.0]
>>> wg.channels_last
webgrad.channels_last
"""
from __future__ import annotations


class layout:
    """A tensor layout, as ``torch.layout``: webgrad has one, ``webgrad.strided``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"webgrad.{self.name}"


class memory_format:
    """A memory format, as ``torch.memory_format``: accepted where PyTorch takes one, without effect."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"webgrad.{self.name}"


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def check_layout(op: str, value) -> None:
    """Accept None or ``webgrad.strided``; anything else (a sparse layout) raises naming ``op``."""
    if value is not None and value is not strided:
        raise NotImplementedError(f"{op}: layout={value!r} is not supported; webgrad tensors are dense "
                                  f"(layout=webgrad.strided)")


def check_memory_format(op: str, value) -> None:
    """Accept None or a ``webgrad`` memory format (no effect); anything else is a TypeError naming ``op``."""
    if value is not None and not isinstance(value, memory_format):
        raise TypeError(f"{op}: memory_format must be a webgrad memory format such as webgrad.contiguous_format, "
                        f"got {value!r}")


def check_factory(op: str, layout=None, pin_memory=False, memory_format=None) -> None:
    """The checks of the arguments that place no data: ``layout``, ``pin_memory`` (a bool, no effect)
    and ``memory_format``."""
    check_layout(op, layout)
    if not isinstance(pin_memory, bool):
        raise TypeError(f"{op}: pin_memory must be a bool, got {type(pin_memory).__name__}")
    check_memory_format(op, memory_format)


__all__ = ["layout", "memory_format", "strided", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format"]
