"""More of torch.nn: the activations of nn/functional/activation_more.py and their modules,
normalize/rms_norm/cosine_similarity/pairwise_distance, pixel_shuffle, channel dropout,
Upsample and the padding modules, RMSNorm, PReLU, ParameterList/ParameterDict; against torch on
every backend (forward and gradients), finite differences on cpu."""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F
from opinfo import OpCase, op_tests
from test_elementary import torch_ref

rng = np.random.default_rng(3)


def off_kinks(*shape, kinks=(0.0,), gap=0.05, lo=-4.0, hi=4.0):
    """Values in [lo, hi] at least ``gap`` from each of ``kinks``."""
    x = rng.uniform(lo, hi, shape)
    for k in kinks:
        x = np.where(np.abs(x - k) < gap, x + 2 * gap, x)
    return x


ACTIVATIONS = {
    "relu6": ((), (0.0, 6.0)), "hardtanh": ((-0.5, 2.0), (-0.5, 2.0)), "hardswish": ((), (-3.0, 3.0)),
    "hardsigmoid": ((), (-3.0, 3.0)), "selu": ((), (0.0,)), "celu": ((0.7,), (0.0,)), "mish": ((), ()),
    "softsign": ((), (0.0,)), "logsigmoid": ((), ()), "tanhshrink": ((), ()), "softshrink": ((0.3,), (-0.3, 0.3)),
    "hardshrink": ((0.3,), (-0.3, 0.3)), "threshold": ((0.5, -2.0), (0.5,)),
}

CASES = [OpCase(f"F.{name}", lambda x, n=name, a=args: getattr(F, n)(x, *a),
                torch_ref(lambda x, n=name, a=args: getattr(TF, n)(x, *a)), [off_kinks(3, 5, kinks=kinks)])
         for name, (args, kinks) in ACTIVATIONS.items()]
CASES += [
    OpCase("F.softmin", lambda x: F.softmin(x, dim=1), torch_ref(lambda x: TF.softmin(x, dim=1)), [off_kinks(3, 4)]),
    OpCase("F.glu", lambda x: F.glu(x, 0), torch_ref(lambda x: TF.glu(x, 0)), [off_kinks(4, 3)]),
    OpCase("F.prelu", F.prelu, torch_ref(TF.prelu), [off_kinks(2, 3, 4), rng.uniform(0.1, 0.5, (3,))]),
    OpCase("F.prelu_one", F.prelu, torch_ref(TF.prelu), [off_kinks(5), rng.uniform(0.1, 0.5, (1,))]),
    OpCase("F.normalize", lambda x: F.normalize(x, dim=-1), torch_ref(lambda x: TF.normalize(x, dim=-1)),
           [off_kinks(3, 4)]),
    OpCase("F.normalize_p1", lambda x: F.normalize(x, p=1.0, dim=0), torch_ref(lambda x: TF.normalize(x, p=1.0, dim=0)),
           [off_kinks(3, 4)]),
    OpCase("F.rms_norm", lambda x, w: F.rms_norm(x, (4,), w, 1e-5),
           torch_ref(lambda x, w: TF.rms_norm(x, (4,), w, 1e-5)), [off_kinks(3, 4), off_kinks(4)]),
    OpCase("F.cosine_similarity", lambda a, b: F.cosine_similarity(a, b, dim=1),
           torch_ref(lambda a, b: TF.cosine_similarity(a, b, dim=1)), [off_kinks(3, 4), off_kinks(1, 4)]),
    OpCase("F.pairwise_distance", F.pairwise_distance, torch_ref(TF.pairwise_distance),
           [off_kinks(3, 4), off_kinks(3, 4)]),
    OpCase("F.pairwise_distance_p1", lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True),
           torch_ref(lambda a, b: TF.pairwise_distance(a, b, p=1.0, keepdim=True)), [off_kinks(3, 4), off_kinks(4)]),
    OpCase("F.pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), torch_ref(lambda x: TF.pixel_shuffle(x, 2)),
           [rng.standard_normal((2, 8, 2, 3))]),
    OpCase("F.pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), torch_ref(lambda x: TF.pixel_unshuffle(x, 2)),
           [rng.standard_normal((2, 2, 4, 6))]),
]
globals().update(op_tests(CASES))


MODULES = {
    "ReLU6": lambda m: m.ReLU6(), "Hardtanh": lambda m: m.Hardtanh(-2.0, 1.5), "Hardswish": lambda m: m.Hardswish(),
    "Hardsigmoid": lambda m: m.Hardsigmoid(), "Mish": lambda m: m.Mish(), "SELU": lambda m: m.SELU(),
    "CELU": lambda m: m.CELU(0.5), "LogSigmoid": lambda m: m.LogSigmoid(), "Softsign": lambda m: m.Softsign(),
    "Tanhshrink": lambda m: m.Tanhshrink(), "Softshrink": lambda m: m.Softshrink(0.4),
    "Hardshrink": lambda m: m.Hardshrink(), "Threshold": lambda m: m.Threshold(0.2, 9.0),
    "Softmin": lambda m: m.Softmin(dim=1), "GLU": lambda m: m.GLU(1), "Softmax2d": lambda m: m.Softmax2d(),
    "PReLU": lambda m: m.PReLU(2, init=0.1), "RMSNorm": lambda m: m.RMSNorm([3, 4], eps=1e-6),
    "Upsample": lambda m: m.Upsample(scale_factor=2, mode="bilinear"),
    "UpsamplingNearest2d": lambda m: m.UpsamplingNearest2d(size=(5, 7)),
    "UpsamplingBilinear2d": lambda m: m.UpsamplingBilinear2d(scale_factor=2),
    "PixelShuffle": lambda m: m.PixelShuffle(1), "ZeroPad2d": lambda m: m.ZeroPad2d((1, 0, 2, 1)),
    "ConstantPad2d": lambda m: m.ConstantPad2d(1, 3.5), "ConstantPad1d": lambda m: m.ConstantPad1d((2, 1), -1.0),
    "ReflectionPad2d": lambda m: m.ReflectionPad2d(1), "ReplicationPad2d": lambda m: m.ReplicationPad2d((2, 0, 1, 1)),
    "CircularPad2d": lambda m: m.CircularPad2d(1), "ZeroPad1d": lambda m: m.ZeroPad1d(2),
    "Dropout2d_eval": lambda m: m.Dropout2d(0.5).eval(),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_as_pytorch(name, backend):
    x = off_kinks(2, 2, 3, 4, kinks=(0.0, 0.2, 0.4, -0.4, 1.5, -2.0, 3.0, -3.0))
    ours, theirs = MODULES[name](nn), MODULES[name](tnn)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert tuple(p.shape) == tuple(tp.shape)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    w = wg.tensor(x.astype(np.float32), device=backend, requires_grad=True)
    t = torch.tensor(x.astype(np.float32), requires_grad=True)
    y, ty = ours.to(backend)(w), theirs(t)
    assert y.shape == tuple(ty.shape)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(ty.shape).astype(np.float32)
    (y * wg.tensor(g, device=backend)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["relu6", "hardtanh", "hardswish", "hardsigmoid", "selu", "celu", "mish", "threshold"])
def test_inplace_activations_write_into_the_input(name, backend):
    args = ACTIVATIONS[name][0]
    x = wg.tensor([-5.0, -0.5, 0.5, 7.0], device=backend)
    t = torch.tensor([-5.0, -0.5, 0.5, 7.0])
    out = getattr(F, name)(x, *args, inplace=True)
    getattr(TF, name)(t, *args, inplace=True)
    assert out is x
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-6)


def test_channel_dropout_zeroes_whole_channels(backend):
    wg.manual_seed(0)
    for fn, shape in ((F.dropout1d, (4, 16, 5)), (F.dropout2d, (4, 16, 3, 5)), (F.dropout3d, (2, 16, 2, 3, 2))):
        y = fn(wg.ones(*shape, device=backend), p=0.5).numpy()
        per_channel = y.reshape(shape[0], shape[1], -1)
        assert np.all((per_channel == 0) | (per_channel == 2.0))
        assert np.all(per_channel.min(-1) == per_channel.max(-1)), "a channel was partly dropped"
        assert 0 < (per_channel[..., 0] == 0).mean() < 1
    assert F.dropout2d(wg.ones(3, 2, 2), training=False).tolist() == [[[1.0, 1.0]] * 2] * 3
    with pytest.raises(RuntimeError, match="dropout2d"):
        F.dropout2d(wg.ones(2, 2))


def test_parameter_containers_as_pytorch():
    ours = nn.ParameterList([nn.Parameter(wg.ones(2)), wg.zeros(3)])
    theirs = tnn.ParameterList([tnn.Parameter(torch.ones(2)), torch.zeros(3)])
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0", "1"]
    assert isinstance(ours[1], nn.Parameter) and len(ours) == 2 and ours[-1].shape == (3,)
    ours.append(wg.ones(1))
    assert len(list(ours.parameters())) == 3

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterDict({"a": nn.Parameter(wg.ones(1)), "b": wg.full((2,), 2.0)})

    net = Net()
    assert sorted(net.state_dict()) == ["scales.a", "scales.b"]
    assert "a" in net.scales and net.scales["b"].tolist() == [2.0, 2.0] and isinstance(net.scales["b"], nn.Parameter)
    loss = net.scales["a"].sum() * 3 + net.scales["b"].sum()
    loss.backward()
    assert net.scales["a"].grad.tolist() == [3.0] and net.scales["b"].grad.tolist() == [1.0, 1.0]
    assert net.scales.pop("a").shape == (1,) and list(net.scales.keys()) == ["b"]


def test_refusals_as_pytorch():
    with pytest.raises(RuntimeError, match="glu"):
        F.glu(wg.ones(3))
    with pytest.raises(ValueError, match="hardtanh"):
        F.hardtanh(wg.ones(2), 1.0, -1.0)
    with pytest.raises(RuntimeError, match="pixel_shuffle"):
        F.pixel_shuffle(wg.ones(1, 3, 2, 2), 2)
    with pytest.raises(ValueError, match="ZeroPad2d"):
        nn.ZeroPad2d((1, 2))
    for name, error in (("CircularPad1d", ValueError), ("ReflectionPad1d", NotImplementedError),
                        ("ReplicationPad1d", NotImplementedError)):
        with pytest.raises(error, match=r"2D or 3D|4D input"):
            getattr(nn, name)(1)(wg.ones(1, 1, 2, 2))
        with pytest.raises(error):
            getattr(tnn, name)(1)(torch.ones(1, 1, 2, 2))
    with pytest.raises(TypeError, match="out="):
        F.normalize(wg.ones(2), out=wg.ones(2))
    with pytest.warns(FutureWarning, match="min_val"):
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0


@pytest.mark.parametrize("name", ["relu6", "hardtanh", "hardsigmoid", "hardswish"])
def test_piecewise_activation_gradients_at_their_bounds_as_pytorch(backend, name):
    """PyTorch's backward kernels give 0 at the bounds themselves (clamp's gradient passes there)."""
    values = [-3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 2.5]
    ours, theirs = wg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    getattr(wg.nn.functional, name)(ours).sum().backward()
    getattr(torch.nn.functional, name)(theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.tolist(), theirs.grad.tolist(), rtol=1e-6, atol=1e-7)
