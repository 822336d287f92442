"""Containers of parameters: ParameterList and ParameterDict (the parent module sees their
parameters, and ``state_dict`` names them by position or key, as PyTorch's)."""
from __future__ import annotations

from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter
from .container import _index


def _as_parameter(value):
    """Tensors become Parameters (as PyTorch's containers make them); Parameters stay themselves."""
    return value if isinstance(value, Parameter) or not isinstance(value, Tensor) else Parameter(value)


class ParameterList(Module):
    """A list of parameters whose parent module sees them.

    >>> import webgrad as wg
    >>> ps = ParameterList([wg.nn.Parameter(wg.ones(2)) for _ in range(3)])
    >>> len(list(ps.parameters())), list(ps.state_dict())
    (3, ['0', '1', '2'])
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self._parameters.values())[idx])
        return self._parameters[str(_index(idx, len(self), "ParameterList"))]

    def __setitem__(self, idx, param):
        self.register_parameter(str(_index(idx, len(self), "ParameterList")), _as_parameter(param))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value) -> "ParameterList":
        """Add ``value`` (a tensor becomes a Parameter) at the end."""
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values) -> "ParameterList":
        """Add each of ``values`` at the end."""
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({i}): Parameter containing: [{p.dtype} of size {_size(p)}]" for i, p in enumerate(self))


def _size(p) -> str:
    """A parameter's shape as PyTorch's parameter containers print it: ``2x3``."""
    return "x".join(str(n) for n in p.shape)


class ParameterDict(Module):
    """A dict of parameters whose parent module sees them.

    >>> import webgrad as wg
    >>> d = ParameterDict({"scale": wg.nn.Parameter(wg.ones(1))})
    >>> list(d.keys()), "scale" in d
    (['scale'], True)
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        """Remove and return the parameter ``key``."""
        return self._parameters.pop(key)

    def update(self, parameters) -> None:
        """Add (name, parameter) pairs from a dict or an iterable of pairs."""
        for name, p in (parameters.items() if hasattr(parameters, "items") else parameters):
            self[name] = p

    def extra_repr(self):
        return "\n".join(f"  ({k}): Parameter containing: [{p.type()} of size {_size(p)}]" for k, p in self.items())


__all__ = ["ParameterList", "ParameterDict"]
