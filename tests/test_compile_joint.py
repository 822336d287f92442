"""Joint steps (core/compiler/joint.py): on cpu a compiled step's cross-entropy and its gradient run as
one kernel (backends/cpu/losses.py ``softmax_cross_entropy_joint``) with the numbers of each alone;
a gradient whose dy comes later (the loss differentiated outside the compiled function) keeps its
own step; other backends join nothing."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad.backends.cpu.losses import softmax_cross_entropy_joint
from webgrad.registry import _kernels


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("classes", [5, 40])          # class-major rows (<= 32 classes) and plain ones
def test_joint_kernel_equals_the_kernel_and_its_backward_kernel(reduction, ignore_index, classes):
    rng = np.random.default_rng(classes)
    x = rng.standard_normal((9, classes), dtype=np.float32) * 4
    x[0, 1], x[1, 0] = np.inf, -np.inf
    target = rng.integers(0, 4, 9)
    dy = np.asarray(rng.standard_normal(() if reduction != "none" else (9,), dtype=np.float32))
    attrs = {"ignore_index": ignore_index, "reduction": reduction}
    with np.errstate(all="ignore"):
        want_loss = _kernels["cpu"]["SoftmaxCrossEntropy"](x, target, **attrs)
        want_grad = _kernels["cpu"]["SoftmaxCrossEntropyGrad"](dy, x, target, **attrs)[0]
    loss, grad, none = softmax_cross_entropy_joint(x, target, dy, **attrs)
    assert none is None
    assert np.asarray(loss).tobytes() == np.asarray(want_loss).tobytes()
    assert grad.tobytes() == want_grad.tobytes()


def _run(backend, compiled, reduction="mean", ignore_index=-100):
    wg.manual_seed(0)
    lin = wg.nn.Linear(6, 4).to(backend)
    opt = wg.optim.SGD(lin.parameters(), lr=0.2)
    rng = np.random.default_rng(0)
    x = wg.tensor(rng.standard_normal((8, 6), dtype=np.float32))
    y = wg.tensor(rng.integers(0, 4, 8))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(lin(x), y, reduction=reduction, ignore_index=ignore_index)
        (loss if reduction != "none" else loss.sum()).backward()
        opt.step()
        return loss
    fn = wg.compile(step) if compiled else step
    losses = [fn().tolist() for _ in range(5)]
    return losses, [p.tolist() for p in lin.parameters()], fn


@pytest.mark.parametrize("reduction,ignore_index", [("mean", -100), ("sum", 1), ("none", 3)])
def test_a_compiled_step_with_a_joint_loss_equals_eager(backend, reduction, ignore_index):
    losses, params, fn = _run(backend, True, reduction, ignore_index)
    want = _run(backend, False, reduction, ignore_index)
    if backend == "cpu":
        assert (losses, params) == want[:2]
        assert "SoftmaxCrossEntropy+SoftmaxCrossEntropyGrad" in fn.explain()
    else:
        assert np.allclose(np.float32(losses), np.float32(want[0]), rtol=1e-5, atol=1e-6)
        assert "SoftmaxCrossEntropy+" not in fn.explain()


def test_a_gradient_still_to_come_keeps_its_step(backend):
    wg.manual_seed(0)
    lin = wg.nn.Linear(3, 4)
    x, y = wg.ones(2, 3), wg.tensor([1, 3])
    fast = wg.compile(lambda x, y: F.cross_entropy(lin(x), y))
    grads = []
    for _ in range(3):
        lin.zero_grad()
        (fast(x, y) * 2).backward()      # dy (2) is known only after the call
        grads.append(lin.weight.grad.tolist())
    lin.zero_grad()
    (F.cross_entropy(lin(x), y) * 2).backward()
    assert grads[-1] == lin.weight.grad.tolist() if backend == "cpu" else np.allclose(grads[-1], lin.weight.grad.tolist())
    assert "SoftmaxCrossEntropy+" not in fast.explain()
