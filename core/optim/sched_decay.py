"""Schedules that scale the lr by fixed factors: ``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``ConstantLR``, ``LinearLR`` and ``PolynomialLR``. Each steps recursively (chainable, as in
PyTorch) and has a closed form that ``step(epoch)`` uses."""
from __future__ import annotations

from bisect import bisect_right
from collections import Counter

from .sched_base import LRScheduler


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = StepLR(opt, step_size=2)
    >>> [round((s.step(), s.get_last_lr()[0])[1], 6) for _ in range(4)]
    [1.0, 0.1, 0.1, 0.01]
    """

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch in ``milestones`` (a repeated milestone counts
    again).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = MultiStepLR(opt, [1, 3], gamma=0.5)
    >>> [(s.step(), s.get_last_lr()[0])[1] for _ in range(3)]
    [0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._current()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = ExponentialLR(opt, gamma=0.5); s.step(); s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return self._current() if self._is_initial else self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the lr by ``factor`` until epoch ``total_iters``, then restore it.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> [s.get_last_lr()[0]] + [(s.step(), s.get_last_lr()[0])[1] for _ in range(2)]
    [0.5, 0.5, 1.0]
    """

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError(f"ConstantLR: Constant multiplicative factor expected to be between 0 and 1, got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._current()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> [s.get_last_lr()[0]] + [(s.step(), s.get_last_lr()[0])[1] for _ in range(3)]
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
                 last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(f"LinearLR: Starting multiplicative factor expected to be greater than 0 and less or "
                             f"equal to 1, got {start_factor}")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(f"LinearLR: Ending multiplicative factor expected to be between 0 and 1, got "
                             f"{end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        change = self.end_factor - self.start_factor
        return self._scaled(1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change))

    def _get_closed_form_lr(self):
        change = self.end_factor - self.start_factor
        return [base * (self.start_factor + change * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr as ``(1 - epoch/total_iters) ** power`` until ``total_iters`` (then 0).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = PolynomialLR(opt, total_iters=4, power=2.0)
    >>> [(s.step(), s.get_last_lr()[0])[1] for _ in range(4)]
    [0.5625, 0.25, 0.0625, 0.0]
    """

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        e, n = self.last_epoch, self.total_iters
        return self._scaled(((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power)

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


__all__ = ["StepLR", "MultiStepLR", "ExponentialLR", "ConstantLR", "LinearLR", "PolynomialLR"]
