"""A Module's state dict, as PyTorch's: ``state_dict`` walks the module tree (a child shared by two
names appears under both), each module saving its own parameters, persistent buffers and extra
state through ``_save_to_state_dict``; ``load_state_dict`` gives each module the entries under its
prefix through ``_load_from_state_dict``. Subclasses may override either, and the state-dict hooks
run where PyTorch runs them.

>>> import webgrad as wg
>>> m = wg.nn.Sequential(wg.nn.Linear(2, 2))
>>> list(m.state_dict()), m.load_state_dict(m.state_dict())
(['0.weight', '0.bias'], <All keys matched successfully>)
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from ..engine import no_grad
from ..tensor import Tensor

EXTRA_STATE = "_extra_state"     # the key suffix of what get_extra_state returns


def hooks(module, table: str) -> dict:
    """The module's hooks of one kind (modules made before the table existed have none)."""
    return module.__dict__.get(table) or {}


def overrides(module, method: str) -> bool:
    """Whether the module's class defines its own ``method`` (get_extra_state, set_extra_state)."""
    from .module import Module
    return getattr(type(module), method) is not getattr(Module, method)


def state_dict(module, destination, prefix: str, keep_vars: bool):
    """PyTorch's ``Module.state_dict``: pre-hooks, this module's own entries, the children's, post-hooks."""
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = {"version": module._version}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in hooks(module, "_state_dict_pre_hooks").values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
    for hook, returns_dict in hooks(module, "_state_dict_hooks").values():
        result = hook(module, destination, prefix, local_metadata)
        if result is not None:
            if not returns_dict:
                raise RuntimeError("state_dict post hook must return None (register_state_dict_post_hook)")
            destination = result
    return destination


def save_own(module, destination, prefix: str, keep_vars: bool) -> None:
    """This module's parameters, persistent buffers and extra state into ``destination``."""
    for name, p in module._parameters.items():
        if p is not None:
            destination[prefix + name] = p if keep_vars else p.detach()
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent:
            destination[prefix + name] = b if keep_vars else b.detach()
    if overrides(module, "get_extra_state"):
        destination[prefix + EXTRA_STATE] = module.get_extra_state()


def load_state_dict(module, state_dict, strict: bool, assign: bool):
    """PyTorch's ``Module.load_state_dict``: every module loads its own entries, then the post-hooks
    run; with ``strict``, missing or unexpected keys are errors. Returns (missing, unexpected)."""
    from .module import _IncompatibleKeys
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"load_state_dict: expected state_dict to be dict-like, got {type(state_dict).__name__}")
    missing, unexpected, errors = [], [], []
    metadata = getattr(state_dict, "_metadata", None)

    def load(mod, entries, prefix=""):
        local_metadata = dict(metadata.get(prefix[:-1], {})) if metadata is not None else {}
        if assign:
            local_metadata["assign_to_params_buffers"] = True
        mod._load_from_state_dict(entries, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in mod._modules.items():
            if child is not None:
                child_prefix = f"{prefix}{name}."
                load(child, {k: v for k, v in entries.items() if k.startswith(child_prefix)}, child_prefix)
        for hook in hooks(mod, "_load_state_dict_post_hooks").values():
            hook(mod, _IncompatibleKeys(missing, unexpected))

    load(module, OrderedDict(state_dict))
    if strict:
        if unexpected:
            errors.insert(0, f"Unexpected key(s) in state_dict: {', '.join(map(repr, unexpected))}. ")
        if missing:
            errors.insert(0, f"Missing key(s) in state_dict: {', '.join(map(repr, missing))}. ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors))
    return _IncompatibleKeys(missing, unexpected)


def load_own(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors) -> None:
    """This module's entries of ``state_dict`` into its parameters and persistent buffers (copied in
    place, cast to each one's dtype and backend; assigned with ``assign``), and its extra state."""
    for hook in hooks(module, "_load_state_dict_pre_hooks").values():
        hook(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)
    if hasattr(module, "_materialize_from_state"):    # lazy layers take their shapes from the state
        module._materialize_from_state(state_dict, prefix)
    local = {**module._parameters, **{k: b for k, b in module._buffers.items() if k not in module._non_persistent}}
    local = {k: v for k, v in local.items() if v is not None}
    for name, target in local.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing.append(key)
            continue
        _load_entry(module, name, target, key, state_dict[key], local_metadata, errors)
    extra = prefix + EXTRA_STATE
    if overrides(module, "set_extra_state"):
        if extra in state_dict:
            module.set_extra_state(state_dict[extra])
        elif strict:
            missing.append(extra)
    elif strict and extra in state_dict:
        unexpected.append(extra)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra:
                head, *rest = key[len(prefix):].split(".", 1)
                if head not in (module._modules if rest else local):
                    unexpected.append(key)


def _load_entry(module, name, target, key, value, local_metadata, errors) -> None:
    from .parameter import Parameter
    if not isinstance(value, Tensor):
        errors.append(f'While copying the parameter named "{key}", expected a Tensor from the checkpoint but '
                      f'received {type(value).__name__}')
        return
    if target.ndim == 0 and value.ndim == 1:    # PyTorch's: 1-element checkpoints of 0-d parameters
        value = value[0]
    if tuple(value.shape) != tuple(target.shape):
        errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from checkpoint, "
                      f"the shape in current model is {tuple(target.shape)}.")
        return
    with no_grad():
        if not local_metadata.get("assign_to_params_buffers", False):
            target.copy_(value)
            return
        if isinstance(target, Parameter):
            value = value.requires_grad_(target.requires_grad) if isinstance(value, Parameter) else \
                Parameter(value, requires_grad=target.requires_grad)
        setattr(module, name, value)


__all__ = ["EXTRA_STATE", "state_dict", "save_own", "load_state_dict", "load_own"]
