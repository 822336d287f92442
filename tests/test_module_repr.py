"""print(model) as PyTorch prints it: each layer's repr (its extra_repr options) against torch's,
for layers built the same way under both libraries, on every backend."""
import pytest
import torch

import webgrad as wg

LAYERS = [
    "Linear(3, 4)", "Linear(3, 4, bias=False)", "Bilinear(2, 3, 4)", "Identity()", "Flatten()", "Unflatten(1, (2, 2))",
    "Conv1d(2, 3, 3)", "Conv2d(1, 6, 5)", "Conv2d(2, 4, 3, stride=2, padding=1, bias=False)",
    "Conv2d(4, 4, 3, groups=2, dilation=2)", "ConvTranspose2d(2, 3, 3, stride=2, output_padding=1)",
    "MaxPool2d(2)", "MaxPool2d(3, stride=2, padding=1)", "AvgPool2d(2)", "MaxPool1d(2)", "AvgPool1d(3, stride=1)",
    "AvgPool3d(2)", "AdaptiveAvgPool2d((1, 1))", "AdaptiveMaxPool2d(2)", "MaxUnpool1d(2)", "MaxUnpool2d(2)",
    "MaxUnpool3d(2, stride=1)", "LPPool1d(2, 3)",
    "BatchNorm1d(128)", "BatchNorm2d(3, affine=False)", "BatchNorm1d(3, bias=False)", "BatchNorm3d(2)",
    "InstanceNorm2d(3, affine=True)", "InstanceNorm1d(3)", "InstanceNorm3d(2, affine=True, bias=False)",
    "LayerNorm(4)", "LayerNorm((2, 3), elementwise_affine=False)", "LayerNorm(4, bias=False)", "GroupNorm(2, 4)",
    "GroupNorm(1, 3, affine=False)", "GroupNorm(1, 3, bias=False)", "RMSNorm(4)", "LocalResponseNorm(2)",
    "Dropout(0.1)", "Dropout(p=0.5, inplace=True)", "Dropout2d(0.2)",
    "ReLU()", "ReLU(inplace=True)", "LeakyReLU(0.2)", "GELU()", "GELU(approximate='tanh')", "Softmax(dim=1)",
    "Softplus()", "Hardtanh()", "PReLU()", "Threshold(0.1, 20)", "Hardshrink()", "Softshrink(0.3)", "RReLU()",
    "GLU()", "Softmin(dim=1)",
    "Embedding(10, 3)", "Embedding(10, 3, padding_idx=0)", "LSTM(3, 4)",
    "LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)", "GRU(3, 4)", "LSTMCell(3, 4)",
    "MSELoss()", "CrossEntropyLoss()", "NLLLoss()", "BCEWithLogitsLoss()", "L1Loss()", "SmoothL1Loss()",
    "KLDivLoss()", "HuberLoss()", "TripletMarginLoss()", "GaussianNLLLoss()", "CosineEmbeddingLoss()",
    "Upsample(scale_factor=2)", "Upsample(scale_factor=(2, 3))", "Upsample(size=4, mode='bilinear')",
    "PixelShuffle(2)", "ZeroPad2d(1)", "ZeroPad1d(1)", "ReflectionPad1d(2)", "ConstantPad2d(1, 0.5)",
    "ConstantPad3d(1, 2.0)", "MultiheadAttention(8, 2)", "TransformerEncoderLayer(8, 2, 16)",
    "Sequential(Linear(2, 3), ReLU())", "ModuleDict({'a': Linear(1, 1)})",
    "ParameterDict({'a': Parameter(ones(2, 3)), 'b': Parameter(ones(1))})",
]


def build(lib, text):
    return eval(text, {**vars(lib.nn), "ones": lib.ones, "Parameter": lib.nn.Parameter})   # noqa: S307


@pytest.mark.parametrize("text", LAYERS)
def test_layer_repr_as_torch(text, backend):
    assert repr(build(wg, text)) == repr(build(torch, text))


def test_parameter_list_repr_names_webgrads_dtype():
    """PyTorch's layout (indented lines, sizes as 2x3); the dtype is webgrad's, as everywhere it prints."""
    want = repr(build(torch, "ParameterList([Parameter(ones(2, 3)), Parameter(ones(1))])"))
    got = repr(build(wg, "ParameterList([Parameter(ones(2, 3)), Parameter(ones(1))])"))
    assert got == want.replace("torch.float32", "webgrad.float32") and "of size 2x3" in got
