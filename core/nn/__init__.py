"""Neural-network building blocks (PyTorch's ``torch.nn``): ``Module``, ``Parameter``, the layers,
loss modules, ``init``, ``utils`` and ``functional``.

>>> import webgrad as wg
>>> net = wg.nn.Sequential(wg.nn.Linear(4, 8), wg.nn.ReLU(), wg.nn.Linear(8, 3))
>>> net(wg.ones(2, 4)).shape
webgrad.Size([2, 3])
"""
from . import functional  # noqa: F401
from . import init, utils  # noqa: F401
from .layers import *  # noqa: F401,F403
from .module import Module
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .factory import factory_kwargs  # noqa: F401
from . import modules  # noqa: F401,E402  (PyTorch's file layout: webgrad.nn.modules.rnn.LSTM ...)
from . import parallel  # noqa: F401,E402  (DistributedDataParallel; MPI only once a process group starts)
from .parallel import DataParallel  # noqa: F401,E402
from ..porting_table import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("webgrad.nn")
