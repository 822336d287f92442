"""Reliability on the backend under test (``webgpu`` in the page): tensors freed by the cycle
collector in the middle of training, and indices out of range (no numpy)."""
import gc

import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad import nn
from webgrad.backends.gpu import runtime


class Cycle:
    def __init__(self, *held):
        self.held, self.me = held, self


def _train(steps, chaos):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = wg.optim.SGD(model.parameters(), lr=0.1)
    x = wg.tensor([[(i * 7 + j) % 5 / 5.0 - 0.4 for j in range(4)] for i in range(16)])
    y = wg.tensor([i % 3 for i in range(16)])
    losses = []
    for _ in range(steps):
        out = model(x)
        loss = F.cross_entropy(out, y)
        if chaos:
            Cycle(out, loss, out * 2)
            try:
                raise ValueError(out.relu())
            except ValueError as e:
                Cycle(e)
            gc.collect()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_goes_on_while_the_collector_frees_cycles(monkeypatch):
    monkeypatch.setattr(runtime, "BIND_GROUPS", 0)   # no cached bind group keeps a buffer reachable
    want = _train(6, chaos=False)
    got = _train(6, chaos=True)
    assert all(abs(g - w) <= 1e-5 * abs(w) for g, w in zip(got, want)), (got, want)


def test_out_of_range_index_raises_and_the_backend_goes_on():
    x = wg.arange(10.0)
    with pytest.raises(IndexError, match="Gather: index 12"):
        x[wg.tensor([1, 12])].tolist()          # at the op on cpu, at the readback on a GPU backend
    with pytest.raises(IndexError, match="SoftmaxCrossEntropy"):
        F.cross_entropy(x.reshape(2, 5), wg.tensor([1, 5])).item()
    assert x[wg.tensor([9, 0])].tolist() == [9.0, 0.0]
