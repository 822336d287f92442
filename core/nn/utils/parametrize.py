"""Parametrizations (PyTorch's ``torch.nn.utils.parametrize``): a tensor of a module computed on
each access from an ``original`` one by a chain of modules.

``register_parametrization`` moves the parameter (or buffer) to
``module.parametrizations[name].original`` and gives the module a subclass,
``Parametrized<Class>``, with a property ``name`` that runs the chain; assigning to it runs the
chain's ``right_inverse``. ``cached()`` computes each parametrized tensor once inside its block.

>>> import webgrad as wg
>>> class Symmetric(wg.nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(-1, -2)
>>> m = register_parametrization(wg.nn.Linear(3, 3), "weight", Symmetric())
>>> type(m).__name__, bool((m.weight == m.weight.T).all())
('ParametrizedLinear', True)
"""
from __future__ import annotations

import contextlib
import copy

from ...engine import no_grad
from ...tensor import Tensor
from ..layers.container import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

_cache_depth = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside this block each parametrized tensor is computed once, on its first access.

    >>> import webgrad as wg
    >>> m = register_parametrization(wg.nn.Linear(2, 2), "weight", wg.nn.Identity())
    >>> with cached():
    ...     m.weight is m.weight
    True
    """
    global _cache_depth, _cache
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _register_tensor(module, name, value):
    (module.register_parameter if isinstance(value, Parameter) else module.register_buffer)(name, value)


def _check_like(op, what, value, original):
    if not isinstance(value, Tensor):
        raise ValueError(f"{op}: {what} must return a tensor, got {type(value).__name__}")
    if value.dtype != original.dtype:
        raise ValueError(f"{op}: {what} may not change the dtype of the tensor, unless the `unsafe` flag is enabled "
                         f"(unparametrized dtype: {original.dtype}, got {value.dtype})")
    if value.shape != original.shape:
        raise ValueError(f"{op}: {what} may not change the shape of the tensor, unless the `unsafe` flag is enabled "
                         f"(unparametrized shape: {original.shape}, got {value.shape})")


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding the unparametrized tensor as
    ``original`` (or ``original0``, ``original1``, ... when the first ``right_inverse`` returns a
    sequence). Calling it computes the parametrized tensor."""

    def __init__(self, modules, original, unsafe: bool = False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe:
                _check_like("register_parametrization", "right_inverse", new, original)
            with no_grad():
                original.data = new.detach()
            _register_tensor(self, "original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError(f"register_parametrization: right_inverse must return a Tensor or a sequence "
                                     f"of tensors, got an element of type {type(value).__name__}")
                value = value.detach()
                _register_tensor(self, f"original{i}", Parameter(value, original.requires_grad)
                                 if isinstance(original, Parameter) else value)
        if not unsafe:
            _check_like("register_parametrization", "the parametrization", self(), original)

    def right_inverse(self, value) -> None:
        """Set the original tensor(s) so that the chain gives ``value`` (each module's
        ``right_inverse``, last to first)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not self.unsafe:
                    _check_like("right_inverse", "the assigned value", value, self.original)
                self.original.data = value.detach()
                return
            if len(value) != self.ntensors:
                raise ValueError(f"right_inverse: 'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}, got one of length {len(value)}")
            for i, v in enumerate(value):
                getattr(self, f"original{i}").data = v.detach()

    def forward(self):
        first = self[0](self.original) if self.is_tensor else \
            self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            first = module(first)
        return first


def _refuse_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See: "
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html")


def _deepcopy(self, memo):
    out = self.__new__(type(self))
    memo[id(self)] = out
    out.__dict__.update({k: copy.deepcopy(v, memo) for k, v in self.__dict__.items()})
    return out


def _inject_new_class(module) -> None:
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,),
                            {"__getstate__": _refuse_pickle, "__deepcopy__": _deepcopy})


def _inject_property(module, tensor_name: str) -> None:
    def get_parametrized(self):
        chain = self.parametrizations[tensor_name]
        if not _cache_depth:
            return chain()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = chain()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name: str, parametrization, *, unsafe: bool = False):
    """Parametrize ``module.<tensor_name>`` by the module ``parametrization``: the parameter (or
    buffer) moves to ``module.parametrizations[tensor_name].original`` and the attribute becomes
    ``parametrization(original)``. A second call on the same name appends to the chain. Unless
    ``unsafe``, the parametrization must keep the tensor's shape and dtype (ValueError). Returns
    ``module``.

    >>> import webgrad as wg
    >>> class Double(wg.nn.Module):
    ...     def forward(self, X): return 2 * X
    ...     def right_inverse(self, Y): return Y / 2
    >>> m = register_parametrization(wg.nn.Linear(2, 1), "bias", Double())
    >>> m.bias = wg.tensor([3.0]); m.parametrizations.bias.original.tolist(), m.bias.tolist()
    ([1.5], [3.0])
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            before = getattr(module, tensor_name)
            _check_like("register_parametrization", "the parametrization", parametrization(before), before)
            if hasattr(parametrization, "right_inverse"):
                back = parametrization.right_inverse(before)
                if not isinstance(back, Tensor):
                    raise ValueError(f"register_parametrization: right_inverse must return a tensor, got "
                                     f"{type(back).__name__}")
                _check_like("register_parametrization", "right_inverse", back, before)
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    original = getattr(module, tensor_name)
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = chain
    return module


def is_parametrized(module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given).

    >>> import webgrad as wg
    >>> is_parametrized(wg.nn.Linear(2, 2))
    False
    """
    chains = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def remove_parametrizations(module, tensor_name: str, leave_parametrized: bool = True):
    """Take the parametrizations off ``module.<tensor_name>``: the attribute becomes a parameter
    (or buffer) again, holding the parametrized value (``leave_parametrized``) or the original.
    When no parametrization is left, the module gets its class back. Returns ``module``.

    >>> import webgrad as wg
    >>> m = register_parametrization(wg.nn.Linear(2, 2), "weight", wg.nn.Identity())
    >>> type(remove_parametrizations(m, "weight")).__name__, is_parametrized(m)
    ('Linear', False)
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                original.data = getattr(module, tensor_name).detach()
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach(), value.requires_grad) if value.requires_grad else value.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
                         "terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module) -> type:
    """The module's class before parametrizations were registered (its class when there are none).

    >>> import webgrad as wg
    >>> m = register_parametrization(wg.nn.Linear(2, 2), "weight", wg.nn.Identity())
    >>> type_before_parametrizations(m).__name__
    'Linear'
    """
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations"]
