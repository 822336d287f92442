"""``ReduceLROnPlateau``: cut the lr when a watched metric stops improving."""
from __future__ import annotations

import math
import warnings

from .sched_base import EPOCH_DEPRECATION_WARNING, LRScheduler, check_optimizer, group_values, set_group_value

# (mode, threshold_mode) -> is ``a`` better than ``best``, given the threshold
_BETTER = {
    ("min", "rel"): lambda a, best, th: a < best * (1.0 - th),
    ("min", "abs"): lambda a, best, th: a < best - th,
    ("max", "rel"): lambda a, best, th: a > best * (th + 1.0),
    ("max", "abs"): lambda a, best, th: a > best + th,
}
_WORST = {"min": math.inf, "max": -math.inf}


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` (not below ``min_lr``; changes under ``eps`` are skipped) once
    the metric given to ``step(metric)`` has not improved (by ``threshold``, relative or absolute
    per ``threshold_mode``, downwards for ``mode='min'``) for more than ``patience`` steps; then wait
    ``cooldown`` steps before counting again.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> [(s.step(loss), s.get_last_lr()[0])[1] for loss in [3.0, 2.0, 2.0, 2.0, 2.0]]
    [1.0, 1.0, 1.0, 0.5, 0.5]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: Factor should be < 1.0, got {factor}")
        self.factor = factor
        self.optimizer = check_optimizer("ReduceLROnPlateau", optimizer)
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"ReduceLROnPlateau: expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * n
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in _WORST:
            raise ValueError(f"ReduceLROnPlateau: mode {mode} is unknown! (wanted 'min' or 'max')")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold mode {threshold_mode} is unknown! (wanted 'rel' or 'abs')")
        self.mode_worse = _WORST[mode]
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def _reset(self):
        self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out a cooldown."""
        return self.cooldown_counter > 0

    def is_better(self, a, best) -> bool:
        """Whether metric ``a`` improves on ``best`` by the threshold."""
        return _BETTER[self.mode, self.threshold_mode](a, best, self.threshold)

    def step(self, metrics, epoch=None) -> None:
        """Record one value of the watched metric (a number or a one-element tensor)."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = group_values(self.optimizer, "lr")

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: The number of param groups in the `optimizer` "
                                   f"({len(groups)}) differs from when `ReduceLROnPlateau` was initialized "
                                   f"({len(self.min_lrs)}); modify the `min_lrs` field to match")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                set_group_value(group, "lr", new)

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


__all__ = ["ReduceLROnPlateau"]
