"""nn.Buffer, the lazy layers (LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*,
UninitializedParameter/Buffer), SyncBatchNorm outside a distributed run, Container and
factory_kwargs, against torch."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

CONVS = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
         "LazyConvTranspose3d"]
NORMS = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
         "LazyInstanceNorm3d"]


def test_buffer_registers_on_assignment(backend):
    class M(wg.nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = wg.nn.Buffer(wg.ones(2))
            self.scratch = wg.nn.Buffer(wg.zeros(1), persistent=False)
    m = M()
    assert list(m.state_dict()) == ["kept"] and [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert isinstance(m.kept, wg.nn.Buffer) and isinstance(m.kept, wg.Tensor) and not m.kept.requires_grad
    source = wg.ones(2, requires_grad=True)
    b = wg.nn.Buffer(source)
    assert b.requires_grad and b.is_leaf and b.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="parameter 'weight'"):
        wg.nn.Linear(2, 2).weight = wg.nn.Buffer(wg.ones(2, 2))


def test_uninitialized_tensors_materialize_in_place():
    p = wg.nn.UninitializedParameter()
    opt = wg.optim.SGD([p], lr=1.0)
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad
    p.materialize((2, 3))
    assert type(p) is wg.nn.Parameter and p.shape == (2, 3) and opt.param_groups[0]["params"][0] is p
    b = wg.nn.UninitializedBuffer(persistent=False)
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    b.materialize(4, dtype=wg.float64)
    assert b.shape == (4,) and b.dtype == wg.float64


@pytest.mark.parametrize("name", CONVS)
def test_lazy_convs_against_torch(backend, name):
    dims = int(name[-2])
    tm, wm = getattr(torch.nn, name)(4, 3, stride=2), getattr(wg.nn, name)(4, 3, stride=2)
    assert repr(wm) == repr(tm) and wm.has_uninitialized_params()
    opt = wg.optim.SGD(wm.parameters(), lr=0.1)   # built before the shapes are known
    x = np.random.default_rng(0).standard_normal((2, 2) + (6,) * dims).astype("float32")
    tm(torch.tensor(x)); wm(wg.tensor(x))
    assert repr(wm) == repr(tm) and type(wm).__name__ == type(tm).__name__
    assert wm.weight.shape == tuple(tm.weight.shape) and type(wm.weight) is wg.nn.Parameter
    wm.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(np.asarray(wm(wg.tensor(x)).tolist()), tm(torch.tensor(x)).detach().numpy(),
                               atol=1e-5)
    wm(wg.tensor(x)).sum().backward()
    opt.step()
    assert not np.allclose(np.asarray(wm.weight.tolist()), tm.weight.detach().numpy())   # the optimizer trained it
    with pytest.raises(ValueError, match="Expected"):
        getattr(wg.nn, name)(4, 3)(wg.ones(*(2,) * (dims + 3)))


@pytest.mark.parametrize("name", NORMS)
def test_lazy_norms_against_torch(backend, name):
    dims = int(name[-2])
    tm, wm = getattr(torch.nn, name)(), getattr(wg.nn, name)()
    assert repr(wm) == repr(tm)
    x = np.random.default_rng(1).standard_normal((2, 3) + (4,) * dims).astype("float32")
    t_out, w_out = tm(torch.tensor(x)), wm(wg.tensor(x))
    assert repr(wm) == repr(tm)
    np.testing.assert_allclose(np.asarray(w_out.tolist()), t_out.detach().numpy(), atol=1e-5)
    for key, value in tm.state_dict().items():
        np.testing.assert_allclose(np.asarray(wm.state_dict()[key].tolist()), value.numpy(), atol=1e-5)


def test_lazy_load_state_dict_takes_shapes(backend):
    torch_conv = torch.nn.Conv2d(3, 4, 2)
    lazy = wg.nn.LazyConv2d(4, 2)
    lazy.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in torch_conv.state_dict().items()})
    assert type(lazy) is wg.nn.Conv2d and lazy.in_channels == 3 and repr(lazy) == repr(torch_conv)
    bn = wg.nn.LazyBatchNorm1d()
    bn.load_state_dict({k: wg.tensor(v.numpy()) for k, v in torch.nn.BatchNorm1d(5).state_dict().items()})
    assert type(bn) is wg.nn.BatchNorm1d and bn.num_features == 5


def test_sync_batch_norm_outside_distributed_is_batch_norm(backend):
    torch.manual_seed(0)
    tnet = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1),
                                                                             torch.nn.BatchNorm2d(3)))
    wnet = wg.nn.SyncBatchNorm.convert_sync_batchnorm(wg.nn.Sequential(wg.nn.Conv2d(2, 3, 1), wg.nn.BatchNorm2d(3)))
    assert repr(wnet) == repr(tnet) and type(wnet[1]) is wg.nn.SyncBatchNorm
    wnet.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((4, 2, 3, 3)).astype("float32")
    wnet[1].eval(); tnet[1].eval()   # torch's SyncBatchNorm trains only under a process group on CUDA
    np.testing.assert_allclose(np.asarray(wnet(wg.tensor(x)).tolist()), tnet(torch.tensor(x)).detach().numpy(),
                               atol=1e-5)
    wnet.train()
    bn = wg.nn.BatchNorm2d(3)
    bn.load_state_dict(wnet[1].state_dict())
    y = wnet[0](wg.tensor(x))
    np.testing.assert_allclose(np.asarray(wnet[1](y).tolist()), np.asarray(bn(y).tolist()), atol=1e-6)
    assert wnet[1].running_mean.tolist() == bn.running_mean.tolist()
    with pytest.raises(ValueError, match="at least 2D"):
        wg.nn.SyncBatchNorm(3)(wg.ones(3))


def test_container_and_factory_kwargs():
    with pytest.warns(FutureWarning, match="nn.Container"):
        c = wg.nn.Container(fc=wg.nn.Linear(1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc = torch.nn.Container(fc=torch.nn.Linear(1, 2))
    assert repr(c) == repr(tc) and list(c.state_dict()) == list(tc.state_dict())
    for kwargs in ({"device": "cpu", "factory_kwargs": {"dtype": None}}, None, {"dtype": None}):
        assert wg.nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    for bad in ({"devic": 1}, {"dtype": None, "factory_kwargs": {"dtype": None}}):
        with pytest.raises(TypeError):
            wg.nn.factory_kwargs(bad)
