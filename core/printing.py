"""How tensors print: PyTorch's layout (``torch/_tensor_str.py``) and its ``set_printoptions``.

A tensor with more than ``threshold`` elements prints summarised: ``edgeitems`` entries at each
end of every dimension, ``...`` between. One formatter per tensor picks the style PyTorch picks
from the shown values: integers as they are; floats as ``1.`` when all are whole, with
``precision`` decimals otherwise, and in scientific notation when the magnitudes span more than
1000x or leave [1e-4, 1e8] (``sci_mode`` forces either). Rows wrap at ``linewidth``.

Only the shown values leave the backend: a summarised tensor is cut down by indexing first, so
printing a large GPU tensor reads back a few dozen numbers, in one readback.

>>> import webgrad as wg
>>> wg.set_printoptions(threshold=5)
>>> wg.arange(10)
tensor([0, 1, 2,  ..., 7, 8, 9])
>>> wg.set_printoptions(profile="default")
"""
from __future__ import annotations

import math
from contextlib import contextmanager

from . import dtypes


class PrintOptions:
    """The options in force (``get_printoptions()`` gives them as a dict)."""
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision, self.threshold, self.edgeitems, self.linewidth = PROFILES["default"]
        self.sci_mode = None


PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}
PRINT_OPTS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions``: ``precision`` (decimals, 4),
    ``threshold`` (elements above which a tensor is summarised, 1000), ``edgeitems`` (entries
    shown at each end of a summarised dimension, 3), ``linewidth`` (80), ``profile`` (
    ``"default"``, ``"short"`` or ``"full"``, applied first) and ``sci_mode`` (True/False forces
    scientific notation on or off; None, the default, lets each tensor choose). As in PyTorch,
    ``sci_mode`` is set by every call. Unlike PyTorch, an unknown profile is an error.

    >>> import webgrad as wg
    >>> wg.set_printoptions(precision=2)
    >>> wg.tensor([1.12345])
    tensor([1.12])
    >>> wg.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = PROFILES[profile]
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems, "linewidth": linewidth}
    for name, value in given.items():
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The options in force, as keywords for :func:`set_printoptions`.

    >>> get_printoptions()["precision"]
    4
    """
    return {name: getattr(PRINT_OPTS, name) for name in PrintOptions.__slots__}


@contextmanager
def printoptions(**options):
    """Print with ``options`` inside the ``with`` block only.

    >>> import webgrad as wg
    >>> with printoptions(precision=1):
    ...     print(wg.tensor([0.25, 1.5]))
    tensor([0.2, 1.5])
    """
    saved = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------- numbers

class Formatter:
    """One tensor's number style and column width, chosen from the values it shows
    (PyTorch's ``_Formatter``: zeros, NaN and infinities do not take part in the choice).

    >>> Formatter([1.0, 2.5], floating=True).format(1.0)
    '1.0000'
    """

    def __init__(self, values: list, floating: bool):
        self.floating, self.int_mode, self.sci_mode, self.width = floating, True, False, 1
        if not floating:
            self.width = max([1] + [len(str(v)) for v in values])
            return
        shown = [v for v in values if v and math.isfinite(v)]
        if not shown:
            return
        magnitudes = [abs(v) for v in shown]
        low, high = min(magnitudes), max(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in shown)
        auto = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        self.sci_mode = auto if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
        point = 1 if self.int_mode and not self.sci_mode else 0     # the "." after a whole float
        self.width = max([1] + [len(self._text(v)) + point for v in shown])

    def _text(self, v) -> str:
        if self.sci_mode:
            return f"{v:.{PRINT_OPTS.precision}e}"
        if self.int_mode:
            return f"{v:.0f}"
        return f"{v:.{PRINT_OPTS.precision}f}"

    def format(self, v) -> str:
        """``v`` as text, right-aligned to the column width."""
        if not self.floating:
            text = str(v)
        elif self.int_mode and not self.sci_mode:
            text = f"{v:.0f}" + ("." if math.isfinite(v) else "")
        else:
            text = self._text(v)
        return text.rjust(self.width)


class ComplexFormatter:
    """A complex tensor's style: one ``Formatter`` for the real parts and one for the imaginary
    parts, joined as PyTorch joins them (``1.+2.j``, ``0.5000-1.0000j``).

    >>> ComplexFormatter([1 + 2j, 3 - 1j]).format(3 - 1j)
    '3.-1.j'
    """

    def __init__(self, values: list):
        self.real = Formatter([v.real for v in values], floating=True)
        self.imag = Formatter([v.imag for v in values], floating=True)
        self.width = self.real.width + self.imag.width + 1   # (PyTorch's: the "j" counts)

    def format(self, v) -> str:
        imag = (self.imag.format(v.imag) + "j").lstrip()
        return self.real.format(v.real) + (imag if imag[0] in "+-" else "+" + imag)


def formatter(values: list, dtype):
    """The formatter of a tensor of ``dtype`` showing ``values``."""
    return ComplexFormatter(values) if dtype.is_complex else Formatter(values, dtype.is_floating)


# ---------------------------------------------------------------- layout

def summarised(t):
    """``t`` cut to ``edgeitems`` entries at each end of every longer dimension (indexing, no grad)."""
    e, shown = PRINT_OPTS.edgeitems, t.detach()
    for d, n in enumerate(t.shape):
        if n > 2 * e:
            keep = list(range(e)) + list(range(n - e, n))
            shown = shown[(slice(None),) * d + (keep,)]
    return shown


def _flat(values) -> list:
    out, stack = [], [values]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        else:
            out.append(v)
    return out


def _vector(values, n: int, summarise: bool, fmt: Formatter, indent: int) -> str:
    e = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2)))
    if summarise and not e:
        items = ["..."]
    elif summarise and n > 2 * e:
        items = [fmt.format(v) for v in values[:e]] + [" ..."] + [fmt.format(v) for v in values[e:]]
    else:
        items = [fmt.format(v) for v in values]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, shape: tuple, summarise: bool, fmt: Formatter, indent: int) -> str:
    """The bracketed text of ``values`` (the shown values of a tensor of ``shape``)."""
    if not shape:
        return fmt.format(values)
    if len(shape) == 1:
        return _vector(values, shape[0], summarise, fmt, indent)
    rows = [_nested(v, shape[1:], summarise, fmt, indent + 1) for v in values]
    e = PRINT_OPTS.edgeitems
    if summarise and shape[0] > 2 * e:
        rows = rows[:e] + ["..."] + rows[e:]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_text(t, indent: int) -> str:
    """The values part of ``repr(t)`` (PyTorch's ``_tensor_str``), starting at column ``indent``."""
    if t.numel() == 0:
        return "[]"
    summarise = t.numel() > PRINT_OPTS.threshold
    values = (summarised(t) if summarise else t).tolist()
    fmt = formatter(_flat(values), t.dtype)
    return _nested(values, tuple(t.shape), summarise, fmt, indent)


def _suffixes(t) -> list:
    """``device=``, ``size=``, ``dtype=``, ``grad_fn=``/``requires_grad=`` where PyTorch shows them."""
    out = []
    if str(t.device) != "cpu":
        out.append(f"device='{t.device}'")
    dtype = t.dtype
    if t.numel() == 0:
        if t.ndim != 1:
            out.append(f"size={tuple(t.shape)}")
        if dtype != dtypes.default_float:
            out.append(f"dtype={dtype}")
    else:
        if not PRINT_OPTS.edgeitems:
            out.append(f"size={tuple(t.shape)}")
        if dtype not in (dtypes.default_float, dtypes.int64, dtypes.bool_, dtypes.scalar_dtype(1j)):
            out.append(f"dtype={dtype}")
    if t.grad_fn is not None:
        out.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        out.append("requires_grad=True")
    return out


def _join_suffixes(text: str, suffixes: list, indent: int) -> str:
    """``text`` closed by ``, suffix`` items, each on a new line where it would pass ``linewidth``."""
    parts, line = [text], len(text) - text.rfind("\n") + 1      # PyTorch's count, kept for its layout
    for s in suffixes:
        if line + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            line = indent + len(s)
        else:
            parts.append(", " + s)
            line += len(s) + 2
    return "".join(parts) + ")"


def tensor_repr(t) -> str:
    """``repr(t)`` and ``str(t)``: ``tensor([...], device=..., dtype=..., grad_fn=...)`` as PyTorch prints it.

    >>> import webgrad as wg
    >>> tensor_repr(wg.tensor([[1, 2], [30, 4]], dtype=wg.int32))
    'tensor([[ 1,  2],\\n        [30,  4]], dtype=webgrad.int32)'
    """
    prefix = "tensor("
    return _join_suffixes(prefix + tensor_text(t, len(prefix)), _suffixes(t), len(prefix))
