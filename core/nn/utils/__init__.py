"""PyTorch's ``torch.nn.utils``: gradient clipping, flat parameter vectors, weight and spectral
normalization (hooks and ``parametrizations``), ``parametrize``, ``prune``, batch-norm fusion,
``stateless`` and ``rnn`` (padding and packing of variable-length sequences).

>>> import webgrad as wg
>>> wg.nn.utils.rnn.pad_sequence([wg.ones(2), wg.ones(1)]).tolist()
[[1.0, 1.0], [1.0, 0.0]]
"""
from . import rnn  # noqa: F401
from . import parametrize, parametrizations, prune, stateless  # noqa: F401
from .clip_grad import *  # noqa: F401,F403
from .convert_parameters import *  # noqa: F401,F403
from .fusion import *  # noqa: F401,F403
from .init import *  # noqa: F401,F403
from .memory_format import *  # noqa: F401,F403
from .norm_hooks import *  # noqa: F401,F403
from . import clip_grad, convert_parameters, fusion, init, memory_format, norm_hooks

__all__ = (clip_grad.__all__ + convert_parameters.__all__ + fusion.__all__ + init.__all__ + memory_format.__all__
           + norm_hooks.__all__)
