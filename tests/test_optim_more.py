"""Adafactor, SparseAdam, swa_utils (AveragedModel, SWALR, update_bn, the avg_fn helpers) and
utils.data.StackDataset, against torch."""
import numpy as np
import pytest
import torch
import torch.optim.swa_utils as tswa

import webgrad as wg
import webgrad.optim.swa_utils as wswa
from nn_compare import load_torch_weights


@pytest.mark.parametrize("shape", [(3,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("kw", [{}, dict(lr=0.05, weight_decay=0.1, maximize=True),
                                dict(eps=(1e-30, 1e-3), d=1.5, beta2_decay=-0.5)])
def test_adafactor_matches_torch(backend, shape, kw):
    dtype = "float64" if backend == "cpu" else "float32"
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    tp, wp = torch.nn.Parameter(torch.tensor(x)), wg.nn.Parameter(wg.tensor(x))
    topt, wopt = torch.optim.Adafactor([tp], **kw), wg.optim.Adafactor([wp], **kw)
    for _ in range(4):
        topt.zero_grad(); wopt.zero_grad()
        (tp ** 3).sum().backward(); (wp ** 3).sum().backward()
        topt.step(); wopt.step()
    atol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(np.asarray(wp.tolist()), tp.detach().numpy(), atol=atol)
    for key, value in topt.state[tp].items():
        np.testing.assert_allclose(np.asarray(wopt.state[wp][key].tolist() if key != "step" else wopt.state[wp][key]),
                                   value.numpy(), rtol=1e-5, atol=atol)


def test_adafactor_argument_errors():
    p = [wg.nn.Parameter(wg.ones(2))]
    for kw, what in ((dict(beta2_decay=0.5), "beta2_decay"), (dict(eps=(-1.0, 1e-3)), "epsilon1"),
                     (dict(eps=(None, -1.0)), "epsilon2"), (dict(d=0.5), "Clipping threshold"),
                     (dict(lr=-1.0), "learning rate")):
        with pytest.raises(ValueError, match=what):
            wg.optim.Adafactor(p, **kw)


def test_sparse_adam_raises_for_dense_gradients_as_torch():
    w = wg.nn.Parameter(wg.ones(2))
    opt = wg.optim.SparseAdam([w])
    w.sum().backward()
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        opt.step()
    t = torch.nn.Parameter(torch.ones(2))
    topt = torch.optim.SparseAdam([t]); t.sum().backward()
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        topt.step()
    with pytest.raises(ValueError):
        wg.optim.SparseAdam([w], betas=(1.5, 0.9))


@pytest.mark.parametrize("how", ["swa", "ema_multi", "ema_avg", "use_buffers"])
def test_averaged_model_matches_torch(backend, how):
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    wnet = wg.nn.Sequential(wg.nn.Linear(3, 2), wg.nn.BatchNorm1d(2))
    load_torch_weights(tnet, wnet)
    kwargs = {"swa": ({}, {}), "ema_multi": (dict(multi_avg_fn=tswa.get_ema_multi_avg_fn(0.9)),
                                             dict(multi_avg_fn=wswa.get_ema_multi_avg_fn(0.9))),
              "ema_avg": (dict(avg_fn=tswa.get_ema_avg_fn(0.8)), dict(avg_fn=wswa.get_ema_avg_fn(0.8))),
              "use_buffers": (dict(use_buffers=True), dict(use_buffers=True))}[how]
    tavg, wavg = tswa.AveragedModel(tnet, **kwargs[0]), wswa.AveragedModel(wnet, **kwargs[1])
    topt, wopt = torch.optim.SGD(tnet.parameters(), lr=0.1), wg.optim.SGD(wnet.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((4, 3)).astype("float32")
        topt.zero_grad(); wopt.zero_grad()
        tnet(torch.tensor(x)).square().sum().backward(); wnet(wg.tensor(x)).square().sum().backward()
        topt.step(); wopt.step()
        tavg.update_parameters(tnet); wavg.update_parameters(wnet)
    assert list(wavg.state_dict()) == list(tavg.state_dict())
    for key, value in tavg.state_dict().items():
        np.testing.assert_allclose(np.asarray(wavg.state_dict()[key].tolist()), value.numpy(), atol=1e-5)
    x = rng.standard_normal((5, 3)).astype("float32")
    tavg.eval(); wavg.eval()
    np.testing.assert_allclose(np.asarray(wavg(wg.tensor(x)).tolist()), tavg(torch.tensor(x)).detach().numpy(),
                               atol=1e-5)
    with pytest.raises(AssertionError, match="Only one of"):
        wswa.AveragedModel(wnet, avg_fn=wswa.get_swa_avg_fn(), multi_avg_fn=wswa.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match="decay"):
        wswa.get_ema_avg_fn(1.5)


def test_update_bn_matches_torch(backend):
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4, momentum=0.3))
    wnet = wg.nn.Sequential(wg.nn.Linear(3, 4), wg.nn.BatchNorm1d(4, momentum=0.3))
    load_torch_weights(tnet, wnet)
    batches = [np.random.default_rng(i).standard_normal((5, 3)).astype("float32") for i in range(3)]
    tnet.eval(); wnet.eval()
    tswa.update_bn([(torch.tensor(b), 0) for b in batches], tnet)
    wswa.update_bn([(wg.tensor(b), 0) for b in batches], wnet)
    assert not wnet.training and wnet[1].momentum == 0.3
    for key, value in tnet.state_dict().items():
        np.testing.assert_allclose(np.asarray(wnet.state_dict()[key].tolist()), value.numpy(), atol=1e-5)


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 2), ("cos", 0)])
def test_swalr_matches_torch(strategy, epochs):
    tp, wp = torch.nn.Parameter(torch.ones(1)), wg.nn.Parameter(wg.ones(1))
    topt = torch.optim.SGD([{"params": [tp]}, {"params": [torch.nn.Parameter(torch.ones(1))], "lr": 0.3}], lr=1.0)
    wopt = wg.optim.SGD([{"params": [wp]}, {"params": [wg.nn.Parameter(wg.ones(1))], "lr": 0.3}], lr=1.0)
    tsched = tswa.SWALR(topt, swa_lr=[0.05, 0.1], anneal_epochs=epochs, anneal_strategy=strategy)
    wsched = wswa.SWALR(wopt, swa_lr=[0.05, 0.1], anneal_epochs=epochs, anneal_strategy=strategy)
    for _ in range(5):
        topt.step(); wopt.step(); tsched.step(); wsched.step()
        np.testing.assert_allclose(wsched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12)
    with pytest.raises(ValueError, match="anneal_strategy"):
        wswa.SWALR(wopt, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs"):
        wswa.SWALR(wopt, 0.1, anneal_epochs=-1)


def test_stack_dataset_as_torch():
    from torch.utils.data import StackDataset as TStack
    from webgrad.utils.data import DataLoader, StackDataset, TensorDataset
    a, b = list(range(4)), [str(i) for i in range(4)]
    assert StackDataset(a, b)[2] == TStack(a, b)[2] and StackDataset(x=a, y=b)[1] == TStack(x=a, y=b)[1]
    assert StackDataset(a, b).__getitems__([0, 3]) == TStack(a, b).__getitems__([0, 3])
    assert StackDataset(x=a, y=b).__getitems__([1]) == TStack(x=a, y=b).__getitems__([1])
    assert len(StackDataset(a, b)) == 4
    batches = list(DataLoader(StackDataset(TensorDataset(wg.arange(4.0)), wg.arange(4) * 2), batch_size=2))
    assert [[x[0].tolist(), y.tolist()] for x, y in batches] == [[[0.0, 1.0], [0, 2]], [[2.0, 3.0], [4, 6]]]
    for bad in (lambda: StackDataset(a, x=b), lambda: StackDataset(), lambda: StackDataset(a, [1])):
        with pytest.raises(ValueError):
            bad()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [{}, dict(nesterov=False, adjust_lr_fn="match_rms_adamw", lr=0.02),
                                dict(adjust_lr_fn="original", weight_decay=0.5, momentum=0.5)])
def test_muon_matches_torch(dtype, kw):
    for shape in ((3, 5), (6, 4)):
        x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
        tp, wp = torch.nn.Parameter(torch.tensor(x)), wg.nn.Parameter(wg.tensor(x))
        topt, wopt = torch.optim.Muon([tp], **kw), wg.optim.Muon([wp], **kw)
        for _ in range(5):
            topt.zero_grad(); wopt.zero_grad()
            (tp ** 3).sum().backward(); (wp ** 3).sum().backward()
            topt.step(); wopt.step()
        np.testing.assert_allclose(np.asarray(wp.tolist()), tp.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_muon_checks_and_gpu_refusal(backend):
    with pytest.raises(ValueError, match="2D parameters"):
        wg.optim.Muon([wg.nn.Parameter(wg.ones(3))])
    with pytest.raises(ValueError, match="Adjust learning rate function"):
        wg.optim.Muon([wg.nn.Parameter(wg.ones(2, 2))], adjust_lr_fn="nope")
    w = wg.nn.Parameter(wg.ones(2, 3))
    opt = wg.optim.Muon([w])
    (w * w).sum().backward()
    if backend == "cpu":
        opt.step()
        assert w.shape == (2, 3)
    else:   # the Newton-Schulz steps are bfloat16's, which WGSL does not have
        with pytest.raises(TypeError, match="bfloat16"):
            opt.step()
