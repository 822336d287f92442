"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and ``state_dict``.

Subclasses write one method, ``_update(p, grad, group, state)``, made of ops on the
parameter's backend (Python numbers enter kernels as scalars: no host round trip), that
returns the step to subtract from the parameter. ``step`` runs it under ``no_grad`` and
subtracts in place (``sub_``), so the parameter objects (and the module holding them) keep
their identity, and on ``cpu`` the parameter's buffer is reused (see ``ops.binary.inplace``).
"""
from __future__ import annotations

from ..engine import enable_grad, no_grad
from ..ops.binary import inplace, sub
from ..tensor import Tensor

class Optimizer:
    """Base class: holds ``param_groups`` (dicts of parameters and options) and ``state``
    (a dict per parameter).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(2))
    >>> opt = wg.optim.SGD([w], lr=0.5)
    >>> (w * w).sum().backward(); opt.step()
    >>> w.tolist()
    [0.0, 0.0]
    """

    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.state: dict = {}
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params argument given to the optimizer should be an iterable "
                            f"of Tensors or dicts, but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        """Add a group of parameters with its own options (missing options take the defaults).

        >>> import webgrad as wg
        >>> a, b = wg.nn.Parameter(wg.ones(1)), wg.nn.Parameter(wg.ones(1))
        >>> opt = wg.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=1.0)
        >>> [g["lr"] for g in opt.param_groups]
        [1.0, 0.1]
        """
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__} can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError(f"{type(self).__name__}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter (to None, or to zeros)."""
        from ..nn.module import _clear_grad
        for group in self.param_groups:
            for p in group["params"]:
                _clear_grad(p, set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient; ``closure`` (re-evaluating the loss) is
        called first when given, and its loss returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = -p.grad if group.get("maximize") else p.grad
                    delta = self._update(p, grad, group, self.state.setdefault(p, {}))
                    inplace(p, f"{type(self).__name__}.step", sub, delta, donate=True)
        return loss

    def _update(self, p, grad, group, state):
        """The step to subtract from the parameter (a tensor), updating ``state``; subclasses define it."""
        raise NotImplementedError

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{options, "params": [indices]}]}``,
        with parameters named by their position, as in PyTorch.

        >>> import webgrad as wg
        >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=0.1)
        >>> opt.state_dict()["param_groups"][0]["params"]
        [0]
        """
        index, groups = {}, []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if s}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore options and per-parameter state (tensors are moved to each parameter's backend
        and, when floating, cast to its dtype)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{type(self).__name__}.load_state_dict: loaded state dict has {len(groups)} "
                             f"parameter groups; the optimizer has {len(self.param_groups)}")
        by_index = {}
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(f"{type(self).__name__}.load_state_dict: loaded state dict contains a parameter "
                                 f"group that doesn't match the size of optimizer's group")
            by_index.update(zip(saved["params"], mine["params"]))
        for mine, saved in zip(self.param_groups, groups):
            mine.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {}
        for key, s in state_dict["state"].items():
            p = by_index[int(key)]
            self.state[p] = {k: _like_param(v, p) for k, v in s.items()}

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])


def _like_param(value, p):
    if not isinstance(value, Tensor):
        return value
    value = value.detach().to(p.device)
    return value.to(p.dtype) if value.dtype.is_floating else value


__all__ = ["Optimizer"]
