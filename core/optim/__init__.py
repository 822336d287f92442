"""Optimizers (PyTorch's ``torch.optim``) and their learning-rate schedules.

>>> import webgrad as wg
>>> model = wg.nn.Linear(2, 1)
>>> opt = wg.optim.Adam(model.parameters(), lr=1e-2)
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
