"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``state_dict`` and hooks.

Subclasses write one method, ``_update(p, grad, group, state)``, made of ops on the
parameter's backend (Python numbers enter kernels as scalars: no host round trip), that
returns the step to subtract from the parameter. ``step`` runs it under ``no_grad`` and
subtracts in place (``sub``), so the parameter objects (and the module holding them) keep
their identity, and on ``cpu`` the parameter's buffer is reused (see ``ops.binary.inplace``).
An optimizer whose algorithm is not "subtract a step per parameter" (LBFGS) writes ``step``.

State layout and key names are PyTorch's; one difference: ``state[p]["step"]`` (and the other
scalar state) is a Python float where PyTorch keeps a 0-d tensor, so counting steps never
reads a GPU back. ``load_state_dict`` accepts either.
"""
from __future__ import annotations

import copy
import functools
import itertools
from collections import OrderedDict, defaultdict

from ..engine import enable_grad, no_grad
from ..nn.module import _clear_grad, _Handle
from ..ops.binary import inplace, sub
from ..tensor import Tensor

_hook_ids = itertools.count()


def _hooked(step):
    """Wrap an optimizer's ``step`` so the step pre-hooks run before it and the post-hooks after
    (once, also when a subclass's ``step`` calls its parent's)."""
    @functools.wraps(step)
    def run(self, *args, **kwargs):
        if getattr(self, "_in_step", False):
            return step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{type(self).__name__}.step: a step pre-hook must return None or a tuple "
                                       f"of (new_args, new_kwargs), but got {result!r}")
                args, kwargs = result
        self._in_step = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            self._in_step = False
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    run._hooked = True
    return run


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of parameters and options) and ``state``
    (a dict per parameter, made on first use as in PyTorch's ``defaultdict``).

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs (``named_parameters()``;
    the names are kept as the group's ``param_names``), or of dicts, one per group.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(2))
    >>> opt = wg.optim.SGD([w], lr=0.5)
    >>> (w * w).sum().backward(); opt.step()
    >>> w.tolist()
    [0.0, 0.0]
    """

    per_step_numbers = False   # True where every Python number a step changes comes from webgrad.per_step

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked(step)

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        for table in _HOOK_TABLES.values():
            setattr(self, table, OrderedDict())
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params argument given to the optimizer should be an iterable "
                            f"of Tensors or dicts, but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing options take the defaults).
        The dict itself joins ``param_groups``, as in PyTorch.

        >>> import webgrad as wg
        >>> a, b = wg.nn.Parameter(wg.ones(1)), wg.nn.Parameter(wg.ones(1))
        >>> opt = wg.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=1.0)
        >>> [g["lr"] for g in opt.param_groups]
        [1.0, 0.1]
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group: param_group must be a dict, but got "
                            f"{type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError(f"{name}: optimizer parameters need to be organized in ordered collections, but the "
                            f"ordering of tensors in sets will change between runs. Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names and len(names) != len(params):
            raise ValueError(f"{name}: all optimizer params should be with/without names. Some param names are "
                             f"missing")
        if names:
            param_group["param_names"] = names
        for p in params:
            _check_param(name, p)
        for key, value in self.defaults.items():
            param_group.setdefault(key, value)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(("param_names" in g) != bool(names) for g in self.param_groups):
            raise ValueError(f"{name}: all optimizer param groups should be with/without names. cannot add param "
                             f"group {'with' if names else 'without'} names to the optimizer")
        if any(id(p) in seen for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter (to None, or to zeros).

        >>> import webgrad as wg
        >>> w = wg.nn.Parameter(wg.ones(2))
        >>> opt = wg.optim.SGD([w])
        >>> (w * 3).sum().backward(); opt.zero_grad(set_to_none=False); w.grad.tolist()
        [0.0, 0.0]
        """
        for group in self.param_groups:
            for p in group["params"]:
                _clear_grad(p, set_to_none)

    @_hooked
    def step(self, closure=None):
        """Update every parameter that has a gradient; ``closure`` (re-evaluating the loss) is
        called first when given, under ``enable_grad``, and its loss returned."""
        loss = _evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._step_param(p, group)
        return loss

    def _step_param(self, p, group):
        """Update one parameter: ``p -= _update(...)`` in place."""
        grad = -p.grad if group.get("maximize") else p.grad
        delta = self._update(p, grad, group, self.state[p])
        inplace(p, f"{type(self).__name__}.step", sub, delta)

    def _update(self, p, grad, group, state):
        """The step to subtract from the parameter (a tensor), updating ``state``; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} defines neither step nor _update")

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{options, "params": [indices]}]}``,
        with parameters named by their position, as in PyTorch (parameters without state are
        left out). As PyTorch's, it holds the optimizer's own per-parameter dicts and tensors, which
        later steps update in place: copy it (``copy.deepcopy``) to keep one moment's values.

        >>> import webgrad as wg
        >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=0.1)
        >>> opt.state_dict()["param_groups"][0]["params"]
        [0]
        """
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        index, groups = {}, []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": [index[id(p)] for p in group["params"]]})
        state = {(index[id(p)] if isinstance(p, Tensor) else p): s for p, s in self.state.items() if s}
        state_dict = {"state": state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            state_dict = _or(hook(self, state_dict), state_dict)
        return state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore options and per-parameter state (tensors are moved to each parameter's backend
        and, when floating, cast to its dtype; a tensor ``step`` becomes a number)."""
        name = type(self).__name__
        state_dict = dict(state_dict)
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            state_dict = _or(hook(self, state_dict), state_dict)
        saved_groups = [{k: (v if k == "params" else copy.deepcopy(v)) for k, v in g.items()}
                        for g in state_dict["param_groups"]]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: loaded state dict has a different number of parameter "
                             f"groups ({len(saved_groups)}) than the optimizer ({len(self.param_groups)})")
        for mine, saved in zip(self.param_groups, saved_groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(f"{name}.load_state_dict: loaded state dict contains a parameter group of "
                                 f"{len(saved['params'])} parameters that doesn't match the size of optimizer's "
                                 f"group ({len(mine['params'])})")
        by_index = {k: p for mine, saved in zip(self.param_groups, saved_groups)
                    for k, p in zip(saved["params"], mine["params"])}
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            p = by_index.get(key)
            state[key if p is None else p] = value if p is None else _like_param(value, p)
        for mine, saved in zip(self.param_groups, saved_groups):
            saved["params"] = mine["params"]
            if "param_names" in mine and "param_names" not in saved:
                saved["param_names"] = mine["param_names"]
        self.state, self.param_groups = state, saved_groups
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    # ------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return
        ``(new_args, new_kwargs)``. Returns a handle whose ``remove()`` takes it away.

        >>> import webgrad as wg
        >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))])
        >>> calls = []
        >>> handle = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
        >>> opt.step(); handle.remove(); opt.step(); calls
        ['pre']
        """
        return self._register("step_pre", hook)

    def register_step_post_hook(self, hook):
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._register("step_post", hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False):
        """Call ``hook(optimizer)`` before ``state_dict`` builds its result."""
        return self._register("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False):
        """Call ``hook(optimizer, state_dict)`` on ``state_dict``'s result; a dict it returns replaces it."""
        return self._register("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False):
        """Call ``hook(optimizer, state_dict)`` before loading; a dict it returns is loaded instead."""
        return self._register("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
        """Call ``hook(optimizer)`` after ``load_state_dict``."""
        return self._register("load_state_dict_post", hook, prepend)

    def _register(self, kind, hook, prepend=False):
        table, key = getattr(self, _HOOK_TABLES[kind]), next(_hook_ids)
        table[key] = hook
        if prepend:
            table.move_to_end(key, last=False)
        return _Handle(table, key)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])


_HOOK_TABLES = {kind: f"_optimizer_{kind}_hooks" for kind in
                ("step_pre", "step_post", "state_dict_pre", "state_dict_post", "load_state_dict_pre",
                 "load_state_dict_post")}


def _check_param(name, p):
    if not isinstance(p, Tensor):
        raise TypeError(f"{name}: optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
    if not (p.is_leaf or p.retains_grad):
        raise ValueError(f"{name}: can't optimize a non-leaf Tensor (shape {tuple(p.shape)})")


def _evaluate(closure):
    """The closure's loss, computed with grad enabled (None without a closure)."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _or(result, default):
    return default if result is None else result


def _like_param(value, p, key=None):
    """``value`` with every tensor in it on ``p``'s backend (floating ones in ``p``'s dtype);
    ``step`` as a number."""
    if isinstance(value, Tensor):
        if key == "step":
            return float(value.item())
        value = (value.detach() if value.requires_grad else value).to(p.device)
        return value.to(p.dtype) if value.dtype.is_floating and p.dtype.is_floating else value
    if isinstance(value, dict):
        return {k: _like_param(v, p, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_like_param(v, p) for v in value)
    return value


__all__ = ["Optimizer"]
