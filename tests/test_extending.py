"""Extending webgrad: gradient and kernel overrides (scoped and not), the backend interface,
backends derived from cpu and chosen by priority, and the two extension examples."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import webgrad as wg
from webgrad import registry

from test_examples import printed_values, run_script

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def load_example(name: str):
    """Import ``examples/<name>.py`` as a module (without running its ``main``)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def guided_relu(dy, saved, attrs):
    """Guided backprop: pass only positive gradients, and only where the forward was positive."""
    (y,) = saved
    return (wg.where(y > 0, dy.clamp(min=0), 0.0),)


def relu_grad(upstream):
    x = wg.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    x.relu().backward(wg.tensor(upstream))
    return x.grad.tolist()


UP = [1.0, -1.0, 1.0]
PLAIN, GUIDED = [0.0, -1.0, 1.0], [0.0, 0.0, 1.0]


# ---------------------------------------------------------------- gradient overrides

def test_override_gradient_scoped():
    builtin = wg.get_gradient("Relu")
    with wg.override_gradient("Relu", guided_relu, outputs_to_save=[0]) as handle:
        assert relu_grad(UP) == GUIDED
        assert wg.get_gradient("Relu").fn is guided_relu
    assert handle.restored and wg.get_gradient("Relu") == builtin
    assert relu_grad(UP) == PLAIN


def test_override_gradient_plain_call_and_restore():
    builtin = wg.get_gradient("Relu")
    handle = wg.override_gradient("Relu", guided_relu, outputs_to_save=[0])
    try:
        assert relu_grad(UP) == GUIDED
    finally:
        handle.restore()
    handle.restore()  # a second restore does nothing
    assert wg.get_gradient("Relu") == builtin and relu_grad(UP) == PLAIN


def test_override_gradient_puts_back_outputs_kept_by_value():
    """Gelu's rule keeps its result by value (``output_values``); an override and its undoing keep
    the rule whole, and a rule of one's own may keep an output by value too."""
    builtin = wg.get_gradient("Gelu")
    assert builtin.output_values == (0,)
    seen = []

    def twice(dy, saved, attrs):
        seen.append(saved[1].requires_grad)
        return (dy * 2,)
    x = wg.tensor([1.0, -2.0], requires_grad=True)
    with wg.override_gradient("Gelu", twice, inputs_to_save=[0], output_values=[0]):
        y = wg.nn.functional.gelu(x)
        y.mul_(3)                       # kept by value: no version error
        y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0] and seen == [False]
    assert wg.get_gradient("Gelu") == builtin


def test_override_gradient_restores_after_an_exception():
    builtin = wg.get_gradient("Relu")
    with pytest.raises(ZeroDivisionError):
        with wg.override_gradient("Relu", guided_relu, outputs_to_save=[0]):
            assert relu_grad(UP) == GUIDED
            1 / 0
    assert wg.get_gradient("Relu") == builtin and relu_grad(UP) == PLAIN


def test_nested_overrides_unwind_in_order():
    double = lambda dy, saved, attrs: (dy * 2,)  # noqa: E731
    with wg.override_gradient("Relu", guided_relu, outputs_to_save=[0]):
        with wg.override_gradient("Relu", double):
            assert relu_grad(UP) == [2.0, -2.0, 2.0]
        assert relu_grad(UP) == GUIDED
    assert relu_grad(UP) == PLAIN


def test_graph_keeps_the_rule_it_was_recorded_with():
    x = wg.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    with wg.override_gradient("Relu", guided_relu, outputs_to_save=[0]):
        y = x.relu()
    y.backward(wg.tensor(UP))
    assert x.grad.tolist() == GUIDED


def test_override_a_kernel_without_a_gradient_then_remove_it():
    name = "TestNoGradYet"
    with wg.override_kernel(name, "cpu", lambda x: x * 3):
        with wg.override_gradient(name, lambda dy, saved, attrs: (dy * 3,)):
            x = wg.tensor([1.0, 2.0], backend="cpu", requires_grad=True)
            wg.run_kernel(name, x).sum().backward()
            assert x.grad.tolist() == [3.0, 3.0]
        assert wg.get_gradient(name) is None
    assert name not in wg.kernels_for_backend("cpu")


def test_unregister_then_register_again_restores_a_builtin_gradient():
    rule = wg.unregister_gradient("Relu")
    try:
        with pytest.raises(RuntimeError, match="no gradient is registered for kernel 'Relu'"):
            relu_grad(UP)
    finally:
        wg.register_gradient("Relu", rule.fn, inputs_to_save=rule.inputs_to_save,
                             outputs_to_save=rule.outputs_to_save, kernel=rule.kernel)
    assert wg.get_gradient("Relu") == rule and relu_grad(UP) == PLAIN


# ---------------------------------------------------------------- kernel overrides

def test_override_kernel_replaces_and_restores_a_builtin():
    builtin = wg.get_kernel("Exp", "cpu")
    with wg.override_kernel("Exp", "cpu", lambda x: np.ones_like(x)):
        assert wg.tensor([0.0, 5.0], backend="cpu").exp().tolist() == [1.0, 1.0]
    assert wg.get_kernel("Exp", "cpu") is builtin
    assert wg.tensor([0.0], backend="cpu").exp().tolist() == [1.0]


def test_kernel_on_one_backend_only_names_it_in_the_error():
    with wg.override_kernel("TestOnlyOnFoo", "foo", lambda x: x):
        with pytest.raises(NotImplementedError, match="'TestOnlyOnFoo' is not registered for backend 'cpu'.*foo"):
            wg.run_kernel("TestOnlyOnFoo", wg.tensor([1.0], backend="cpu"))


# ---------------------------------------------------------------- backends

def test_builtin_backends_satisfy_the_protocol():
    for name in wg.backends():
        assert isinstance(wg.backend(name), wg.Backend)
    assert not isinstance(object(), wg.Backend)


def test_derive_backend_copies_and_wraps_every_kernel():
    seen = []
    try:
        made = wg.derive_backend("test_derived", "cpu", wrap=lambda name, fn: seen.append(name) or fn)
        assert set(made) == set(wg.kernels_for_backend("cpu")) == set(seen)
        assert wg.get_kernel("MatMul", "test_derived") is wg.get_kernel("MatMul", "cpu")
    finally:
        assert wg.remove_backend("test_derived") == len(made)
    assert wg.kernels_for_backend("test_derived") == {}


def test_derive_backend_bad_names():
    with pytest.raises(ValueError, match="derive_backend: backend 'nothing_here' has no kernels"):
        wg.derive_backend("x", "nothing_here")
    with pytest.raises(ValueError, match="derive_backend: .*'cpu' twice"):
        wg.derive_backend("cpu", "cpu")


@pytest.fixture
def counting(monkeypatch):
    monkeypatch.delenv("WEBGRAD_BACKEND", raising=False)
    return load_example("counting_backend")


def test_counting_backend_chosen_by_priority(counting):
    before = wg.get_backend().name
    with counting.counting(priority=100) as calls:
        assert wg.backends()[0] == "counting" and wg.get_backend().name == "counting"
        assert isinstance(wg.get_backend(), wg.Backend)
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        assert x.device == "counting"
        (x * x).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0] and x.grad.device == "counting"
        assert calls["Mul"] == 1 and calls["Sum"] == 1       # forward x*x, and backward's kernels (derived
        assert calls["MulGrad"] == 1 and calls["SumGrad"] == 1   # from cpu, so the backend has them too)
        assert x.to("cpu").device == "cpu"
    assert "counting" not in wg.backends() and wg.kernels_for_backend("counting") == {}
    assert wg.get_backend().name == before


def test_counting_backend_below_cpu_is_not_the_default(counting):
    with counting.counting(priority=-100) as calls:
        assert wg.get_backend().name != "counting" and "counting" in wg.backends()
        wg.ones(2) + 1
        assert not calls
        y = wg.ones(2, backend="counting") + 1
        assert y.device == "counting" and calls["Add"] == 1


def test_counting_backend_example_runs():
    v = printed_values(run_script(EXAMPLES / "counting_backend.py"))
    assert v["default backend"] == "counting" and v["tensor backend"] == "counting"
    assert v["total calls"] == sum(v["kernel calls"].values()) > 10
    assert v["default backend after"] != "counting"


# ---------------------------------------------------------------- a custom op with kernel and gradient

@pytest.fixture
def swish_example():
    module = load_example("custom_kernel")
    yield module
    registry.unregister_kernel(module.SWISH, "cpu")
    registry.unregister_gradient(module.SWISH)


def test_swish_kernel_gradient_matches_finite_differences(swish_example):
    assert swish_example.gradient_error() < 1e-7


def test_swish_kernel_agrees_with_composed_ops_to_second_order(swish_example):
    rng = np.random.default_rng(1)
    xs, bs = rng.standard_normal((2, 3)), rng.standard_normal(3)

    def first_and_second(composed):
        x = wg.tensor(xs, backend="cpu", requires_grad=True)
        b = wg.tensor(bs, backend="cpu", requires_grad=True)
        y = x * (b * x).sigmoid() if composed else swish_example.swish(x, b)
        gx, gb = wg.grad(y.sum(), [x, b], create_graph=True)
        hx, hb = wg.grad((gx * gx).sum() + gb.sum(), [x, b])
        return [t.detach().numpy() for t in (y, gx, gb, hx, hb)]
    for got, want in zip(first_and_second(False), first_and_second(True)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_swish_bad_input(swish_example):
    with pytest.raises(TypeError, match="swish: expected floating"):
        swish_example.swish(wg.tensor([1, 2]), 1)


def test_custom_kernel_example_trains_on_every_backend():
    v = printed_values(run_script(EXAMPLES / "custom_kernel.py"))
    assert v["gradient max error"] < 1e-7
    for name in wg.backends():
        [first] = [val for label, val in v.items() if label.startswith(f"{name} (") and label.endswith("first loss")]
        [last] = [val for label, val in v.items() if label.startswith(f"{name} (") and label.endswith("last loss")]
        assert last < 0.05 * first, f"{name}: loss fell only from {first} to {last}"
