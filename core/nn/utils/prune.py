"""Pruning (PyTorch's ``torch.nn.utils.prune``): a pruned ``module.<name>`` becomes
``<name>_orig * <name>_mask`` (a parameter and a buffer), recomputed by a forward pre-hook; pruning
again combines the new mask with the old one on the entries still unpruned (``PruningContainer``);
``remove`` makes the pruned value the parameter again. Random methods draw as PyTorch's, so a seeded
run prunes the same entries (ties in the scores may pick other entries than PyTorch's ``topk``).

>>> import webgrad as wg
>>> m = l1_unstructured(wg.nn.Linear(4, 2), "weight", amount=0.5)
>>> int(m.weight_mask.sum()), is_pruned(m), sorted(m.state_dict())
(4, True, ['bias', 'weight_mask', 'weight_orig'])
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...ops.creation import ones_like, zeros_like
from ...ops.random import rand, rand_like
from .convert_parameters import parameters_to_vector


def _validate_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count_to_prune(amount, size: int) -> int:
    count = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if count > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
    return count


def _check_structured(t, dim) -> None:
    if t.ndim <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {tuple(t.shape)} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _along(ndim, dim, index):
    slc = [slice(None)] * ndim
    slc[dim] = index
    return tuple(slc)


class BasePruningMethod(ABC):
    """A pruning method: ``compute_mask(t, default_mask)`` says which entries of ``t`` stay (1) and
    go (0). ``apply`` prunes a module's tensor; the method object is the forward pre-hook."""

    _tensor_name: str | None = None
    PRUNING_TYPE = "unstructured"

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask, from the importance scores ``t`` and the mask so far."""

    def apply_mask(self, module):
        """``<name>_orig * <name>_mask``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask, orig = getattr(module, self._tensor_name + "_mask"), getattr(module, self._tensor_name + "_orig")
        return mask.to(orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with earlier pruning of it)."""
        method = cls._composite(module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None and importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {importance_scores.shape} vs {orig.shape}")
        scores = orig if importance_scores is None else importance_scores
        fresh = not isinstance(method, PruningContainer)
        if fresh:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            module.register_buffer(name + "_mask", method.compute_mask(scores, default_mask=default_mask))
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if fresh:
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
                module._buffers.pop(name + "_mask", None)
            raise
        return method

    @classmethod
    def _composite(cls, module, name, *args, **kwargs):
        keys = [k for k, hook in module._forward_pre_hooks.items()
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
        if len(keys) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 f"Use a PruningContainer.")
        old = module._forward_pre_hooks.pop(keys[0]) if keys else None
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old is None:
            return method
        container = old if isinstance(old, PruningContainer) else PruningContainer(old)
        container.add_pruning_method(method)
        return container

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask (the mask computed from ``importance_scores``, default ``t``)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                 f"{importance_scores.shape} vs {t.shape}")
        scores = t if importance_scores is None else importance_scores
        return t * self.compute_mask(scores, default_mask=ones_like(t) if default_mask is None else default_mask)

    def remove(self, module) -> None:
        """Make ``<name>`` a parameter holding the pruned value; drop ``_orig`` and ``_mask``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        module.__dict__.pop(name, None)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.detach()
        del module._buffers[name + "_mask"]
        module.register_parameter(name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after another to one tensor: each new one prunes among the
    entries (or, structured, the channels) the mask so far keeps."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Append ``method`` (it must act on this container's tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask.to(t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            dim = method.dim % t.ndim
            kept = default_mask.sum(dim=[d for d in range(t.ndim) if d != dim]) != 0
            slc = _along(t.ndim, dim, kept)
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * t.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        mask[slc] = method.compute_mask(t[slc], default_mask=default_mask[slc]).to(mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones)."""

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` (a count, or a fraction) of the entries: those ``_chosen`` picks."""

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if count:
            mask.view(-1)[self._chosen(t, count)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` (a count, or a fraction) of the entries at random."""

    @staticmethod
    def _chosen(t, count):
        return rand_like(t).view(-1).topk(count).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries of smallest absolute value."""

    @staticmethod
    def _chosen(t, count):
        return t.abs().reshape(-1).topk(count, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim`` at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        count = _count_to_prune(self.amount, size)
        if not count:
            return default_mask
        prob = rand(size)
        mask = zeros_like(t)
        mask[_along(t.ndim, self.dim % t.ndim, prob > prob.kthvalue(count).values)] = 1
        return mask * default_mask.to(mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        dim = self.dim % t.ndim
        size = t.shape[dim]
        count = _count_to_prune(self.amount, size)
        if not count:
            return default_mask
        norm = t.norm(p=self.n, dim=[d for d in range(t.ndim) if d != dim])
        mask = zeros_like(t)
        mask[_along(t.ndim, dim, norm.topk(size - count, largest=True).indices)] = 1
        return mask * default_mask.to(mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Prune nothing, but give ``module.<name>`` the pruned form (``_orig``, ``_mask``, the hook)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` (count or fraction) of ``module.<name>``'s entries at random.

    >>> import webgrad as wg
    >>> _ = wg.manual_seed(0)
    >>> int((random_unstructured(wg.nn.Linear(5, 2), "weight", amount=3).weight == 0).sum())
    3
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value (or score).

    >>> import webgrad as wg
    >>> m = wg.nn.Linear(2, 1); m.weight.data = wg.tensor([[0.1, -2.0]])
    >>> l1_unstructured(m, "weight", amount=1).weight.tolist()
    [[0.0, -2.0]]
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` of the channels of ``module.<name>`` along ``dim`` at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm.

    >>> import webgrad as wg
    >>> m = wg.nn.Linear(2, 2); m.weight.data = wg.tensor([[1.0, 1.0], [3.0, 3.0]])
    >>> ln_structured(m, "weight", amount=1, n=2, dim=0).weight.tolist()
    [[0.0, 0.0], [3.0, 3.0]]
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the (module, name) pairs in ``parameters`` together, as one vector, with the
    unstructured ``pruning_method`` class (e.g. ``L1Unstructured``, ``amount=``).

    >>> import webgrad as wg
    >>> a, b = wg.nn.Linear(2, 1), wg.nn.Linear(2, 1)
    >>> a.weight.data, b.weight.data = wg.tensor([[1.0, 4.0]]), wg.tensor([[2.0, 3.0]])
    >>> global_unstructured([(a, "weight"), (b, "weight")], L1Unstructured, amount=2)
    >>> a.weight.tolist(), b.weight.tolist()
    ([[0.0, 4.0]], [[0.0, 3.0]])
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", None) if hasattr(m, n + "_mask")
                                         else ones_like(getattr(m, n)) for m, n in parameters])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer()
    container._tensor_name = method._tensor_name = "temp"
    container.add_pruning_method(method)
    final = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final[start:start + param.numel()].view_as(param))
        start += param.numel()


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent: it is one parameter again, holding the
    pruned value.

    >>> import webgrad as wg
    >>> sorted(remove(l1_unstructured(wg.nn.Linear(2, 1), "weight", 1), "weight").state_dict())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module) -> bool:
    """Whether any submodule of ``module`` has a pruning hook.

    >>> import webgrad as wg
    >>> is_pruned(wg.nn.Linear(2, 1))
    False
    """
    return any(isinstance(hook, BasePruningMethod) for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())


__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured",
           "random_structured", "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]
