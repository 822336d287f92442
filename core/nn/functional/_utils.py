"""Argument helpers shared by the functional ops: int-or-pair arguments and loss reductions."""
from __future__ import annotations

import warnings


def ntuple(value, n: int, op: str, name: str) -> tuple:
    """``value`` (an int or a sequence of ``n`` ints) as a tuple of ``n`` ints, or a ValueError naming ``op``.

    >>> ntuple(3, 2, "conv2d", "stride")
    (3, 3)
    """
    out = (value,) * n if isinstance(value, int) else tuple(value)
    if len(out) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise ValueError(f"{op}: {name} must be an int or a sequence of {n} ints, got {value!r}")
    return out


def reduce_loss(loss, reduction: str, op: str):
    """Apply a loss ``reduction`` ('mean', 'sum' or 'none'); an unknown one is a ValueError naming ``op``.

    >>> import webgrad as wg
    >>> reduce_loss(wg.tensor([1.0, 3.0]), "mean", "l1_loss").item()
    2.0
    """
    check_reduction(reduction, op)
    return loss if reduction == "none" else getattr(loss, reduction)()


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """``reduction`` from PyTorch's deprecated ``size_average``/``reduce`` when either is given (with
    PyTorch's warning), else ``reduction`` itself.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     legacy_reduction(False, None, "mean"), legacy_reduction(None, False, "mean")
    ('sum', 'none')
    """
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{out}' instead.",
                  stacklevel=3)
    return out


def check_reduction(reduction, op: str, extra: tuple = ()) -> None:
    """Raise a ValueError naming ``op`` unless ``reduction`` is 'mean', 'sum', 'none' (or one of ``extra``)."""
    allowed = ("mean", "sum", "none") + extra
    if reduction not in allowed:
        raise ValueError(f"{op}: reduction must be one of {', '.join(map(repr, allowed))}; got {reduction!r}")
