"""The layers of ``webgrad.nn`` (each file a family, all exported from ``webgrad.nn``)."""
from .activation import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .activation_more import *  # noqa: F401,F403
from .parameters import *  # noqa: F401,F403
from .resampling import *  # noqa: F401,F403
from .loss_margin import *  # noqa: F401,F403
from .instance_norm import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .fractional import *  # noqa: F401,F403
from . import activation, container, conv, dropout, linear, loss, normalization, pooling, rnn, shape, sparse, \
    transformer
from . import activation_more, parameters, resampling, loss_margin, instance_norm, fold, lazy, adaptive, fractional

__all__ = [n for m in (activation, container, conv, dropout, linear, loss, normalization, pooling, rnn, shape, sparse,
                       transformer, activation_more, parameters, resampling, loss_margin, instance_norm, fold, lazy, adaptive,
                       fractional) for n in m.__all__]
