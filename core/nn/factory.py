"""PyTorch's ``torch.nn.factory_kwargs``: the keyword arguments a layer passes on to its tensor
factories."""
from __future__ import annotations

_SIMPLE = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs):
    """``device``/``dtype``/``memory_format`` from ``kwargs``, merged with its ``factory_kwargs`` dict
    (a key given both ways raises TypeError, as does any other key).

    >>> factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": None}})
    {'dtype': None, 'device': 'cpu'}
    """
    if kwargs is None:
        return {}
    unexpected = set(kwargs) - _SIMPLE - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"factory_kwargs: unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in sorted(_SIMPLE & set(kwargs)):
        if key in out:
            raise TypeError(f"factory_kwargs: {key} specified twice, in **kwargs and in factory_kwargs")
        out[key] = kwargs[key]
    return out


__all__ = ["factory_kwargs"]
