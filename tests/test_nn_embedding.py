"""nn.Embedding and nn.functional.embedding against PyTorch on every backend: padding_idx (row
zeroed at init, no gradient), max_norm/norm_type (looked-up rows renormalised in place),
scale_grad_by_freq, _weight/_freeze, from_pretrained, and torch's exception types."""
import math

import numpy as np
import pytest

import webgrad as wg
from nn_compare import assert_close, compare_modules, load_torch_weights, rand, same_error

torch = pytest.importorskip("torch")

IDX = np.array([[1, 0, 3, 3], [3, 2, 4, 1]], dtype=np.int32)

CASES = [  # constructor kwargs
    dict(),
    dict(padding_idx=3),
    dict(padding_idx=-2),
    dict(max_norm=1.0),
    dict(max_norm=0.7, norm_type=1.0, padding_idx=0),
    dict(max_norm=0.5, norm_type=math.inf),
    dict(scale_grad_by_freq=True),
    dict(scale_grad_by_freq=True, padding_idx=1, max_norm=1.5),
]


@pytest.mark.parametrize("kwargs", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) or "plain" for c in CASES])
def test_embedding_matches_torch(backend, kwargs):
    torch.manual_seed(0)
    tm, wm = torch.nn.Embedding(5, 3, **kwargs), wg.nn.Embedding(5, 3, **kwargs)
    if "padding_idx" in kwargs:
        assert wm.weight[kwargs["padding_idx"]].abs().sum().item() == 0
    load_torch_weights(tm, wm)
    compare_modules(tm, wm, [IDX])
    assert_close(wm.weight, tm.weight, "float32", "weight after the lookup (max_norm renormalises in place)")
    assert repr(wm) == repr(tm)


@pytest.mark.parametrize("kwargs", [dict(padding_idx=2, scale_grad_by_freq=True), dict(max_norm=1.0, norm_type=3.0)])
def test_functional_embedding_matches_torch(backend, kwargs):
    weight = rand(5, 3) * 2
    tw, ww = torch.tensor(weight, requires_grad=True), wg.tensor(weight, requires_grad=True)
    t_out = torch.nn.functional.embedding(torch.tensor(IDX, dtype=torch.long), tw, **kwargs)
    w_out = wg.nn.functional.embedding(wg.tensor(IDX), ww, **kwargs)
    assert_close(w_out, t_out, "float32", "output")
    g = rand(*t_out.shape, seed=2)
    (t_out * torch.tensor(g)).sum().backward()
    (w_out * wg.tensor(g)).sum().backward()
    assert_close(ww.grad, tw.grad, "float32", "weight grad")
    assert_close(ww, tw, "float32", "weight after renorm")


def test_weight_freeze_and_from_pretrained(backend):
    table = rand(4, 2)
    for freeze in (True, False):
        t = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze, padding_idx=1, max_norm=0.5)
        w = wg.nn.Embedding.from_pretrained(wg.tensor(table), freeze=freeze, padding_idx=1, max_norm=0.5)
        assert w.weight.requires_grad == t.weight.requires_grad == (not freeze)
        assert (w.padding_idx, w.max_norm) == (t.padding_idx, t.max_norm)
        np.testing.assert_allclose(w.weight.detach().numpy(), table)     # the padding row is kept as given
        assert_close(w(wg.tensor([[1, 2]])), t(torch.tensor([[1, 2]])), "float32", "lookup")
    frozen = wg.nn.Embedding(4, 2, _weight=wg.tensor(table), _freeze=True)
    assert not frozen.weight.requires_grad and frozen.weight.tolist() == wg.tensor(table).tolist()
    assert list(frozen.state_dict()) == ["weight"]


def test_sparse_gradients_are_refused_clearly(backend):
    with pytest.raises(NotImplementedError, match="Embedding: sparse=True"):
        wg.nn.Embedding(5, 3, sparse=True)
    with pytest.raises(NotImplementedError, match="embedding: sparse=True"):
        wg.nn.functional.embedding(wg.tensor([1]), wg.ones(3, 2), sparse=True)


ERRORS = [
    ("padding_idx_too_big", lambda L: L.nn.Embedding(5, 3, padding_idx=5)),
    ("padding_idx_too_small", lambda L: L.nn.Embedding(5, 3, padding_idx=-6)),
    ("weight_shape", lambda L: L.nn.Embedding(5, 3, _weight=L.tensor(rand(4, 3)))),
    ("pretrained_rank", lambda L: L.nn.Embedding.from_pretrained(L.tensor(rand(4)))),
]


@pytest.mark.parametrize("name,call", ERRORS, ids=[c[0] for c in ERRORS])
def test_bad_input_raises_torchs_exception_type(backend, name, call):
    same_error(call)
