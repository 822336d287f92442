"""nn.CrossMapLRN2d (PyTorch's legacy running window), nn.DataParallel without CUDA, and
nn.utils.rnn's invert_permutation/bind, against torch."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import gradcheck

X = np.random.default_rng(0).standard_normal((2, 7, 3, 3))


@pytest.mark.parametrize("size", [1, 2, 3, 5, 9])
def test_cross_map_lrn2d_forward_matches_torch(backend, size):
    x = X.astype("float32")
    w = wg.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.6, k=1.5)
    t = torch.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.6, k=1.5)
    assert repr(w) == repr(t)
    np.testing.assert_allclose(np.asarray(w(wg.tensor(x)).tolist()), t(torch.tensor(x)).numpy(), atol=1e-6)


def test_cross_map_lrn2d_gradient_is_its_derivative():
    # PyTorch's legacy backward assumes another window than its forward (and fails for size 1);
    # webgrad's gradient is the derivative of the forward, checked by finite differences
    gradcheck(lambda x: wg.nn.CrossMapLRN2d(3, alpha=0.1, beta=0.6, k=1.5)(x), X[:1, :5], what="CrossMapLRN2d")
    with pytest.raises(ValueError, match="4D"):
        wg.nn.CrossMapLRN2d(3)(wg.ones(2, 3, 4))


def test_data_parallel_runs_the_module_as_torch_without_cuda(backend):
    torch.manual_seed(0)
    tm = torch.nn.DataParallel(torch.nn.Linear(3, 2), device_ids=[0, 1])
    wm = wg.nn.DataParallel(wg.nn.Linear(3, 2), device_ids=[0, 1])
    assert repr(wm) == repr(tm) and wm.device_ids == tm.device_ids == []
    wm.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = X[0, :, 0].astype("float32").reshape(7, 3)[:, :3]
    np.testing.assert_allclose(np.asarray(wm(wg.tensor(x)).tolist()), tm(torch.tensor(x)).detach().numpy(),
                               atol=1e-6)
    assert wg.nn.parallel.DataParallel is wg.nn.DataParallel


def test_rnn_helpers(backend):
    perm = [3, 0, 2, 1]
    assert wg.nn.utils.rnn.invert_permutation(wg.tensor(perm)).tolist() == \
        torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)).tolist()
    assert wg.nn.utils.rnn.invert_permutation(None) is None
    assert wg.nn.utils.rnn.bind(None, len) is None and wg.nn.utils.rnn.bind([1, 2], len) == 2
    assert wg.nn.utils.rnn.PackedSequence_._fields == torch.nn.utils.rnn.PackedSequence_._fields


def test_conv_tbc_and_native_channel_shuffle_match_torch(backend):
    from opinfo import to_numpy
    x, w, b = (np.random.default_rng(i).standard_normal(s).astype("float32")
               for i, s in enumerate(((6, 2, 3), (3, 3, 4), (4,))))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    wx, ww, wb = (wg.tensor(a, requires_grad=True) for a in (x, w, b))
    t_out, w_out = torch.nn.functional.conv_tbc(tx, tw, tb, 1), wg.nn.functional.conv_tbc(wx, ww, wb, 1)
    np.testing.assert_allclose(to_numpy(w_out), t_out.detach().numpy(), atol=1e-5)
    t_out.square().sum().backward(); w_out.square().sum().backward()
    for a, t in ((wx, tx), (ww, tw), (wb, tb)):
        np.testing.assert_allclose(to_numpy(a.grad), t.grad.numpy(), atol=1e-4)
    with pytest.raises(RuntimeError, match="conv_tbc"):
        wg.nn.functional.conv_tbc(wx, ww[:, :2], wb)
    y = np.arange(16.0, dtype="float32").reshape(1, 4, 2, 2)
    assert wg.nn.functional.native_channel_shuffle(wg.tensor(y), 2).tolist() == \
        torch.nn.functional.native_channel_shuffle(torch.tensor(y), 2).tolist()
