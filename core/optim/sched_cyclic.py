"""Per-batch cyclic schedules that also cycle momentum (or Adam's beta1) against the lr:
``CyclicLR`` (triangular cycles between ``base_lr`` and ``max_lr``) and ``OneCycleLR`` (one warm-up
and one anneal)."""
from __future__ import annotations

import functools
import math

from .sched_base import (LRScheduler, check_optimizer, function_state, per_group, restore_function_state,
                         set_group_value)


class _MomentumCycle:
    """Momentum (or beta1) cycling for a scheduler: the option name and its writer."""

    def _start_momentum(self, optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch):
        self.cycle_momentum = cycle_momentum
        if not cycle_momentum:
            return None, None
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError(f"{type(self).__name__}: optimizer must support momentum or beta1 with "
                             f"`cycle_momentum` option enabled ({type(optimizer).__name__} has neither)")
        self.use_beta1 = "betas" in optimizer.defaults
        bases = per_group("base_momentum", optimizer, base_momentum)
        tops = per_group("max_momentum", optimizer, max_momentum)
        if last_epoch == -1:
            for top, base, group in zip(tops, bases, optimizer.param_groups, strict=True):
                self._set_momentum(group, top)
                group["max_momentum"], group["base_momentum"] = top, base
        return bases, tops

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value


class CyclicLR(_MomentumCycle, LRScheduler):
    """Cycle the lr between ``base_lr`` and ``max_lr`` (``step_size_up`` batches up,
    ``step_size_down`` down), the amplitude scaled by ``mode`` ('triangular': constant,
    'triangular2': halved each cycle, 'exp_range': ``gamma**iteration``) or by ``scale_fn``
    (of the cycle number or of the iteration, per ``scale_mode``).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0, momentum=0.9)
    >>> s = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> [round(x, 6) for x in [s.get_last_lr()[0]] + [(s.step(), s.get_last_lr()[0])[1] for _ in range(4)]]
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up: int = 2000, step_size_down=None,
                 mode: str = "triangular", gamma: float = 1.0, scale_fn=None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1):
        self.optimizer = check_optimizer("CyclicLR", optimizer)
        base_lrs = per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                set_group_value(group, "lr", lr)
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in _SCALES and scale_fn is None:
            raise ValueError(f"CyclicLR: mode is invalid and scale_fn is None (got mode={mode!r}; wanted one of "
                             f"{', '.join(_SCALES)} or a scale_fn)")
        self.mode, self.gamma, self._scale_fn_custom, self.scale_mode = mode, gamma, scale_fn, scale_mode
        self._init_scale_fn()
        self.base_momentums, self.max_momentums = self._start_momentum(
            optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is None:
            fn, self.scale_mode = _SCALES[self.mode]
            self._scale_fn_ref = functools.partial(fn, self.gamma)

    def scale_fn(self, x) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        return (self._scale_fn_custom or self._scale_fn_ref)(x)

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * factor * scale for base, top in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, base, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums,
                                        strict=True):
                self._set_momentum(group, top - (top - base) * factor * scale)
        return lrs

    _packed = {"_scale_fn_custom": (function_state, restore_function_state)}

    def state_dict(self) -> dict:
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)      # rebuilt from mode and gamma on load
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        self._init_scale_fn()


# mode -> (scale function of (gamma, x), what x is)
_SCALES = {
    "triangular": (lambda gamma, x: 1.0, "cycle"),
    "triangular2": (lambda gamma, x: 1 / (2.0 ** (x - 1)), "cycle"),
    "exp_range": (lambda gamma, x: gamma ** x, "iterations"),
}


class OneCycleLR(_MomentumCycle, LRScheduler):
    """The 1cycle policy, stepped once per batch: warm up from ``max_lr/div_factor`` to ``max_lr``
    over ``pct_start`` of the steps, then anneal to ``initial_lr/final_div_factor``
    (``three_phase``: back down to ``initial_lr`` first); momentum (or Adam's beta1) cycles the
    opposite way between ``max_momentum`` and ``base_momentum``.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=0.1, momentum=0.9)
    >>> s = OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> [round(lr, 6) for lr in s.get_last_lr()]
    [0.04]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        self.optimizer = check_optimizer("OneCycleLR", optimizer)
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        up = float(pct_start * self.total_steps) - 1
        self._schedule_phases = (
            [_phase(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
             _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                    "max_momentum"),
             _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
            if three_phase else
            [_phase(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
             _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")])
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: Expected float between 0 and 1 pct_start, but got {pct_start!r}")
        if anneal_strategy not in _ANNEAL:
            raise ValueError(f"OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        if last_epoch == -1:
            for top, group in zip(per_group("max_lr", optimizer, max_lr), optimizer.param_groups, strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self._start_momentum(optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        anneal = _ANNEAL[self._anneal_func_type]
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, anneal(group[phase["start_momentum"]],
                                                         group[phase["end_momentum"]], pct))
                    break
                start = end
        return lrs


def _phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
    return dict(end_step=end_step, start_lr=start_lr, end_lr=end_lr, start_momentum=start_momentum,
                end_momentum=end_momentum)


def _total_steps(total_steps, epochs, steps_per_epoch):
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"OneCycleLR: Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("OneCycleLR: You must define either total_steps OR (epochs AND steps_per_epoch)")
    for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"OneCycleLR: Expected positive integer {name}, but got {value}")
    return epochs * steps_per_epoch


def _anneal_cos(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start, end, pct):
    return (end - start) * pct + start


_ANNEAL = {"cos": _anneal_cos, "linear": _anneal_linear}

__all__ = ["CyclicLR", "OneCycleLR"]
