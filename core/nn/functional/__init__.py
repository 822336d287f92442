"""Functional neural-network ops (PyTorch's ``torch.nn.functional``), composed from webgrad's ops
and the two window kernels (Im2Col, Col2Im). ``METHODS`` lists the Tensor methods it adds.

>>> import webgrad as wg
>>> import webgrad.nn.functional as F
>>> F.softmax(wg.tensor([1.0, 1.0]), dim=0).tolist()
[0.5, 0.5]
"""
from ...tensor import Tensor
from . import activation as _activation, conv as _conv, dropout as _dropout, interpolate as _interpolate, \
    linear as _linear, loss as _loss, normalization as _normalization, pooling as _pooling, sparse as _sparse
from . import activation_more as _activation_more, distance as _distance, pixel_shuffle as _pixel_shuffle
from . import loss_margin as _loss_margin, pooling_more as _pooling_more, volumetric as _volumetric
from .activation import *  # noqa: F401,F403
from .activation_more import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .pixel_shuffle import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .interpolate import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .loss_margin import *  # noqa: F401,F403
from .pooling_more import *  # noqa: F401,F403
from .volumetric import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .mha import *  # noqa: F401,F403
from .ctc import *  # noqa: F401,F403
from .pool_gather import *  # noqa: F401,F403
from .linear_ce import *  # noqa: F401,F403



def _softmax_method(self, dim, dtype=None):
    """``F.softmax(self, dim, dtype=dtype)`` (Tensor.softmax's signature: no ``_stacklevel``)."""
    return _activation.softmax(self, dim, dtype=dtype)


def _log_softmax_method(self, dim, dtype=None):
    """``F.log_softmax(self, dim, dtype=dtype)``."""
    return _activation.log_softmax(self, dim, dtype=dtype)


METHODS = {"softmax": _softmax_method, "log_softmax": _log_softmax_method}

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

__all__ = [name for m in (_activation, _conv, _dropout, _interpolate, _linear, _loss, _normalization, _pooling,
                          _sparse, _activation_more, _distance, _pixel_shuffle, _loss_margin, _pooling_more, _volumetric) for name in m.__all__]
from ..attention import scaled_dot_product_attention  # noqa: E402,F401  (nn/attention.py)
from ...porting_table import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("webgrad.nn.functional")
