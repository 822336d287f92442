"""Containers: Sequential, ModuleList, ModuleDict (and the deprecated Container)."""
from __future__ import annotations

import warnings
from collections import OrderedDict

from ..module import Module


class Sequential(Module):
    """Modules applied in order; built from modules or an OrderedDict of named ones.

    >>> import webgrad as wg
    >>> net = Sequential(wg.nn.Linear(4, 8), wg.nn.ReLU(), wg.nn.Linear(8, 2))
    >>> net(wg.ones(3, 4)).shape, len(net), type(net[1]).__name__
    (webgrad.Size([3, 2]), 3, 'ReLU')
    """

    def __init__(self, *args):
        super().__init__()
        items = args[0].items() if len(args) == 1 and isinstance(args[0], OrderedDict) else \
            ((str(i), m) for i, m in enumerate(args))
        for name, m in items:
            self.add_module(name, m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        self.add_module(list(self._modules)[_index(idx, len(self), "Sequential")], module)

    def __delitem__(self, idx):
        names = list(self._modules)
        for name in (names[idx] if isinstance(idx, slice) else [names[_index(idx, len(self), "Sequential")]]):
            del self._modules[name]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module) -> "Sequential":
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters the parent sees.

    >>> import webgrad as wg
    >>> layers = ModuleList([wg.nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module) -> "ModuleList":
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> "ModuleList":
        """Add each of ``modules`` at the end."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module) -> None:
        """Insert ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        self.extend(items)


class ModuleDict(Module):
    """A dict of modules whose parameters the parent sees.

    >>> import webgrad as wg
    >>> d = ModuleDict({"enc": wg.nn.Linear(2, 3)})
    >>> list(d.keys()), d["enc"].out_features
    (['enc'], 3)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules) -> None:
        """Add (name, module) pairs from a dict or an iterable of pairs."""
        for name, m in (modules.items() if hasattr(modules, "items") else modules):
            self.add_module(name, m)


class Container(Module):
    """Deprecated (PyTorch's ``nn.Container``; a FutureWarning says so): a Module whose keyword
    arguments become its children. Subclass ``Module`` instead.

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); c = Container(fc=wg.nn.Linear(1, 1))
    >>> list(c.state_dict())
    ['fc.weight', 'fc.bias']
    """

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


def _index(idx, n, what):
    if not -n <= idx < n:
        raise IndexError(f"{what}: index {idx} is out of range for {n} modules")
    return idx % n


__all__ = ["Sequential", "ModuleList", "ModuleDict", "Container"]
