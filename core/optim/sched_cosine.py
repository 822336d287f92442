"""Cosine schedules: ``CosineAnnealingLR`` (half a cosine over ``T_max``, in PyTorch's recursive
form) and ``CosineAnnealingWarmRestarts`` (SGDR: restart every ``T_i`` epochs, ``T_i`` growing by
``T_mult``)."""
from __future__ import annotations

import math

from .sched_base import LRScheduler, set_group_value, group_values


class CosineAnnealingLR(LRScheduler):
    """Anneal from ``initial_lr`` to ``eta_min`` along half a cosine over ``T_max`` epochs:
    ``eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2`` (recursively, so it
    chains with other schedulers, and on past ``T_max`` it rises again, as PyTorch's does).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = CosineAnnealingLR(opt, T_max=2)
    >>> [round((s.step(), s.get_last_lr()[0])[1], 6) for _ in range(2)]
    [0.5, 0.0]
    """

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and e > 0:
            return self._get_closed_form_lr()
        groups = self.optimizer.param_groups
        if (e - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2 for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (g["lr"] - lo) + lo
                for g in groups]

    def _get_closed_form_lr(self):
        lo = self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2 for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: ``eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``, with ``T_cur``
    the epochs since the last restart and ``T_i`` (first ``T_0``) multiplied by ``T_mult`` at each
    restart. ``step(epoch)`` takes fractional epochs (``epoch + i / iters`` per batch).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> [round((s.step(), s.get_last_lr()[0])[1], 6) for _ in range(3)]
    [0.5, 1.0, 0.5]
    >>> s.step(1.5); round(s.get_last_lr()[0], 6)
    0.146447
    """

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"CosineAnnealingWarmRestarts: Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"CosineAnnealingWarmRestarts: Expected float or int eta_min, but got {eta_min} of "
                             f"type {type(eta_min).__name__}")
        self.T_0, self.T_i, self.T_mult, self.eta_min, self.T_cur = T_0, T_0, T_mult, eta_min, last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lo = self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Advance one epoch, or (``epoch`` given, fractional allowed) jump to it."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:
            self._jump(epoch)
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")

    def _jump(self, epoch):
        """Set ``T_cur`` and ``T_i`` for ``epoch`` epochs from the start."""
        if epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts.step: Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


__all__ = ["CosineAnnealingLR", "CosineAnnealingWarmRestarts"]
