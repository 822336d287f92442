"""Losses of webgrad.nn.functional against PyTorch (and numpy formulas where cheap), with
finite-difference gradients, a second-order check for cross_entropy, and bad-input errors."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradgradcheck, op_tests, torch_reference as tref

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:reduction. .mean. divides")

rng = np.random.default_rng(1)


def rn(*shape):
    return rng.standard_normal(shape)


def probs(*shape):
    e = np.exp(rn(*shape))
    return e / e.sum(1, keepdims=True)


X, Y = rn(3, 4), rn(3, 4)
TARGET = np.array([1, 0, 3], dtype=np.int32)
IGNORED = np.array([1, -100, 3], dtype=np.int32)
WEIGHT = rng.uniform(0.5, 2.0, 4)
P = rng.uniform(0.05, 0.95, (3, 4))
Q = rng.uniform(0.0, 1.0, (3, 4))


def _sce_kernel(reduction, ignore_index=2):
    """The SoftmaxCrossEntropy kernel, called directly."""
    return lambda x, t: wg.run_kernel("SoftmaxCrossEntropy", x, t, ignore_index=ignore_index, reduction=reduction)


def _sce_reference(reduction, ignore_index=2):
    """numpy's SoftmaxCrossEntropy: rows' losses (0 where ignored), their sum, or their mean over kept rows."""
    def ref(x, t):
        keep = t != ignore_index
        rows = np.where(keep, np.log(np.exp(x).sum(1)) - x[np.arange(len(x)), np.where(keep, t, 0)], 0.0)
        return {"none": rows, "sum": rows.sum(), "mean": rows.sum() / keep.sum()}[reduction]
    return ref


CASES = [
    OpCase("mse_loss", F.mse_loss, lambda a, b: ((a - b) ** 2).mean(), [X, Y]),
    OpCase("mse_loss_sum_broadcast", lambda a, b: F.mse_loss(a, b, reduction="sum"),
           lambda a, b: ((a - b) ** 2).sum(), [X, rn(4)]),
    OpCase("mse_loss_big", lambda a, b: F.mse_loss(a, b, reduction="none"), lambda a, b: (a - b) ** 2,
           [rn(40, 30), rn(40, 30)], grad=False),
    OpCase("mse_loss_scalar", F.mse_loss, lambda a, b: (a - b) ** 2, [np.array(1.5), np.array(-0.5)]),
    OpCase("l1_loss", F.l1_loss, lambda a, b: np.abs(a - b).mean(), [X, Y]),
    OpCase("l1_loss_none", lambda a, b: F.l1_loss(a, b, reduction="none"), lambda a, b: np.abs(a - b), [X, Y]),
    OpCase("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b, beta=0.7),
           tref(TF.smooth_l1_loss, beta=0.7), [X, Y]),
    OpCase("smooth_l1_loss_beta0", lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.0),
           tref(TF.smooth_l1_loss, reduction="sum", beta=0.0), [X, Y]),
    OpCase("huber_loss", lambda a, b: F.huber_loss(a, b, reduction="sum", delta=0.7),
           tref(TF.huber_loss, reduction="sum", delta=0.7), [X, Y]),
    OpCase("cross_entropy", F.cross_entropy, tref(TF.cross_entropy), [X, TARGET]),
    OpCase("cross_entropy_big", F.cross_entropy, tref(TF.cross_entropy),
           [rn(100, 12), rng.integers(0, 12, 100).astype(np.int32)], grad=False),
    OpCase("cross_entropy_weight_ignore", lambda x, t, w: F.cross_entropy(x, t, weight=w),
           lambda x, t, w: tref(TF.cross_entropy, weight=torch.from_numpy(w))(x, t), [X, IGNORED, WEIGHT]),
    OpCase("cross_entropy_smoothing", lambda x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.2),
           lambda x, t, w: tref(TF.cross_entropy, weight=torch.from_numpy(w), label_smoothing=0.2)(x, t),
           [X, IGNORED, WEIGHT]),
    OpCase("cross_entropy_mean_ignored_row", F.cross_entropy, tref(TF.cross_entropy), [rn(5, 7),
           np.array([6, -100, 0, 3, -100], np.int32)]),
    *[OpCase(f"softmax_cross_entropy_kernel_{reduction}", _sce_kernel(reduction), _sce_reference(reduction),
             [rn(6, 5) * 3, np.array([0, 2, 4, 1, 2, 3], np.int32)], second_order=True)
      for reduction in ("none", "sum", "mean")],
    OpCase("softmax_cross_entropy_kernel_mean_big", _sce_kernel("mean"), _sce_reference("mean"),   # 2 row groups
           [rn(300, 7), rng.integers(0, 7, 300).astype(np.int32)], grad=False),
    OpCase("softmax_cross_entropy_kernel_many_classes", _sce_kernel("sum"), _sce_reference("sum"),   # > 32 classes:
           [rn(3, 40), np.array([39, 0, 17], np.int32)]),                                        # no kept identity
    OpCase("softmax_cross_entropy_kernel_mean_none_ignored", _sce_kernel("mean", -100), _sce_reference("mean", -100),
           [rn(4, 3), np.array([0, 1, 2, 1], np.int32)]),
    OpCase("cross_entropy_none_ignore_index", lambda x, t: F.cross_entropy(x, t, ignore_index=3, reduction="none"),
           tref(TF.cross_entropy, ignore_index=3, reduction="none"), [X, TARGET]),
    OpCase("cross_entropy_nd", lambda x, t: F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
           tref(TF.cross_entropy, reduction="sum", label_smoothing=0.1),
           [rn(2, 3, 2, 2), rng.integers(0, 3, (2, 2, 2)).astype(np.int32)]),
    OpCase("cross_entropy_unbatched", F.cross_entropy, tref(TF.cross_entropy), [rn(4), np.array(2, np.int32)]),
    OpCase("cross_entropy_probs", lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
           tref(TF.cross_entropy, label_smoothing=0.1), [X, probs(3, 4)]),
    OpCase("cross_entropy_probs_weight_nd", lambda x, p, w: F.cross_entropy(x, p, w[:3], reduction="none"),
           lambda x, p, w: tref(TF.cross_entropy, weight=torch.from_numpy(w[:3]), reduction="none")(x, p),
           [rn(2, 3, 2), probs(2, 3, 2), WEIGHT]),
    OpCase("nll_loss", lambda x, t, w: F.nll_loss(x, t, w), lambda x, t, w: tref(
        TF.nll_loss, weight=torch.from_numpy(w))(x, t), [X, IGNORED, WEIGHT]),
    OpCase("nll_loss_sum", lambda x, t: F.nll_loss(x, t, reduction="sum"),
           lambda x, t: -x[np.arange(3), t].sum(), [X, TARGET]),
    OpCase("binary_cross_entropy", F.binary_cross_entropy,
           lambda p, q: -(q * np.log(p) + (1 - q) * np.log(1 - p)).mean(), [P, Q]),
    OpCase("binary_cross_entropy_weight", lambda p, q, w: F.binary_cross_entropy(p, q, w, reduction="none"),
           lambda p, q, w: tref(TF.binary_cross_entropy, weight=torch.from_numpy(w), reduction="none")(p, q),
           [P, Q, WEIGHT]),
    OpCase("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits,
           tref(TF.binary_cross_entropy_with_logits), [X * 3, Q]),
    OpCase("binary_cross_entropy_with_logits_pos_weight",
           lambda x, q, w, pw: F.binary_cross_entropy_with_logits(x, q, w, reduction="sum", pos_weight=pw),
           lambda x, q, w, pw: tref(TF.binary_cross_entropy_with_logits, weight=torch.from_numpy(w),
                                    pos_weight=torch.from_numpy(pw), reduction="sum")(x, q),
           [X * 3, Q, WEIGHT, WEIGHT[::-1].copy()]),
    OpCase("kl_div", F.kl_div, lambda lp, q: (q * (np.log(q) - lp)).mean(), [X, Q]),
    OpCase("kl_div_batchmean_zero_target", lambda lp, q: F.kl_div(lp, q, reduction="batchmean"),
           tref(TF.kl_div, reduction="batchmean"), [X, np.where(Q < 0.3, 0.0, Q)], grad=False),
    OpCase("kl_div_log_target", lambda lp, lq: F.kl_div(lp, lq, reduction="sum", log_target=True),
           tref(TF.kl_div, reduction="sum", log_target=True), [X, Y]),
]

globals().update(op_tests(CASES))


def test_binary_cross_entropy_clamps_log_at_minus_100():
    got = F.binary_cross_entropy(wg.tensor([0.0, 1.0]), wg.tensor([1.0, 0.0]), reduction="none")
    assert got.tolist() == [100.0, 100.0]


def test_binary_cross_entropy_with_logits_is_stable():
    got = F.binary_cross_entropy_with_logits(wg.tensor([-200.0, 200.0]), wg.tensor([1.0, 0.0]), reduction="none")
    np.testing.assert_allclose(got.numpy(), [200.0, 200.0])


def test_cross_entropy_all_ignored_is_nan_like_torch(backend):
    """'mean' over no kept row is NaN (0 / 0), 'sum' is 0, and every gradient is 0, as in PyTorch."""
    t = np.array([-100, -100], np.int32)
    for reduction in ("mean", "sum"):
        x = wg.tensor(X[:2], dtype=wg.float32, requires_grad=True)
        got = F.cross_entropy(x, wg.tensor(t), reduction=reduction)
        got.backward()
        tx = torch.tensor(X[:2], requires_grad=True)
        want = TF.cross_entropy(tx, torch.tensor(t).long(), reduction=reduction)
        want.backward()
        np.testing.assert_array_equal(got.item(), want.item(), err_msg=f"{reduction} on {backend}")
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy(), err_msg=f"{reduction} gradient on {backend}")


def test_cross_entropy_is_one_kernel(backend):
    x, t = wg.tensor(X, dtype=wg.float32, requires_grad=True), wg.tensor(IGNORED)
    with wg.profile() as prof:
        F.cross_entropy(x, t)
    assert {name: s.calls for name, s in prof.stats.items() if s.calls} == {"SoftmaxCrossEntropy": 1}


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_softmax_cross_entropy_target_out_of_range(backend, reduction):
    x, t = wg.tensor(X, dtype=wg.float32, backend=backend), wg.tensor([1, 4, -100], backend=backend)
    if backend == "cpu":
        for bad in ([1, 4, -100], [1, -3, 0]):
            with pytest.raises(IndexError, match=f"SoftmaxCrossEntropy: target {bad[1]} is out of bounds for 4 "
                                                 "classes"):
                F.cross_entropy(x, wg.tensor(bad), reduction=reduction)
    else:   # the GPU raises at the readback after the op, and then goes on
        loss = F.cross_entropy(x, t, reduction=reduction)
        with pytest.raises(IndexError, match="SoftmaxCrossEntropy: index 4 is out of bounds for a dimension of size 4"):
            loss.numpy()
        assert np.isfinite(F.cross_entropy(x, wg.tensor([1, 3, -100], backend=backend)).item())


def test_softmax_cross_entropy_unknown_reduction(backend):
    x, t = wg.tensor(X, dtype=wg.float32), wg.tensor(TARGET)
    with pytest.raises(ValueError, match="SoftmaxCrossEntropy: reduction must be one of .*; got 'avg'"):
        wg.run_kernel("SoftmaxCrossEntropy", x, t, ignore_index=-100, reduction="avg")


SECOND_ORDER = {
    "cross_entropy": (lambda x: F.cross_entropy(x, wg.tensor(TARGET)), [X]),
    "cross_entropy_ignored_row": (lambda x: F.cross_entropy(x, wg.tensor(IGNORED)), [X]),
    "cross_entropy_probs_smoothing": (lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1), [X, probs(3, 4)]),
    "binary_cross_entropy_with_logits": (F.binary_cross_entropy_with_logits, [X, Q]),
    "smooth_l1_loss": (lambda a, b: F.smooth_l1_loss(a, b, beta=0.7), [X, Y]),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    fn, arrays = SECOND_ORDER[name]
    gradgradcheck(fn, *arrays, what=name)


@pytest.mark.parametrize("call, match", [
    (lambda: F.mse_loss(wg.ones(2), wg.ones(2), reduction="avg"), "mse_loss: reduction must be one of"),
    (lambda: F.cross_entropy(wg.ones(2, 3), wg.ones(2, 3), reduction="batchmean"), "cross_entropy: reduction"),
    (lambda: F.kl_div(wg.ones(2), wg.ones(2), reduction="max"), "kl_div: reduction"),
    (lambda: F.cross_entropy(wg.ones(2, 3), wg.tensor([[0, 1]])), r"cross_entropy: target must be class indices "
                                                                   r"\(int64 of shape \(2,\)\).*int64 \(1, 2\)"),
    (lambda: F.cross_entropy(wg.ones(2, 3), wg.tensor([0.0, 1.0])), r"cross_entropy: .*got float32 \(2,\)"),
    (lambda: F.cross_entropy(wg.ones(2, 3), wg.ones(2, 4)), r"cross_entropy: .*input's shape \(2, 3\)"),
    (lambda: F.cross_entropy(wg.ones(2, 3), wg.tensor([0, 1]), weight=wg.ones(2)), r"cross_entropy: weight must"),
    (lambda: F.cross_entropy(wg.ones(2, 3), wg.tensor([0, 1]), label_smoothing=1.5), "cross_entropy: label_smoo"),
    (lambda: F.nll_loss(wg.ones(2, 3), wg.tensor([0])), "nll_loss: class-index target"),
    (lambda: F.binary_cross_entropy(wg.ones(2), wg.ones(3)), "binary_cross_entropy: target of shape"),
    (lambda: F.binary_cross_entropy_with_logits(wg.ones(2), wg.ones(2, 1)), "binary_cross_entropy_with_logits"),
    (lambda: F.smooth_l1_loss(wg.ones(2), wg.ones(2), beta=-1.0), "smooth_l1_loss: beta"),
    (lambda: F.l1_loss(wg.ones(2), [1.0, 2.0]), "l1_loss: target must be a Tensor"),
])
def test_bad_arguments(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_kl_div_negative_target_is_nan_as_pytorch(backend):
    """PyTorch's pointwise term is xlogy(target, target) - target * input: NaN where target < 0."""
    log_p, target = np.log([0.1, 0.2, 0.3]), np.array([-0.5, 0.0, 0.5])
    ours = F.kl_div(wg.tensor(log_p, dtype=wg.float32), wg.tensor(target, dtype=wg.float32), reduction="none")
    theirs = TF.kl_div(torch.tensor(log_p, dtype=torch.float32), torch.tensor(target, dtype=torch.float32),
                       reduction="none")
    np.testing.assert_allclose(ours.tolist(), theirs.tolist(), rtol=1e-6)
    assert np.isnan(ours.tolist()[0]) and ours.tolist()[1] == 0.0


@pytest.mark.parametrize("margin", [2.7, -2.5])
def test_hinge_embedding_loss_on_integers_stays_integer_as_pytorch(backend, margin):
    """PyTorch takes the margin in the input's integer dtype (truncated) and returns that dtype."""
    x, t = [-4, -4, 1, 3], [-1, -1, -1, 1]
    for reduction in ("none", "sum"):
        ours = F.hinge_embedding_loss(wg.tensor(x), wg.tensor(t), margin=margin, reduction=reduction)
        theirs = TF.hinge_embedding_loss(torch.tensor(x), torch.tensor(t), margin=margin, reduction=reduction)
        assert ours.dtype is wg.int64 and ours.tolist() == theirs.tolist()
    with pytest.raises(RuntimeError, match="mean"):   # PyTorch's mean of integers
        F.hinge_embedding_loss(wg.tensor(x), wg.tensor(t))
