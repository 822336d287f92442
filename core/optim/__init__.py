"""Optimizers (PyTorch's ``torch.optim``) and their learning-rate schedules.

>>> import webgrad as wg
>>> model = wg.nn.Linear(2, 1)
>>> opt = wg.optim.Adam(model.parameters(), lr=1e-2)
"""
from . import lr_scheduler, swa_utils  # noqa: F401
from .adafactor import Adafactor
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "Rprop", "LBFGS", "Adafactor", "Muon", "SparseAdam", "lr_scheduler", "swa_utils"]
