"""PyTorch's module layout: ``torch.nn.modules.<file>.<Class>`` names, over webgrad.nn's classes.

Scripts reach layers through PyTorch's file layout: ``from torch.nn.modules.loss import _Loss`` to
subclass a loss, ``isinstance(m, nn.modules.batchnorm._BatchNorm)`` to keep norms out of weight
decay, ``torch.nn.modules.rnn.LSTM`` in an allowlist. ``LAYOUT`` is PyTorch's table of which file
holds which class; each file is a module here (``webgrad.nn.modules.rnn``, importable) holding the
classes webgrad has, the same objects as ``webgrad.nn``'s. A class webgrad lacks raises
AttributeError pointing at docs/porting.md.

>>> import webgrad as wg
>>> from webgrad.nn.modules.loss import _Loss
>>> wg.nn.modules.rnn.LSTM is wg.nn.LSTM, issubclass(wg.nn.MSELoss, _Loss)
(True, True)
"""
from __future__ import annotations

import sys
import types

from ..porting_table import module_getattr
from . import layers
from .module import Module

# PyTorch's file -> the classes it defines there (public ones, and the private bases scripts subclass)
LAYOUT = {
    "activation": ("Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
                   "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
                   "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU", "Softsign", "Tanhshrink",
                   "Softmin", "Softmax", "Softmax2d", "LogSoftmax"),
    "adaptive": ("AdaptiveLogSoftmaxWithLoss",),
    "batchnorm": ("_NormBase", "_BatchNorm", "BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d",
                  "BatchNorm3d", "LazyBatchNorm3d", "SyncBatchNorm"),
    "channelshuffle": ("ChannelShuffle",),
    "container": ("Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"),
    "conv": ("_ConvNd", "Conv1d", "Conv2d", "Conv3d", "_ConvTransposeNd", "ConvTranspose1d", "ConvTranspose2d",
             "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
             "LazyConvTranspose2d", "LazyConvTranspose3d"),
    "distance": ("PairwiseDistance", "CosineSimilarity"),
    "dropout": ("_DropoutNd", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"),
    "flatten": ("Flatten", "Unflatten"),
    "fold": ("Fold", "Unfold"),
    "instancenorm": ("_InstanceNorm", "InstanceNorm1d", "LazyInstanceNorm1d", "InstanceNorm2d", "LazyInstanceNorm2d",
                     "InstanceNorm3d", "LazyInstanceNorm3d"),
    "lazy": ("LazyModuleMixin",),
    "linear": ("Identity", "Linear", "NonDynamicallyQuantizableLinear", "Bilinear", "LazyLinear"),
    "loss": ("_Loss", "_WeightedLoss", "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss",
             "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
             "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss", "LinearCrossEntropyLoss",
             "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss",
             "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"),
    "module": ("Module",),
    "normalization": ("LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"),
    "padding": tuple(f"{kind}Pad{n}d" for kind in ("Circular", "Constant", "Reflection", "Replication", "Zero")
                     for n in (1, 2, 3)),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "pooling": ("_MaxPoolNd", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
                "_AvgPoolNd", "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
                "LPPool1d", "LPPool2d", "LPPool3d", "_AdaptiveMaxPoolNd", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
                "AdaptiveMaxPool3d", "_AdaptiveAvgPoolNd", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
                "AdaptiveAvgPool3d"),
    "rnn": ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "transformer": ("Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                    "TransformerDecoderLayer"),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
}


def _webgrad_class(name: str):
    """webgrad's class of PyTorch's name: webgrad.nn's, or a private base one of its layer files defines."""
    if name == "Module":
        return Module
    if not name.startswith("_"):
        return getattr(layers, name, None)
    for file in vars(layers).values():
        found = getattr(file, name, None) if isinstance(file, types.ModuleType) else None
        if isinstance(found, type):
            return found
    return None


def _file_module(file: str, names: tuple) -> types.ModuleType:
    qualname = f"{__name__}.{file}"
    module = types.ModuleType(qualname, f"PyTorch's ``torch.nn.modules.{file}``: the classes webgrad has of it.")
    found = {name: cls for name in names if (cls := _webgrad_class(name)) is not None}
    module.__dict__.update(found, __all__=[n for n in found if not n.startswith("_")],
                           __getattr__=module_getattr(qualname))
    sys.modules[qualname] = module
    return module


__all__ = []
for _file, _names in LAYOUT.items():
    _module = globals()[_file] = _file_module(_file, _names)
    globals().update({n: getattr(_module, n) for n in _module.__all__})
    __all__ += _module.__all__
del _file, _names, _module
__getattr__ = module_getattr(__name__)
