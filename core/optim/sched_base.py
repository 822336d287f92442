"""``LRScheduler``: the base every schedule shares, and the helpers that read and write one
option across an optimizer's parameter groups.

A scheduler rewrites ``group["lr"]`` each time ``step()`` is called (once per epoch, or per
batch for the cyclic ones). Most use PyTorch's recursive ("chainable") forms, multiplying the
group's current lr, so several schedulers can drive one optimizer exactly as in PyTorch.
``step(epoch)`` (deprecated in PyTorch, with its warning) jumps to ``epoch`` through the
schedule's closed form where it has one.

PyTorch's warnings about calling ``scheduler.step()`` before ``optimizer.step()`` and about
calling ``get_lr()`` outside ``step`` are not given here; the values are the same.
"""
from __future__ import annotations

import types
import warnings

from ..tensor import Tensor
from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available.")


class LRScheduler:
    """Base class: remembers each group's ``initial_lr`` (as ``base_lrs``), counts ``last_epoch``
    and sets every group's ``lr`` from ``get_lr`` on each ``step``.

    >>> import webgrad as wg
    >>> from webgrad.optim.lr_scheduler import StepLR
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> sched = StepLR(opt, step_size=2, gamma=0.5)
    >>> [(opt.step(), sched.step(), sched.get_last_lr()[0])[2] for _ in range(4)]
    [1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, last_epoch: int = -1):
        self.optimizer = check_optimizer(type(self).__name__, optimizer)
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", _copy(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(f"{type(self).__name__}: param 'initial_lr' is not specified in param_groups[{i}] "
                               f"when resuming scheduler with last_epoch >= 0 (got last_epoch={last_epoch}); load "
                               f"the optimizer's state first")
        self.base_lrs = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step made at construction (``_is_initial`` tells ``get_lr`` it is that one)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates for the new ``last_epoch`` (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr")

    def step(self, epoch=None) -> None:
        """Advance one epoch (or batch) and set every group's ``lr``; ``epoch`` (deprecated)
        jumps there instead."""
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set."""
        return self._last_lr

    # attribute -> (what state_dict saves for its value, how load_state_dict restores from that)
    _packed: dict = {}

    def state_dict(self) -> dict:
        """Every attribute but the optimizer, to resume the schedule (functions and member
        schedulers in the saved form ``_packed`` gives them)."""
        state = {k: v for k, v in self.__dict__.items() if k != "optimizer" and k not in self._packed}
        state.update({k: pack(self.__dict__[k]) for k, (pack, _) in self._packed.items() if k in self.__dict__})
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict``."""
        state = dict(state_dict)
        saved = {k: state.pop(k) for k in self._packed if k in state}
        self.__dict__.update(state)
        for key, value in saved.items():
            self._packed[key][1](getattr(self, key), value)

    def _current(self) -> list:
        return group_values(self.optimizer, "lr")

    def _scaled(self, factor) -> list:
        """Every group's current lr times ``factor``."""
        return [group["lr"] * factor for group in self.optimizer.param_groups]


def check_optimizer(name, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{name}: {type(optimizer).__name__} is not an Optimizer")
    return optimizer


def per_group(name: str, optimizer, value) -> list:
    """``value`` for each parameter group: a list/tuple must have one entry per group."""
    groups = optimizer.param_groups
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(value)} values, param_groups has {len(groups)}.")
        return [_copy(v) for v in value]
    return [_copy(value)] * len(groups)


def group_values(optimizer, key: str) -> list:
    """``group[key]`` of every parameter group (tensors copied, so the list never aliases them)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def set_group_value(group: dict, key: str, value) -> None:
    """Set ``group[key]``, filling a tensor option in place rather than replacing it."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def function_state(fn):
    """What a state dict keeps of a user function: None for a plain function or lambda, the
    ``__dict__`` of a callable object (as PyTorch does)."""
    return None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()


def restore_function_state(fn, saved) -> None:
    if saved is not None:
        fn.__dict__.update(saved)


def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


__all__ = ["LRScheduler", "EPOCH_DEPRECATION_WARNING", "check_optimizer", "per_group", "group_values",
           "set_group_value", "function_state", "restore_function_state"]
