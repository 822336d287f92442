"""webgrad.nn.functional (everything but losses and conv/pool): activations, softmax, linear,
dropout, one_hot, embedding, layer_norm, batch_norm, interpolate, pad, and the Tensor methods it adds.
PyTorch is the forward oracle, numpy formulas where cheap; gradients by finite differences."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradcheck, gradgradcheck, op_tests, torch_reference as tref

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(2)


def rn(*shape):
    return rng.standard_normal(shape)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def np_layer_norm(x, k, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


INDEX = np.array([[1, 4], [0, 1], [3, 3]], dtype=np.int32)

CASES = [
    OpCase("softmax", lambda x: F.softmax(x, dim=1), lambda x: np_softmax(x, 1), [rn(3, 4)]),
    OpCase("softmax_dim0_large_values", lambda x: F.softmax(x, 0), lambda x: np_softmax(x, 0), [rn(4, 2) * 30]),
    OpCase("softmax_scalar", lambda x: F.softmax(x, 0), lambda x: np.ones_like(x), [np.array(0.3)]),
    OpCase("softmax_big", lambda x: x.softmax(-1), lambda x: np_softmax(x, -1), [rn(37, 41)], grad=False),
    OpCase("log_softmax", lambda x: F.log_softmax(x, -1), tref(TF.log_softmax, dim=-1), [rn(2, 3, 4)]),
    OpCase("log_softmax_method", lambda x: x.log_softmax(0), lambda x: np.log(np_softmax(x, 0)), [rn(5) * 40]),
    OpCase("relu", F.relu, tref(TF.relu), [rn(3, 4) + 0.05]),
    OpCase("leaky_relu", lambda x: F.leaky_relu(x, 0.2), tref(TF.leaky_relu, negative_slope=0.2), [rn(3, 4) + 0.05]),
    OpCase("elu", lambda x: F.elu(x, 0.5), tref(TF.elu, alpha=0.5), [rn(3, 4) + 0.05]),
    OpCase("gelu", F.gelu, tref(TF.gelu), [rn(3, 4)]),
    OpCase("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), tref(TF.gelu, approximate="tanh"), [rn(3, 4)]),
    OpCase("silu", F.silu, tref(TF.silu), [rn(3, 4)]),
    OpCase("softplus", lambda x: F.softplus(x, beta=2.0), tref(TF.softplus, beta=2.0), [rn(3, 4)]),
    OpCase("sigmoid", F.sigmoid, tref(torch.sigmoid), [rn(3, 4)]),
    OpCase("tanh", F.tanh, tref(torch.tanh), [rn(3, 4)]),
    OpCase("linear", F.linear, lambda x, w, b: x @ w.T + b, [rn(2, 3), rn(4, 3), rn(4)]),
    OpCase("linear_batched_no_bias", F.linear, lambda x, w: x @ w.T, [rn(2, 2, 3), rn(4, 3)]),
    OpCase("linear_vector_weight", F.linear, lambda x, w: x @ w, [rn(2, 3), rn(3)]),
    OpCase("linear_big", F.linear, lambda x, w, b: x @ w.T + b, [rn(64, 33), rn(40, 33), rn(40)], grad=False,
           rtol=1e-4, atol=1e-5),
    OpCase("embedding", lambda i, w: F.embedding(i, w), lambda i, w: w[i], [INDEX, rn(5, 3)]),
    OpCase("embedding_padding_idx", lambda i, w: F.embedding(i, w, padding_idx=-2),
           tref(TF.embedding, padding_idx=3), [INDEX, rn(5, 3)], grad=False),  # its gradient skips a row on purpose
    OpCase("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b),
           lambda x, w, b: np_layer_norm(x, 1) * w + b, [rn(3, 4), rn(4), rn(4)]),
    OpCase("layer_norm_2d", lambda x: F.layer_norm(x, (3, 4)), lambda x: np_layer_norm(x, 2), [rn(2, 3, 4)]),
    OpCase("layer_norm_big", lambda x: F.layer_norm(x, 50), lambda x: np_layer_norm(x, 1), [rn(30, 50)],
           grad=False, rtol=1e-4, atol=1e-5),
    OpCase("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
           lambda x, w, b: ((x - x.mean((0, 2), keepdims=True)) / np.sqrt(x.var((0, 2), keepdims=True) + 1e-5)
                            * w[:, None] + b[:, None]), [rn(3, 2, 4), rn(2), rn(2)]),
    OpCase("batch_norm_eval", lambda x, m, v: F.batch_norm(x, m, v),
           lambda x, m, v: (x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5),
           [rn(2, 3, 2, 2), rn(3), rng.uniform(0.5, 2, 3)]),
    OpCase("interpolate_nearest", lambda x: F.interpolate(x, scale_factor=2), tref(TF.interpolate, scale_factor=2),
           [rn(1, 2, 2, 3)]),
    OpCase("interpolate_nearest_down_1d", lambda x: F.interpolate(x, size=3), tref(TF.interpolate, size=3),
           [rn(1, 2, 7)]),
    OpCase("interpolate_bilinear", lambda x: F.interpolate(x, size=(4, 5), mode="bilinear"),
           tref(TF.interpolate, size=(4, 5), mode="bilinear"), [rn(1, 2, 3, 3)]),
    OpCase("interpolate_bilinear_align", lambda x: F.interpolate(x, scale_factor=(1.5, 0.5), mode="bilinear",
                                                                 align_corners=True),
           tref(TF.interpolate, scale_factor=(1.5, 0.5), mode="bilinear", align_corners=True), [rn(1, 1, 4, 6)]),
    OpCase("interpolate_linear", lambda x: F.interpolate(x, size=7, mode="linear"),
           tref(TF.interpolate, size=7, mode="linear"), [rn(2, 1, 4)]),
    OpCase("interpolate_bilinear_big", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
           tref(TF.interpolate, scale_factor=2, mode="bilinear"), [rn(2, 3, 16, 16)], grad=False),
    OpCase("pad", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), tref(TF.pad, pad=(1, 2, 0, 1), value=0.5),
           [rn(2, 3)]),
]

globals().update(op_tests(CASES))


def test_activations_are_webgrad_ops():
    for name in ("gelu", "softplus", "sigmoid", "tanh"):
        assert getattr(F, name) is getattr(wg, name)
    x = wg.tensor([-1.0, 2.0])
    for name in ("relu", "leaky_relu", "elu", "silu"):   # F's forms add inplace=, as PyTorch's
        assert getattr(F, name)(x).tolist() == getattr(wg, name)(x).tolist()
    assert F.pad is wg.pad


def test_tensor_methods_attached():
    x = wg.tensor([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(x.softmax(1).numpy(), np_softmax(x.numpy(), 1), rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax(dim=0).numpy(), np.log(np_softmax(x.numpy(), 0)), rtol=1e-6)
    assert set(F.METHODS) == {"softmax", "log_softmax"}
    assert x.softmax(1, wg.float64).dtype is wg.float64   # Tensor.softmax(dim, dtype): no _stacklevel


def test_softmax_of_int_is_float_and_dtype_argument():
    assert F.softmax(wg.tensor([1, 2]), 0).dtype == wg.float32
    assert F.softmax(wg.tensor([1.0, 2.0]), 0, dtype=wg.float64).dtype == wg.float64


SECOND_ORDER = {
    "softmax": (lambda x: F.softmax(x, 1), [rn(2, 3)]),
    "log_softmax": (lambda x: F.log_softmax(x, 0), [rn(4)]),
    "layer_norm": (lambda x, w: F.layer_norm(x, (3,), w), [rn(2, 3), rn(3)]),
    "interpolate_bilinear": (lambda x: F.interpolate(x, size=(3, 3), mode="bilinear") ** 2, [rn(1, 1, 2, 2)]),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    fn, arrays = SECOND_ORDER[name]
    gradgradcheck(fn, *arrays, what=name)


# ---------------------------------------------------------------- dropout


def test_dropout_statistics_and_scaling():
    wg.manual_seed(0)
    y = F.dropout(wg.ones(200, 50), p=0.3).numpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((y == 0).mean() - 0.3) < 0.02


def test_dropout_gradient_is_the_mask():
    wg.manual_seed(1)
    x = wg.tensor(rn(4, 5), requires_grad=True)
    y = F.dropout(x, p=0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.detach().numpy() != 0) * 2.0)


def test_dropout_identity_when_not_training_and_zero_for_p1():
    x = wg.tensor(rn(3))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 1.0).tolist() == [0.0, 0.0, 0.0]


def test_dropout_seeded_reproducible_and_inplace():
    wg.manual_seed(3)
    a = F.dropout(wg.ones(10)).tolist()
    wg.manual_seed(3)
    b = wg.ones(10)
    F.dropout(b, inplace=True)
    assert a == b.tolist()


# ---------------------------------------------------------------- one_hot, embedding, batch_norm


def test_one_hot_matches_torch():
    idx = np.array([[0, 3], [2, 1]], np.int32)
    got = F.one_hot(wg.tensor(idx))
    assert got.dtype == wg.int64
    np.testing.assert_array_equal(got.numpy(), TF.one_hot(torch.tensor(idx).long()).numpy())
    assert F.one_hot(wg.tensor([1]), num_classes=4).tolist() == [[0, 1, 0, 0]]


def test_embedding_padding_idx_gets_no_gradient():
    w = wg.tensor(rn(4, 2), requires_grad=True)
    F.embedding(wg.tensor([0, 2, 2, 1]), w, padding_idx=2).sum().backward()
    assert w.grad.tolist() == [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


def test_batch_norm_training_updates_running_stats_like_torch():
    x = rn(4, 3, 2, 2).astype(np.float32)
    rm, rv = wg.zeros(3), wg.ones(3)
    trm, trv = torch.zeros(3), torch.ones(3)
    for _ in range(2):
        got = F.batch_norm(wg.tensor(x), rm, rv, training=True, momentum=0.2)
        want = TF.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-5, atol=1e-6)
    ev = F.batch_norm(wg.tensor(x), rm, rv, training=False)
    np.testing.assert_allclose(ev.numpy(), TF.batch_norm(torch.tensor(x), trm, trv).numpy(), rtol=1e-5, atol=1e-5)


def test_batch_norm_running_stats_do_not_join_the_graph():
    x = wg.tensor(rn(3, 2), requires_grad=True)
    rm, rv = wg.zeros(2), wg.ones(2)
    F.batch_norm(x, rm, rv, training=True).sum().backward()
    assert not rm.requires_grad and not rv.requires_grad and rm._version == 1


def test_batch_norm_gradient_with_running_stats():
    gradcheck(lambda x, w: F.batch_norm(x, wg.zeros(2, dtype=wg.float64), wg.ones(2, dtype=wg.float64), w,
                                        training=True), rn(3, 2, 2), rn(2), what="batch_norm")


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, match", [
    (lambda: F.log_softmax(wg.ones(2, 2), 2), "log_softmax: dim 2 is out of range"),
    (lambda: F.linear(wg.ones(2, 3), wg.ones(4, 5)), r"linear: input of shape \(2, 3\).*weight of shape \(4, 5\)"),
    (lambda: F.dropout(wg.ones(2), p=1.5), "dropout: probability"),
    (lambda: F.one_hot(wg.tensor([0.0, 1.0])), "one_hot: indices must be an integer"),
    (lambda: F.one_hot(wg.tensor([0, 1]), num_classes=0), "one_hot: num_classes"),
    (lambda: F.embedding(wg.tensor([0.5]), wg.ones(3, 2)), "embedding: indices must be"),
    (lambda: F.embedding(wg.tensor([0]), wg.ones(3)), "embedding: weight must be 2-D"),
    (lambda: F.embedding(wg.tensor([0]), wg.ones(3, 2), padding_idx=3), "embedding: padding_idx 3"),
    (lambda: F.layer_norm(wg.ones(2, 3), (2,)), r"layer_norm: normalized_shape \(2,\)"),
    (lambda: F.layer_norm(wg.ones(2, 3), 3, wg.ones(2)), r"layer_norm: weight must have shape \(3,\)"),
    (lambda: F.batch_norm(wg.ones(2, 3), wg.zeros(2), wg.ones(3)), r"batch_norm: running_mean must have shape"),
    (lambda: F.batch_norm(wg.ones(1, 3), None, None, training=True), "batch_norm: expected more than 1 value"),
    (lambda: F.batch_norm(wg.ones(2, 3), None, None), "batch_norm: running_mean and running_var"),
    (lambda: F.interpolate(wg.ones(1, 1, 4), size=2, scale_factor=2), "interpolate: exactly one"),
    (lambda: F.interpolate(wg.ones(1, 1, 4), size=2, mode="bilinear"), "interpolate: mode 'bilinear' needs a 4-D"),
    (lambda: F.interpolate(wg.ones(1, 1, 4), size=2, mode="cubic"), "interpolate: mode must be"),
    (lambda: F.interpolate(wg.ones(1, 1, 4), size=2, align_corners=True), "interpolate: align_corners"),
])
def test_bad_arguments(call, match):
    with pytest.raises((ValueError, TypeError, IndexError), match=match):
        call()
