"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler``).

>>> import webgrad as wg
>>> from webgrad.optim.lr_scheduler import CosineAnnealingLR
>>> opt = wg.optim.SGD([wg.nn.Parameter(wg.ones(1))], lr=1.0)
>>> sched = CosineAnnealingLR(opt, T_max=4)
>>> [round((opt.step(), sched.step(), sched.get_last_lr()[0])[2], 4) for _ in range(4)]
[0.8536, 0.5, 0.1464, 0.0]
"""
from .sched_base import LRScheduler
from .sched_composite import ChainedScheduler, SequentialLR
from .sched_cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .sched_cyclic import CyclicLR, OneCycleLR
from .sched_decay import ConstantLR, ExponentialLR, LinearLR, MultiStepLR, PolynomialLR, StepLR
from .sched_lambdas import LambdaLR, MultiplicativeLR
from .sched_plateau import ReduceLROnPlateau

_LRScheduler = LRScheduler   # PyTorch's old name, still used by older scripts

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
           "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"]
