"""Stochastic weight averaging and exponential moving averages of a model (PyTorch's
``torch.optim.swa_utils``): ``AveragedModel`` keeps the running average of a model's parameters,
``SWALR`` anneals the learning rate to a constant ``swa_lr``, ``update_bn`` recomputes batch-norm
statistics for the averaged weights."""
from __future__ import annotations

import copy
import itertools
import math

from ..dtypes import int64
from ..engine import no_grad
from ..nn.layers.normalization import _BatchNorm
from ..nn.module import Module
from ..tensor import tensor
from ._updates import lerp
from .sched_base import LRScheduler, per_group


def _check_decay(decay):
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place ``multi_avg_fn``: each averaged tensor moves ``1 - decay`` of the way to the
    model's (``lerp``; integer tensors ``ema * decay + p * (1 - decay)``)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            for ema, p in zip(ema_param_list, current_param_list, strict=True):
                value = lerp(ema, p, 1 - decay) if ema.dtype.is_floating else ema * decay + p * (1 - decay)
                ema.copy_(value)
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place ``multi_avg_fn``: the equal-weight running mean (``lerp`` by ``1 / (n + 1)``)."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = num_averaged.item() if hasattr(num_averaged, "item") else num_averaged
        with no_grad():
            for avg, p in zip(averaged_param_list, current_param_list, strict=True):
                value = lerp(avg, p, 1 / (n + 1)) if avg.dtype.is_floating else avg + (p - avg) / (n + 1)
                avg.copy_(value)
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An ``avg_fn``: ``decay * ema + (1 - decay) * p``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """An ``avg_fn``: ``avg + (p - avg) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the average of
    the models given to ``update_parameters``: equal weights by default, or ``avg_fn`` /
    ``multi_avg_fn`` (e.g. ``get_ema_multi_avg_fn(0.99)``); calling it runs the copy.

    >>> import webgrad as wg
    >>> model = wg.nn.Linear(1, 1); swa = AveragedModel(model)
    >>> for value in (1.0, 3.0):
    ...     _ = model.weight.data.fill_(value); swa.update_parameters(model)
    >>> swa.module.weight.item(), swa.n_averaged.item()
    (2.0, 2)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("AveragedModel: Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        return list(itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else
                    model.parameters())

    def update_parameters(self, model) -> None:
        """Fold ``model``'s current values into the average (the first call copies them)."""
        mine = [t.detach() for t in self._tensors(self.module)]
        theirs = [t.detach().to(a.device) for a, t in zip(mine, self._tensors(model))]
        n = self.n_averaged.item()
        with no_grad():
            if n == 0:
                for a, t in zip(mine, theirs):
                    a.copy_(t)
            elif self.avg_fn is not None:
                for a, t in zip(mine, theirs):
                    a.copy_(self.avg_fn(a, t, self.n_averaged))
            else:
                (self.multi_avg_fn or get_swa_multi_avg_fn())(mine, theirs, self.n_averaged)
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(b_model.detach().to(b_swa.device))
            self.n_averaged.copy_(self.n_averaged + 1)


def update_bn(loader, model, device=None) -> None:
    """Recompute every batch norm's running statistics of ``model`` over one pass of ``loader``
    (cumulative averages: momentum None), then restore momenta and the model's mode. A batch that is
    a list or tuple gives its first element.

    >>> import webgrad as wg
    >>> net = wg.nn.Sequential(wg.nn.BatchNorm1d(2))
    >>> update_bn([wg.tensor([[0.0, 2.0], [2.0, 4.0]])], net)
    >>> net[0].running_mean.tolist()
    [1.0, 3.0]
    """
    norms = {m: m.momentum for m in model.modules() if isinstance(m, _BatchNorm)}
    if not norms:
        return
    with no_grad():
        for m in norms:
            m.reset_running_stats()
            m.momentum = None
        was_training = model.training
        model.train()
        for batch in loader:
            batch = batch[0] if isinstance(batch, (list, tuple)) else batch
            model(batch if device is None else batch.to(device))
        for m, momentum in norms.items():
            m.momentum = momentum
        model.train(was_training)


def _linear_anneal(t):
    return t


def _cosine_anneal(t):
    return (1 - math.cos(math.pi * t)) / 2


_ANNEALS = {"cos": _cosine_anneal, "linear": _linear_anneal}


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` steps ('cos' or 'linear'), then
    hold it (PyTorch's ``SWALR``).

    >>> import webgrad as wg
    >>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> [(opt.step(), sched.step(), sched.get_last_lr()[0])[2] for _ in range(3)]
    [0.75, 0.5, 0.5]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in _ANNEALS:
            raise ValueError(f"SWALR: anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self._anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    @property
    def anneal_func(self):
        return _ANNEALS[self._anneal_strategy]

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]


__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]
