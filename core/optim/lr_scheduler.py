"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler``).

A scheduler rewrites ``group["lr"]`` of its optimizer each time ``step()`` is called
(once per epoch, or per batch for OneCycleLR). StepLR, MultiStepLR, ExponentialLR and
CosineAnnealingLR use PyTorch's recursive forms, so schedulers can be chained on one
optimizer exactly as in PyTorch.
"""
from __future__ import annotations

import math
from collections import Counter


class LRScheduler:
    """Base class: remembers each group's ``initial_lr`` and calls ``get_lr`` on every ``step``.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> sched = StepLR(opt, step_size=2, gamma=0.5)
    >>> [(opt.step(), sched.step(), sched.get_last_lr()[0])[2] for _ in range(4)]
    [1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, last_epoch: int = -1):
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an optimizer")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list:
        """The learning rates for the current ``last_epoch`` (subclasses define it)."""
        raise NotImplementedError

    def step(self) -> None:
        """Advance one epoch (or batch) and set every group's ``lr``."""
        self._step_count += 1
        self.last_epoch += 1
        lrs = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set."""
        return self._last_lr

    def state_dict(self) -> dict:
        """Everything but the optimizer (and any functions), to resume the schedule."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict``."""
        self.__dict__.update(state_dict)

    def _current(self):
        return [g["lr"] for g in self.optimizer.param_groups]


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one function, or one per group).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=2.0)
    >>> s = LambdaLR(opt, lambda e: 1 / (e + 1)); s.step(); s.get_last_lr()
    [1.0]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"LambdaLR: expected {n} lr_lambdas, got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch in ``milestones``.

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
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class CosineAnnealingLR(LRScheduler):
    """Anneal from ``initial_lr`` to ``eta_min`` along half a cosine over ``T_max`` epochs:
    ``eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``.

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
        if e == 0:
            return self._current()
        if self._step_count == 1 and e > 0:
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / T)) / 2 for base in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for lr, base in zip(self._current(), self.base_lrs)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (lr - lo) + lo
                for lr in self._current()]


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: warm up from ``max_lr/div_factor`` to ``max_lr``
    over ``pct_start`` of the steps, then anneal to ``initial_lr/final_div_factor``; momentum (or
    Adam's beta1) cycles the opposite way between ``max_momentum`` and ``base_momentum``.

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=0.1, momentum=0.9)
    >>> s = OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> [round(lr, 6) for lr in s.get_last_lr()]
    [0.04]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"OneCycleLR: expected a positive integer total_steps, got {total_steps}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: expected pct_start in [0, 1], got {pct_start}")
        self.total_steps, self.anneal_strategy, self.cycle_momentum = total_steps, anneal_strategy, cycle_momentum
        up = float(pct_start * total_steps) - 1
        self._phases = ([(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                         (2 * up, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                         (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
                        if three_phase else
                        [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                         (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")])
        groups = optimizer.param_groups
        self.use_beta1 = "betas" in optimizer.defaults
        if cycle_momentum and not self.use_beta1 and "momentum" not in optimizer.defaults:
            raise ValueError("OneCycleLR: optimizer must support momentum or beta1 with `cycle_momentum` option "
                             "enabled")
        if last_epoch == -1:
            for g, top, mmax, mbase in zip(groups, _per_group(max_lr, groups), _per_group(max_momentum, groups),
                                           _per_group(base_momentum, groups)):
                g.update(initial_lr=top / div_factor, max_lr=top, min_lr=top / div_factor / final_div_factor)
                if cycle_momentum:
                    g.update(max_momentum=mmax, base_momentum=mbase)
                    self._set_momentum(g, mmax)
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; the specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(g[lr0], g[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(g, self._anneal(g[m0], g[m1], pct))
                    break
                start = end
        return lrs


def _per_group(value, groups):
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"OneCycleLR: expected {len(groups)} values (one per group), got {len(value)}")
        return list(value)
    return [value] * len(groups)


__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "OneCycleLR"]
