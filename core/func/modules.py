"""Modules as functions of their tensors (PyTorch's ``torch.func.functional_call``,
``stack_module_state``, ``replace_all_batch_norm_modules_``).

``functional_call`` swaps the given tensors into the module's parameter and buffer slots for one
call and puts the originals back afterwards (also when the call raises), as PyTorch's
``_reparametrize_module`` does; the module's code reads them as usual, so the result is
differentiable w.r.t. the given tensors.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..nn.module import Module
from ..ops.movement import stack
from ..tensor import Tensor

_MISSING = object()   # a name the module did not have before the call


def _named_tensors(module, prefix=""):
    """(name, tensor) of every parameter and buffer, under every name (tied ones repeat)."""
    for table in ("_parameters", "_buffers"):
        for name, t in module.__dict__[table].items():
            if t is not None:
                yield prefix + name, t
    for name, child in module.__dict__["_modules"].items():
        if child is not None:
            yield from _named_tensors(child, f"{prefix}{name}.")


def _merged(dicts) -> dict:
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, Sequence) or isinstance(dicts, str):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    keys = [k for d in dicts for k in d]
    repeated = sorted({k for k in keys if keys.count(k) > 1}, key=keys.index)
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def _untied(module, given: dict) -> dict:
    """``given`` with each value also under the other names of a tensor it replaces (tied weights)."""
    names_of = {}
    for name, t in _named_tensors(module):
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    out = dict(given)
    for name in [n for n in given if n in tied]:
        group = tied[name]
        values = {id(given[n]) for n in group if n in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, which are tied. Consider "
                             f"using tie_weights=False")
        out.update(dict.fromkeys(group, given[name]))
    return out


def _check_keys(module, given: dict) -> None:
    valid = {n for n, _ in _named_tensors(module)}
    errors = []
    unexpected, missing = sorted(set(given) - valid), sorted(valid - set(given))
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(type(module).__name__,
                                                                          "\n\t".join(errors)))


def _swap(module, name: str, value):
    """Put ``value`` in the slot ``name`` (dotted) of ``module``; return what was there."""
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"functional_call: {name!r} must be given a Tensor, got {type(value).__name__}")
    for table in ("_parameters", "_buffers"):
        slots = owner.__dict__[table]
        if attr in slots:
            old = slots[attr]
            if value is _MISSING:
                del slots[attr]
            else:
                slots[attr] = value
            return old
    old = getattr(owner, attr, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"functional_call: attribute `{name}` of {type(owner).__name__} is a "
                        f"{type(old).__name__}, not a Tensor")
    if value is not _MISSING:
        object.__setattr__(owner, attr, value)
    elif old is not _MISSING:
        object.__delattr__(owner, attr)
    return old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by the given tensors
    for this call (PyTorch's ``torch.func.functional_call``): a dict from names (as
    ``named_parameters``/``named_buffers`` give them) to tensors, or a sequence of such dicts.
    The module's own tensors are back in place afterwards, also after an error; the result is
    differentiable w.r.t. the given tensors. ``tie_weights``: a value given for one name of a tied
    tensor replaces it under all its names. ``strict``: the names must be exactly the module's.
    ``args`` that is not a tuple is the single argument.

    >>> import webgrad as wg
    >>> lin = wg.nn.Linear(2, 1)
    >>> w = {"weight": wg.tensor([[1.0, 2.0]]), "bias": wg.tensor([0.5])}
    >>> wg.func.functional_call(lin, w, (wg.tensor([[3.0, 4.0]]),)).tolist()
    [[11.5]]
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: expected a webgrad.nn.Module, got {type(module).__name__}")
    given = _merged(parameter_and_buffer_dicts)
    values = _untied(module, given) if tie_weights else dict(given)
    if strict:
        _check_keys(module, values)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        return module(*args, **(kwargs or {}))
    finally:
        now = {name: _swap(module, name, old) for name, old in reversed(list(originals.items()))}
        given.update({k: now[k] for k in given if k in now and now[k] is not _MISSING})


def _stacked_leaf(tensors, name: str) -> Tensor:
    wants = {t.requires_grad for t in tensors}
    if len(wants) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack([t.detach() for t in tensors])
    return out.requires_grad_() if wants == {True} else out


def stack_module_state(models):
    """``(params, buffers)``: dicts from names to the models' tensors stacked along a new first
    dim, for ``vmap`` over ``functional_call`` (model ensembles; PyTorch's
    ``torch.func.stack_module_state``). Stacked parameters are new leaves (an optimizer can take
    them); the models must be of one class and in one mode.

    >>> import webgrad as wg
    >>> params, buffers = wg.func.stack_module_state([wg.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].requires_grad, buffers
    (webgrad.Size([4, 2, 3]), True, {})
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
            {k: _stacked_leaf([b[k] for b in buffers], k) for k in buffers[0]})


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in ``root`` use batch statistics only (no running statistics: they
    become None and ``track_running_stats`` False), in place; returns ``root`` (PyTorch's
    ``torch.func.replace_all_batch_norm_modules_``, for ``vmap`` over models with batch norm).

    >>> import webgrad as wg
    >>> bn = wg.func.replace_all_batch_norm_modules_(wg.nn.Sequential(wg.nn.BatchNorm1d(3)))[0]
    >>> bn.running_mean is None, bn.track_running_stats
    (True, False)
    """
    from ..nn.layers.normalization import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = module.running_var = module.num_batches_tracked = None
            module.track_running_stats = False
    return root
