"""F.ctc_loss / nn.CTCLoss and F.bilinear against torch: values and gradients for every reduction,
zero_infinity, padded and concatenated targets, unbatched input; finite differences through
log_softmax (float64, cpu); backend agreement."""
import numpy as np
import pytest
import torch

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradcheck, op_tests, torch_reference

TF = torch.nn.functional
rng = np.random.default_rng(0)
X = rng.standard_normal((6, 3, 4))
TARGETS = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]])
INPUT_LENGTHS, TARGET_LENGTHS = [6, 5, 2], [3, 2, 1]


def _ctc(lib, x, targets, reduction="mean", zero_infinity=False, leaf=False):
    f = F if lib is wg else TF
    lp = x if leaf else x.log_softmax(2)
    return f.ctc_loss(lp, lib.tensor(targets), lib.tensor(INPUT_LENGTHS), lib.tensor(TARGET_LENGTHS),
                      reduction=reduction, zero_infinity=zero_infinity)


CASES = [OpCase(f"ctc_loss-{r}", lambda x, r=r: _ctc(wg, x, TARGETS, r),
                torch_reference(lambda x, r=r: _ctc(torch, x, TARGETS, r)), [X], atol=1e-5, grad_atol=1e-4)
         for r in ("none", "sum", "mean")]
CASES += [OpCase("bilinear", F.bilinear, torch_reference(TF.bilinear),
                 [rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((5, 3, 4)),
                  rng.standard_normal(5)], atol=1e-5)]
globals().update(op_tests(CASES))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("leaf", [True, False])
def test_ctc_gradients_match_torch(backend, reduction, leaf):
    x = X.astype("float32")
    tx, wx = torch.tensor(x, requires_grad=True), wg.tensor(x, requires_grad=True)
    t_loss, w_loss = _ctc(torch, tx, TARGETS, reduction, leaf=leaf), _ctc(wg, wx, TARGETS, reduction, leaf=leaf)
    np.testing.assert_allclose(np.asarray(w_loss.tolist()), t_loss.detach().numpy(), rtol=1e-5)
    t_loss.sum().backward(); w_loss.sum().backward()
    np.testing.assert_allclose(np.asarray(wx.grad.tolist()), tx.grad.numpy(), atol=1e-5)


def test_ctc_impossible_alignments_and_target_forms(backend):
    x = X.astype("float32")
    targets = np.array([[1, 1], [1, 1], [1, 1]])   # a repeated label needs 3 steps; element 0 has 2
    for zero_infinity in (False, True):
        tx, wx = torch.tensor(x, requires_grad=True), wg.tensor(x, requires_grad=True)
        t_loss = TF.ctc_loss(tx.log_softmax(2), torch.tensor(targets), [2, 6, 6], [2, 2, 2], reduction="none",
                             zero_infinity=zero_infinity)
        w_loss = F.ctc_loss(wx.log_softmax(2), wg.tensor(targets), [2, 6, 6], [2, 2, 2], reduction="none",
                            zero_infinity=zero_infinity)
        np.testing.assert_allclose(np.asarray(w_loss.tolist()), t_loss.detach().numpy(), rtol=1e-5)
    t_loss.sum().backward(); w_loss.sum().backward()
    np.testing.assert_allclose(np.asarray(wx.grad.tolist()), tx.grad.numpy(), atol=1e-5)
    concatenated = [1, 2, 2, 3, 1, 2]
    assert np.isclose(F.ctc_loss(wg.tensor(x).log_softmax(2), wg.tensor(concatenated), INPUT_LENGTHS,
                                 TARGET_LENGTHS).item(),
                      TF.ctc_loss(torch.tensor(x).log_softmax(2), torch.tensor(concatenated),
                                  torch.tensor(INPUT_LENGTHS), torch.tensor(TARGET_LENGTHS)).item(), rtol=1e-5)
    single = x[:, 0]
    assert np.isclose(F.ctc_loss(wg.tensor(single).log_softmax(1), wg.tensor([1, 2]), wg.tensor(6), wg.tensor(2),
                                 reduction="none").item(),
                      TF.ctc_loss(torch.tensor(single).log_softmax(1), torch.tensor([1, 2]), torch.tensor(6),
                                  torch.tensor(2), reduction="none").item(), rtol=1e-5)


def test_ctc_module_and_errors(backend):
    lp = wg.tensor(X.astype("float32")).log_softmax(2)
    module = wg.nn.CTCLoss(blank=0, reduction="sum")
    assert repr(module) == repr(torch.nn.CTCLoss(reduction="sum"))
    assert np.isclose(module(lp, wg.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS).item(),
                      torch.nn.CTCLoss(reduction="sum")(torch.tensor(X.astype("float32")).log_softmax(2),
                                                        torch.tensor(TARGETS), torch.tensor(INPUT_LENGTHS),
                                                        torch.tensor(TARGET_LENGTHS)).item(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="blank"):
        F.ctc_loss(lp, wg.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS, blank=4)
    with pytest.raises(RuntimeError, match="input_lengths"):
        F.ctc_loss(lp, wg.tensor(TARGETS), [7, 5, 2], TARGET_LENGTHS)
    with pytest.raises(ValueError, match="reduction"):
        F.ctc_loss(lp, wg.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS, reduction="avg")


def test_ctc_finite_differences_through_log_softmax():
    gradcheck(lambda x: _ctc(wg, x, TARGETS, "mean"), X, what="ctc_loss(log_softmax(x))")


def test_bilinear_module_uses_the_function(backend):
    m = wg.nn.Bilinear(3, 4, 2)
    a, b = wg.randn(5, 3), wg.randn(5, 4)
    assert m(a, b).tolist() == F.bilinear(a, b, m.weight, m.bias).tolist()
    with pytest.raises(RuntimeError, match="bilinear"):
        F.bilinear(a, wg.randn(5, 3), m.weight)
