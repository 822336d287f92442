"""Schedulers made of schedulers: ``SequentialLR`` (one after another, switching at milestones)
and ``ChainedScheduler`` (all stepped together)."""
from __future__ import annotations

from bisect import bisect_right

from .sched_base import LRScheduler, group_values, set_group_value
from .sched_plateau import ReduceLROnPlateau


def _check_members(name, schedulers, optimizer):
    """Each scheduler has an ``optimizer``, is not a ReduceLROnPlateau, and drives ``optimizer``."""
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{name}: the scheduler at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             f"kwargs to be specified when calling `step`, but got one at index {i} in the given "
                             f"schedulers sequence.")
        if s.optimizer is not optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(s).__name__} at index {i} with a different optimizer than "
                             f"{type(optimizer).__name__}.")


def _load_members(members, saved):
    for scheduler, state in zip(members, saved):
        scheduler.load_state_dict(state)


class _Composite(LRScheduler):
    """``state_dict`` holds each member scheduler's own state dict."""

    _packed = {"_schedulers": (lambda members: [s.state_dict() for s in members], _load_members)}


class SequentialLR(_Composite):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` (restarted at its
    epoch 0) and so on.

    >>> import webgrad as wg
    >>> from webgrad.optim.lr_scheduler import ConstantLR, ExponentialLR
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> warm = ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> s = SequentialLR(opt, [warm, decay], milestones=[2])
    >>> [round(x, 6) for x in [s.get_last_lr()[0]] + [(s.step(), s.get_last_lr()[0])[1] for _ in range(4)]]
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        _check_members(type(self).__name__, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects number of schedulers provided to be one more than the number of "
                             f"milestone points, but got number of schedulers {len(schedulers)} and the number of "
                             f"milestones to be equal to {len(milestones)}")
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch, self.optimizer = last_epoch + 1, optimizer
        for group in optimizer.param_groups:          # undo the members' initial steps
            set_group_value(group, "lr", group["initial_lr"])
        _rewind(self)
        first = self._schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one epoch on the scheduler whose turn it is (restarting it at a milestone)."""
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _rewind(scheduler):
    """Take one epoch off ``scheduler`` and, recursively, off every member of a composite."""
    members = getattr(scheduler, "_schedulers", None)
    if members is not None:
        for s in members:
            _rewind(s)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ChainedScheduler(_Composite):
    """Step every scheduler in ``schedulers`` on each ``step`` (their effects compose).

    >>> import webgrad as wg
    >>> from webgrad.optim.lr_scheduler import ExponentialLR, StepLR
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> s = ChainedScheduler([ExponentialLR(opt, 0.5), StepLR(opt, 2, gamma=0.1)])
    >>> [round((s.step(), s.get_last_lr()[0])[1], 6) for _ in range(2)]
    [0.5, 0.025]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(type(self).__name__, schedulers, optimizer)
        self._schedulers, self.optimizer = schedulers, optimizer
        self._last_lr = group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every member scheduler."""
        for s in self._schedulers:
            s.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")


__all__ = ["SequentialLR", "ChainedScheduler"]
