"""``print(model)`` shows what PyTorch shows: module reprs (``extra_repr``) against torch's for the
layers scripts build, alone and nested."""
import pytest
import torch

import webgrad as wg


def layers(nn):
    return {
        "Linear": nn.Linear(3, 4), "Linear no bias": nn.Linear(3, 4, bias=False), "Bilinear": nn.Bilinear(2, 3, 4),
        "Conv1d": nn.Conv1d(2, 4, 3, stride=2), "Conv2d": nn.Conv2d(1, 4, 3, padding=1, bias=False),
        "Conv2d groups": nn.Conv2d(4, 8, (3, 5), stride=(2, 1), padding=(1, 2), dilation=2, groups=2),
        "Conv3d": nn.Conv3d(1, 2, 3), "ConvTranspose2d": nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
        "ConvTranspose1d": nn.ConvTranspose1d(2, 2, 3), "BatchNorm1d": nn.BatchNorm1d(3, affine=False),
        "BatchNorm2d": nn.BatchNorm2d(4), "BatchNorm2d no bias": nn.BatchNorm2d(4, bias=False),
        "BatchNorm3d": nn.BatchNorm3d(2, momentum=None), "InstanceNorm2d": nn.InstanceNorm2d(3),
        "InstanceNorm1d affine": nn.InstanceNorm1d(3, affine=True, bias=False), "LayerNorm": nn.LayerNorm(8),
        "LayerNorm no affine": nn.LayerNorm((2, 3), elementwise_affine=False), "GroupNorm": nn.GroupNorm(2, 4),
        "GroupNorm no bias": nn.GroupNorm(2, 4, bias=False), "RMSNorm": nn.RMSNorm(4),
        "LocalResponseNorm": nn.LocalResponseNorm(3), "Embedding": nn.Embedding(10, 3, padding_idx=0),
        "Embedding max_norm": nn.Embedding(10, 3, max_norm=1.0), "EmbeddingBag": nn.EmbeddingBag(10, 3, mode="sum"),
        "ReLU": nn.ReLU(), "ReLU inplace": nn.ReLU(inplace=True), "LeakyReLU": nn.LeakyReLU(0.2), "GELU": nn.GELU(),
        "GELU tanh": nn.GELU(approximate="tanh"), "ELU": nn.ELU(), "Softmax": nn.Softmax(dim=1),
        "LogSoftmax": nn.LogSoftmax(dim=-1), "Tanh": nn.Tanh(), "Sigmoid": nn.Sigmoid(), "SiLU": nn.SiLU(),
        "Softplus": nn.Softplus(beta=2), "Hardtanh": nn.Hardtanh(-2, 2), "PReLU": nn.PReLU(3),
        "Dropout": nn.Dropout(0.2), "Dropout2d": nn.Dropout2d(), "AlphaDropout": nn.AlphaDropout(0.1),
        "MaxPool2d": nn.MaxPool2d(2), "MaxPool2d full": nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        "MaxPool1d": nn.MaxPool1d(2), "AvgPool2d": nn.AvgPool2d(2, stride=1), "AvgPool1d": nn.AvgPool1d(3),
        "AdaptiveAvgPool2d": nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool1d": nn.AdaptiveAvgPool1d(4),
        "AdaptiveMaxPool2d": nn.AdaptiveMaxPool2d(2), "Flatten": nn.Flatten(), "Unflatten": nn.Unflatten(1, (2, 3)),
        "Identity": nn.Identity(), "Upsample": nn.Upsample(scale_factor=2, mode="nearest"),
        "PixelShuffle": nn.PixelShuffle(2), "ZeroPad2d": nn.ZeroPad2d(1), "ConstantPad1d": nn.ConstantPad1d(2, 3.5),
        "ReflectionPad2d": nn.ReflectionPad2d(1), "RNN": nn.RNN(3, 4), "LSTM": nn.LSTM(3, 4, 2, batch_first=True),
        "GRU": nn.GRU(3, 4, bidirectional=True, dropout=0.0), "LSTMCell": nn.LSTMCell(3, 4), "GRUCell": nn.GRUCell(3, 4),
        "RNNCell": nn.RNNCell(3, 4, nonlinearity="relu"), "MultiheadAttention": nn.MultiheadAttention(8, 2),
        "TransformerEncoderLayer": nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
        "TransformerDecoderLayer": nn.TransformerDecoderLayer(8, 2, 16),
        "CrossEntropyLoss": nn.CrossEntropyLoss(), "MSELoss": nn.MSELoss(), "NLLLoss": nn.NLLLoss(),
        "BCEWithLogitsLoss": nn.BCEWithLogitsLoss(), "SmoothL1Loss": nn.SmoothL1Loss(beta=0.5),
        "CosineSimilarity": nn.CosineSimilarity(dim=1), "PairwiseDistance": nn.PairwiseDistance(),
        "Sequential": nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1))),
        "ModuleList": nn.ModuleList([nn.Linear(2, 2), nn.Tanh()]), "ModuleDict": nn.ModuleDict({"a": nn.ReLU()}),
        "ParameterList": nn.ParameterList([nn.Parameter(torch_or(nn).ones(2))]),
    }


def torch_or(nn):
    return torch if nn is torch.nn else wg


@pytest.mark.parametrize("name", list(layers(torch.nn)))
def test_module_repr_is_torch_repr(name):
    theirs = repr(layers(torch.nn)[name]).replace("torch.", "webgrad.")
    assert repr(layers(wg.nn)[name]) == theirs
