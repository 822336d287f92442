"""Backward kernels (a rule's ``kernel``): each cpu one equals its gradient rule, backward runs one
only while the registered rule names it, it is an ordinary kernel (the profiler sees it,
``override_kernel`` replaces it), and the op tests' ``test_native_vjps`` cover the ops."""
import numpy as np
import pytest

import webgrad as wg
from webgrad import kernel_names as K
from webgrad import registry

from opinfo import assert_close

R = np.random.default_rng(0)


def _a(*shape):
    return R.standard_normal(shape)


# one call per kernel with a cpu backward kernel: (inputs, attrs); broadcasting and unused inputs included
SAMPLES = {
    K.ADD: ([_a(3, 4), _a(4)], {}),
    K.SUB: ([_a(3, 1), _a(3, 4)], {}),
    K.MUL: ([_a(2, 3), _a(2, 3)], {}),
    K.DIV: ([_a(2, 3), _a(3) + 3.0], {}),
    K.NEG: ([_a(5)], {}),
    K.EXP: ([_a(2, 2)], {}),
    K.LOG: ([np.abs(_a(4)) + 0.5], {}),
    K.TANH: ([_a(3)], {}),
    K.SIGMOID: ([_a(3)], {}),
    K.RELU: ([np.array([-1.0, 0.0, 2.0, 3.0])], {}),
    K.WHERE: ([np.array([True, False, True]), _a(3), _a(3)], {}),
    K.CAST: ([_a(3)], {"dtype": wg.float32}),
    K.SUM: ([_a(2, 3, 4)], {"axes": (1,), "keepdim": False}),
    K.MAX: ([np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])], {"axes": (1,), "keepdim": True}),
    K.MIN: ([np.array([[1.0, 1.0, 3.0], [2.0, 0.0, -1.0]])], {"axes": (0, 1), "keepdim": False}),
    K.MATMUL: ([_a(3, 4), _a(5, 4)], {"transpose_a": False, "transpose_b": True}),
    K.RESHAPE: ([_a(2, 6)], {"shape": (3, 4)}),
    K.TRANSPOSE: ([_a(2, 3, 4)], {"perm": (2, 0, 1)}),
    K.EXPAND: ([_a(3, 1)], {"shape": (2, 3, 4)}),
    K.GATHER: ([_a(3, 4), np.array([[0, 3], [1, 1], [2, 0]], np.int32)], {"axis": 1}),
    K.SOFTMAX_CROSS_ENTROPY: ([_a(4, 3), np.array([2, -100, 0, 1], np.int32)],
                              {"ignore_index": -100, "reduction": "mean"}),   # "none", "sum": the op tests
    K.IM2COL: ([_a(2, 2, 5, 5)], {"kernel_size": (3, 3), "stride": (2, 2), "padding": (1, 1),
                                  "dilation": (1, 1)}),
}


def _grads(kernel, arrays, attrs, create_graph):
    ts = [wg.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    y = wg.run_kernel(kernel, *ts, **attrs)
    w = wg.tensor(np.random.default_rng(1).standard_normal(y.shape), dtype=y.dtype)
    floats = [t for t in ts if t.requires_grad]
    return wg.grad((y * w).sum(), floats, create_graph=create_graph)


def test_every_cpu_backward_kernel_has_a_sample():
    named = {wg.get_gradient(k).kernel for k in SAMPLES}
    assert named == {k + "Grad" for k in SAMPLES} == set(K.BACKWARD_KERNELS) & set(registry._kernels["cpu"])


@pytest.mark.parametrize("kernel", sorted(SAMPLES))
def test_cpu_backward_kernel_equals_its_rule(kernel):
    arrays, attrs = SAMPLES[kernel]
    with wg.profile() as prof:
        native = _grads(kernel, arrays, attrs, create_graph=False)
    assert prof.stats[kernel + "Grad"].calls >= 1           # the backward kernel ran ...
    rule = _grads(kernel, arrays, attrs, create_graph=True)  # ... and here the rule
    for n, r in zip(native, rule):
        assert n.dtype == r.dtype
        assert_close(n, r, 1e-12, 1e-12, f"{kernel}: backward kernel vs rule")


def test_backward_kernel_of_the_matmul_skips_inputs_without_grad():
    x, w = wg.tensor(_a(3, 4)), wg.tensor(_a(4, 2), requires_grad=True)
    with wg.profile() as prof:
        (x @ w).sum().backward()
    assert prof.stats["MatMul"].calls == 1 and prof.stats["MatMulGrad"].calls == 1
    assert x.grad is None and w.grad is not None


def test_an_overridden_rule_is_used_instead_of_the_backward_kernel():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.override_gradient(K.EXP, lambda dy, saved, attrs: (dy * 7.0,)):
        x.exp().sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]
    x.grad = None
    with wg.profile() as prof:
        x.exp().sum().backward()                            # the built-in rule is back, and its kernel
    assert prof.stats["ExpGrad"].calls == 1
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_override_kernel_of_a_backward_kernel_takes_effect():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.override_kernel(K.EXP_GRAD, "cpu", lambda dy, y, **_: (dy * 5.0,)):
        x.exp().sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    x.grad = None
    x.exp().sum().backward()                                # the built-in kernel is back
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_a_backend_without_the_backward_kernel_runs_the_rule():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    kernel = wg.unregister_kernel(K.EXP_GRAD, "cpu")
    try:
        with wg.profile() as prof:
            x.exp().sum().backward()
        assert "ExpGrad" not in prof.stats and prof.stats["Mul"].calls == 1   # the rule: dy * y
    finally:
        wg.register_kernel(K.EXP_GRAD, "cpu", kernel)
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_a_backward_kernel_returning_the_wrong_count_names_the_kernel():
    wg.register_kernel("Twice", "cpu", lambda x: x * 2)
    wg.register_gradient("Twice", lambda dy, saved, attrs: (dy * 2,), kernel="TwiceGrad")
    wg.register_kernel("TwiceGrad", "cpu", lambda dy, **_: (dy * 2, dy))
    try:
        x = wg.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="'Twice' returned 2 gradients for 1 inputs"):
            wg.run_kernel("Twice", x).sum().backward()
    finally:
        wg.unregister_kernel("TwiceGrad", "cpu")
        wg.unregister_gradient("Twice")
        wg.unregister_kernel("Twice", "cpu")


def test_a_saved_tensor_modified_in_place_is_caught_on_the_native_path():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    y = a * a
    with wg.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_a_parameter_reloaded_after_the_forward_is_caught_on_the_native_path():
    lin = wg.nn.Linear(3, 2)
    loss = lin(wg.ones(4, 3, requires_grad=True)).sum()   # the input's gradient reads lin.weight
    lin.load_state_dict({k: v + 1 for k, v in lin.state_dict().items()})   # an in-place change, not an op
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


def test_a_parameter_reloaded_after_the_forward_is_fine_when_no_gradient_reads_it():
    """As PyTorch: with an input that wants no gradient, the weight's own gradient reads the input only."""
    lin = wg.nn.Linear(3, 2)
    loss = lin(wg.ones(4, 3)).sum()
    lin.load_state_dict({k: v + 1 for k, v in lin.state_dict().items()})
    loss.backward()
    assert lin.weight.grad.tolist() == [[4.0] * 3] * 2


def test_an_in_place_change_before_the_forward_leaves_the_check_out_and_the_gradient_right():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    with wg.no_grad():
        a.add_(1.0)   # before the node that saves it: nothing to catch
    (a * a).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]


def test_backward_kernels_run_quietly_and_restore_numpys_error_state():
    before = np.geterr()
    x, y = wg.tensor([1.0, 1e30], requires_grad=True), wg.tensor([0.0, 1e-30], requires_grad=True)
    with np.errstate(all="raise"):   # a warning the pass let through would raise here
        (x / y * 1e30).sum().backward()   # the Div backward kernel divides by zero and overflows
        assert np.geterr()["divide"] == "raise"   # its quiet scope is left behind it
    assert np.isinf(x.grad.numpy()).all() and np.isinf(y.grad.numpy()).all()
    assert np.geterr() == before


def test_numpys_error_state_is_restored_when_a_native_pass_fails():
    before = np.geterr()
    test_a_backward_kernel_returning_the_wrong_count_names_the_kernel()
    assert np.geterr() == before
