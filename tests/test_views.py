"""Aliasing as users observe it in PyTorch: views share storage with their base, in-place changes
through any of them are seen by all, strides are PyTorch's, and autograd's version checks hold
across views. Every case runs the same code on torch and on each webgrad backend."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from webgrad import nn

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
R = np.random.default_rng(0)

VIEWS = {   # name: view of a [2, 3, 4] tensor, written once for both libraries
    "detach": lambda t: t.detach(),
    "data": lambda t: t.data,
    "view": lambda t: t.view(6, 4),
    "reshape": lambda t: t.reshape(4, 6),
    "flatten": lambda t: t.flatten(1),
    "unflatten": lambda t: t.unflatten(2, (2, 2)),
    "transpose": lambda t: t.transpose(0, 2),
    "permute": lambda t: t.permute(2, 0, 1),
    "mT": lambda t: t.mT,
    "t_of_select": lambda t: t[0].t(),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "select": lambda t: t.select(2, 1),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t[:1].squeeze(0),
    "split": lambda t: t.split(2, dim=2)[1],
    "chunk": lambda t: t.chunk(3, dim=1)[2],
    "unbind": lambda t: t.unbind(1)[1],
    "diagonal": lambda t: t.diagonal(1, 1, 2),
    "int_index": lambda t: t[1],
    "slices": lambda t: t[:, 1:, ::2],
    "ellipsis_none": lambda t: t[..., None, 2],
    "view_of_view": lambda t: t.transpose(1, 2)[0, 1:3],
    "view_as": lambda t: t.view_as(t.reshape(4, 6)),
}
WRITES = {
    "add_": lambda v: v.add_(100),
    "mul_": lambda v: v.mul_(-2),
    "fill_": lambda v: v.fill_(7),
    "zero_": lambda v: v.zero_(),
    "setitem": lambda v: v.__setitem__(0, -5),
    "iadd": lambda v: v.__iadd__(1),
}


def both(fn, backend):
    """``fn`` run on a fresh torch tensor and a fresh webgrad tensor on ``backend``: (torch, webgrad) results."""
    return fn(torch.tensor(X)), fn(wg.tensor(X, device=backend))


def same(t, w):
    assert w.shape == tuple(t.shape)
    np.testing.assert_array_equal(np.asarray(w.tolist(), dtype=np.float32), t.detach().numpy())


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("name", VIEWS)
def test_a_write_through_a_view_is_seen_by_the_base(name, write, backend):
    def run(x):
        v = VIEWS[name](x)
        WRITES[write](v)
        return x, v
    (tx, tv), (wx, wv) = both(run, backend)
    same(tx, wx)
    same(tv, wv)


@pytest.mark.parametrize("name", VIEWS)
def test_a_write_to_the_base_is_seen_by_its_views(name, backend):
    def run(x):
        v = VIEWS[name](x)
        other = x[0, 1:]                       # a second live view of the same storage
        x.mul_(3).add_(1)
        return v, other
    (tv, to), (wv, wo) = both(run, backend)
    same(tv, wv)
    same(to, wo)


@pytest.mark.parametrize("name", VIEWS)
def test_strides_offsets_and_contiguity_are_torchs(name, backend):
    tv, wv = both(VIEWS[name], backend)
    assert wv.stride() == tv.stride() and wv.storage_offset() == tv.storage_offset()
    assert wv.is_contiguous() == tv.is_contiguous()


def test_views_of_views_and_sibling_views_stay_in_step(backend):
    def run(x):
        a, b = x[0], x[:, 1]
        c = a.t()[2:]
        c.fill_(-1)
        b.add_(10)
        a[1, 1] = 42
        return x, a, b, c
    for t, w in zip(*both(run, backend)):
        same(t, w)


def test_view_of_a_non_contiguous_tensor_raises_and_reshape_copies(backend):
    t, w = torch.tensor(X), wg.tensor(X, device=backend)
    with pytest.raises(RuntimeError):
        t.transpose(0, 1).view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        w.transpose(0, 1).view(-1)
    tr, wr = t.transpose(0, 1).reshape(-1), w.transpose(0, 1).reshape(-1)
    tr.fill_(0), wr.fill_(0)
    same(t, w)                                  # a reshape that had to copy does not alias
    assert w.transpose(0, 1).contiguous().is_contiguous()


def test_expand_is_read_only(backend):
    t, w = torch.tensor([1.0, 2.0]).expand(3, 2), wg.tensor([1.0, 2.0], device=backend).expand(3, 2)
    with pytest.raises(RuntimeError):
        t.add_(1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        w.add_(1)
    base = wg.tensor([1.0, 2.0], device=backend)
    e = base.expand(3, 2)
    base.mul_(2)                                # writing the base is fine, and the expansion sees it
    assert e.tolist() == [[2.0, 4.0]] * 3


def test_state_dict_entries_and_data_share_storage_with_parameters(backend):
    model = nn.Linear(3, 2).to(backend)
    sd = model.state_dict()
    with wg.no_grad():
        sd["weight"].copy_(wg.ones(2, 3))       # how pretrained weights are loaded
    assert model.weight.tolist() == [[1.0] * 3] * 2
    model.bias.data.add_(5)                     # how hand-written optimizers step
    assert sd["bias"].tolist() == (model.bias.detach() * 1).tolist() and model.bias.requires_grad
    other = nn.Linear(3, 2).to(backend)
    model.load_state_dict(other.state_dict())   # copies into the parameters: the held entries see it
    assert sd["weight"].tolist() == other.weight.tolist()


def test_a_manual_sgd_step_through_data_trains(backend):
    wg.manual_seed(0)
    w = wg.randn(4, 1, device=backend, requires_grad=True)
    x, y = wg.randn(16, 4, device=backend), wg.randn(16, 1, device=backend)
    losses = []
    for _ in range(20):
        loss = ((x @ w - y) ** 2).mean()
        w.grad = None
        loss.backward()
        w.data.sub_(0.1 * w.grad.data)
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.7 and w.is_leaf and w.requires_grad


def test_setting_data_swaps_the_storage(backend):
    x = wg.zeros(2, 3, device=backend)
    old = x[0]
    x.data = wg.ones(4, device=backend)
    assert x.shape == (4,) and x.tolist() == [1.0] * 4
    x.add_(1)
    assert old.tolist() == [0.0] * 3            # views of the old storage keep it, as in PyTorch


# ---------------------------------------------------------------- autograd across views


def test_gradients_through_in_place_writes_to_views_are_torchs(backend):
    def run(lib, dev):
        x = lib.tensor(X[0], requires_grad=True, **dev)
        y = x * 2
        y[:, 0].mul_(3)                         # through a column view
        y[1].add_(y[0])                         # through a row view, reading another view
        y.diagonal().zero_()
        (y * y).sum().backward()
        return x.grad
    same(run(torch, {}), run(wg, {"device": backend}))


def test_a_write_through_a_view_of_a_saved_tensor_raises_at_backward(backend):
    for lib, dev in ((torch, {}), (wg, {"device": backend})):
        x = lib.tensor(X[0], requires_grad=True, **dev)
        a = x.sigmoid()                         # saves its output
        a[0].mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation|modified by an in-place"):
            a.sum().backward()


def test_detach_shares_the_version_counter_and_data_does_not(backend):
    for lib, dev in ((torch, {}), (wg, {"device": backend})):
        x = lib.tensor(X[0], requires_grad=True, **dev)
        a = x.sigmoid()
        a.data.mul_(2)                          # unseen by autograd
        a.sum().backward()
        b = x.sigmoid()
        b.detach().mul_(2)                      # seen: shares b's version counter
        with pytest.raises(RuntimeError):
            b.sum().backward()


def test_in_place_on_a_view_of_a_leaf_that_requires_grad_raises(backend):
    for lib, dev in ((torch, {}), (wg, {"device": backend})):
        x = lib.tensor(X[0], requires_grad=True, **dev)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[0].mul_(2)
        with lib.no_grad():
            x[0].mul_(2)                        # fine under no_grad
        assert x.detach()[0, 1].item() == 2.0


def test_a_fresh_gradient_is_never_a_view():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    g = wg.tensor([[3.0, 4.0]])
    x.unsqueeze(0).backward(g)
    x.grad.zero_()
    assert g.tolist() == [[3.0, 4.0]]


# ---------------------------------------------------------------- the two view kernels, as every kernel is checked

def _np_as_strided(x, shape, strides, offset):
    flat = np.ascontiguousarray(x).reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * flat.itemsize for s in strides]).copy()


def _np_as_strided_scatter(x, src, shape, strides, offset):
    out = np.array(x, copy=True)
    np.lib.stride_tricks.as_strided(out.reshape(-1)[offset:], shape,
                                    [s * out.itemsize for s in strides])[...] = src
    return out


STRIDED = [((3, 2), (1, 4), 1), ((2, 2), (6, 2), 3), ((5,), (5,), 0), ((), (), 7), ((0, 3), (4, 1), 0),
           ((2, 1, 2), (12, 100, 1), 2)]
CASES = []
for shape, strides, offset in STRIDED:
    attrs = dict(shape=shape, strides=strides, offset=offset)
    CASES.append(OpCase("as_strided", lambda x, a=attrs: wg.run_kernel("AsStrided", x, **a),
                        lambda x, a=attrs: _np_as_strided(x, **a), [R.standard_normal((4, 6))], second_order=True))
    CASES.append(OpCase("as_strided_scatter", lambda x, s, a=attrs: wg.run_kernel("AsStridedScatter", x, s, **a),
                        lambda x, s, a=attrs: _np_as_strided_scatter(x, s, **a),
                        [R.standard_normal((4, 6)), R.standard_normal(shape)], second_order=True))
CASES.append(OpCase("diagonal", lambda x: x.diagonal(-1, 2, 0), lambda x: np.diagonal(x, -1, 2, 0),
                    [R.standard_normal((3, 2, 4))]))
globals().update(op_tests(CASES))
