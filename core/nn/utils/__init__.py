"""PyTorch's ``torch.nn.utils``: gradient clipping, flat parameter vectors, and ``rnn``
(padding and packing of variable-length sequences).

>>> import webgrad as wg
>>> wg.nn.utils.rnn.pad_sequence([wg.ones(2), wg.ones(1)]).tolist()
[[1.0, 1.0], [1.0, 0.0]]
"""
from . import rnn  # noqa: F401
from .clip_grad import *  # noqa: F401,F403
from .convert_parameters import *  # noqa: F401,F403
from . import clip_grad, convert_parameters

__all__ = clip_grad.__all__ + convert_parameters.__all__
