"""Schedules given by user functions of the epoch: ``LambdaLR`` and ``MultiplicativeLR``."""
from __future__ import annotations

from .sched_base import LRScheduler, function_state, restore_function_state


def _restore_functions(fns, saved):
    for fn, state in zip(fns, saved):
        restore_function_state(fn, state)


class _FunctionScheduler(LRScheduler):
    """One function of the epoch per parameter group (``lr_lambda``, or a list of them). In
    ``state_dict`` a plain function or lambda is saved as None and a callable object as its
    ``__dict__``, as in PyTorch."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"{type(self).__name__}: Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    _packed = {"lr_lambdas": (lambda fns: [function_state(fn) for fn in fns], _restore_functions)}


class LambdaLR(_FunctionScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one function, or one per group).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=2.0)
    >>> s = LambdaLR(opt, lambda e: 1 / (e + 1)); s.step(); s.get_last_lr()
    [1.0]
    """

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_FunctionScheduler):
    """Multiply each group's lr by ``lr_lambda(epoch)`` at every step after the first.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = MultiplicativeLR(opt, lambda e: 0.5)
    >>> [(s.step(), s.get_last_lr()[0])[1] for _ in range(3)]
    [0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        for fn in lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]:
            if not callable(fn):
                raise TypeError(f"MultiplicativeLR: lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._current()
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


__all__ = ["LambdaLR", "MultiplicativeLR"]
