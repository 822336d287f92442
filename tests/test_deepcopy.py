"""``copy.deepcopy`` of tensors and modules as PyTorch's: new storage on the same backend, views of one
storage copied as views of one new storage, ``requires_grad``/``.grad``/Parameter kept, non-leaves refused.
Each case runs the same code on torch and on every webgrad backend."""
import copy

import numpy as np
import pytest
import torch

import webgrad as wg

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _libs(backend):
    return [(torch, {}), (wg, {"device": backend})]


def test_a_deep_copy_has_its_own_storage(backend):
    for lib, dev in _libs(backend):
        t = lib.tensor(X, **dev)
        c = copy.deepcopy(t)
        c.add_(1)
        assert np.array_equal(np.asarray(t.tolist()), X) and np.array_equal(np.asarray(c.tolist()), X + 1)
        assert str(c.device) == str(t.device)


def test_views_of_one_storage_stay_views_of_one_copy(backend):
    results = []
    for lib, dev in _libs(backend):
        base = lib.tensor(X, **dev)
        row, col_t = base[1], base.t()[2]
        base2, row2, col2 = copy.deepcopy((base, row, col_t))
        row2.fill_(-1.0)
        col2.mul_(10.0)
        results.append((base.tolist(), base2.tolist(), row2.tolist(), col2.tolist()))
    assert results[0] == results[1]


def test_requires_grad_and_grad_are_kept_and_a_parameter_drops_its_grad(backend):
    results = []
    for lib, dev in _libs(backend):
        t = lib.tensor(X, requires_grad=True, **dev)
        p = lib.nn.Parameter(lib.tensor(X, **dev))
        (t * p).sum().backward()
        t2, p2 = copy.deepcopy((t, p))
        t2.grad.zero_()
        results.append((t2.requires_grad, t2.is_leaf, t.grad.tolist(), t2.grad.tolist(),
                        type(p2).__name__, p2.requires_grad, p2.grad is None, p2.tolist()))
    assert results[0] == results[1]


def test_a_non_leaf_is_refused_as_in_torch(backend):
    for lib, dev in _libs(backend):
        x = lib.ones(2, requires_grad=True, **dev)
        with pytest.raises(RuntimeError, match="graph leaves"):
            copy.deepcopy(x * 2)


def test_a_deep_copied_module_runs_and_trains_apart(backend):
    """The everyday uses: a target network, and ``best = copy.deepcopy(model.state_dict())``."""
    wg.manual_seed(0)
    model = wg.nn.Sequential(wg.nn.Linear(4, 8), wg.nn.BatchNorm1d(8), wg.nn.ReLU(), wg.nn.Linear(8, 2)).to(backend)
    target = copy.deepcopy(model)
    best = copy.deepcopy(model.state_dict())
    x = wg.randn(16, 4).to(backend)
    target.eval(), model.eval()
    assert np.allclose(target(x).tolist(), model(x).tolist())
    model.train()
    opt = wg.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(2):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    for k, v in target.state_dict().items():
        assert np.array_equal(np.asarray(v.tolist()), np.asarray(best[k].tolist())), k
    assert not np.allclose(model[0].weight.tolist(), target[0].weight.tolist())
    target.load_state_dict(model.state_dict())
    model.eval()
    assert np.allclose(target(x).tolist(), model(x).tolist())
