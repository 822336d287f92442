"""The kernel, gradient and backend registries, run_kernel's errors, and memory()."""
import gc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import webgrad as wg
from webgrad import registry


# ---------------------------------------------------------------- kernels

@pytest.fixture
def scratch_kernels():
    """Names registered during a test are removed after it (kernels and gradients)."""
    names = []
    yield names
    for name in names:
        for b in [b for b, table in registry._kernels.items() if name in table]:
            wg.unregister_kernel(name, b)
        registry._gradients.pop(name, None)


def test_register_get_unregister_kernel(scratch_kernels):
    scratch_kernels.append("TestTwice")

    def twice(x):
        return x * 2
    assert wg.register_kernel("TestTwice", "cpu", twice) is twice
    assert wg.get_kernel("TestTwice", "cpu") is twice
    assert wg.kernels_for_backend("cpu")["TestTwice"] is twice
    assert wg.run_kernel("TestTwice", wg.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert wg.unregister_kernel("TestTwice", "cpu") is twice
    assert "TestTwice" not in wg.kernels_for_backend("cpu")
    with pytest.raises(KeyError, match="TestTwice"):
        wg.unregister_kernel("TestTwice", "cpu")


def test_register_kernel_as_decorator(scratch_kernels):
    scratch_kernels.append("TestAffine")

    @wg.register_kernel("TestAffine", "cpu")
    def affine(x, *, scale, shift):
        return np.asarray(x * scale + shift, dtype=x.dtype)
    assert callable(affine) and wg.get_kernel("TestAffine", "cpu") is affine
    assert wg.run_kernel("TestAffine", wg.tensor([1.0, 2.0]), scale=3.0, shift=1.0).tolist() == [4.0, 7.0]


def test_register_twice_warns_and_replaces(scratch_kernels):
    scratch_kernels.append("TestDup")
    wg.register_kernel("TestDup", "cpu", lambda x: x)
    new = lambda x: x + 1  # noqa: E731
    with pytest.warns(UserWarning, match="TestDup.*already registered"):
        wg.register_kernel("TestDup", "cpu", new)
    assert wg.get_kernel("TestDup", "cpu") is new
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wg.register_kernel("TestDup", "cpu", new)  # the same function again: no warning


def test_builtin_kernels_on_cpu():
    kernels = wg.kernels_for_backend("cpu")
    for name in ("Add", "Mul", "Sum", "Reshape", "Fill", "Cast"):
        assert name in kernels


def test_missing_kernel_error_names_kernel_and_backend():
    with pytest.raises(NotImplementedError, match="'NoSuchKernel' is not registered for backend 'cpu'.*no backend"):
        wg.run_kernel("NoSuchKernel", wg.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="NoSuchKernel"):
        wg.get_kernel("NoSuchKernel", "cpu")


def test_missing_kernel_error_lists_backends_that_have_it(scratch_kernels):
    scratch_kernels.append("TestElsewhere")
    wg.register_kernel("TestElsewhere", "otherbackend", lambda x: x)
    with pytest.raises(NotImplementedError, match="'TestElsewhere' is not registered for backend 'cpu'; "
                                                  "it is registered for: otherbackend"):
        wg.run_kernel("TestElsewhere", wg.tensor([1.0]))


# ---------------------------------------------------------------- gradients

def test_get_gradient_of_builtin():
    rule = wg.get_gradient("Mul")
    assert rule is not None and callable(rule.fn)
    assert wg.get_gradient("NoSuchKernel") is None


def test_custom_kernel_with_gradient_saving_inputs_and_outputs(scratch_kernels):
    scratch_kernels.append("TestCubeScale")
    seen = {}

    @wg.register_kernel("TestCubeScale", "cpu")
    def cube_scale(x, *, alpha):
        return np.asarray(alpha * x ** 3, dtype=x.dtype)

    @wg.register_gradient("TestCubeScale", inputs_to_save=[0], outputs_to_save=[0])
    def cube_scale_grad(dy, saved, attrs):
        x, y = saved
        seen.update(x=x.tolist(), y=y.tolist(), shapes=saved.shapes, dtypes=saved.dtypes, attrs=dict(attrs))
        return (dy * 3 * y / x,)   # d(a x^3)/dx = 3 a x^2 = 3 y / x

    rule = wg.get_gradient("TestCubeScale")
    assert rule.fn is cube_scale_grad and tuple(rule.inputs_to_save) == (0,) and tuple(rule.outputs_to_save) == (0,)
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = wg.run_kernel("TestCubeScale", x, alpha=2.0)
    assert y.tolist() == [2.0, 16.0] and y.requires_grad and y.grad_fn is not None
    assert "TestCubeScale" in repr(y.grad_fn)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert seen == dict(x=[1.0, 2.0], y=[2.0, 16.0], shapes=((2,),), dtypes=(wg.float32,), attrs={"alpha": 2.0})

    removed = wg.unregister_gradient("TestCubeScale")
    assert removed.fn is cube_scale_grad and wg.get_gradient("TestCubeScale") is None
    with pytest.raises(KeyError, match="TestCubeScale"):
        wg.unregister_gradient("TestCubeScale")


def test_custom_gradient_is_differentiable(scratch_kernels):
    scratch_kernels.append("TestSquare2")
    wg.register_kernel("TestSquare2", "cpu", lambda x: np.asarray(x * x, dtype=x.dtype))
    wg.register_gradient("TestSquare2", lambda dy, saved, attrs: (2 * dy * saved[0],), inputs_to_save=[0])
    x = wg.tensor(3.0, requires_grad=True)
    (g,) = wg.grad(wg.run_kernel("TestSquare2", x), x, create_graph=True)
    (gg,) = wg.grad(g, x)
    assert g.item() == 6.0 and gg.item() == 2.0


def test_multi_output_kernel_gradient(scratch_kernels):
    scratch_kernels.append("TestTwoWays")
    wg.register_kernel("TestTwoWays", "cpu", lambda x: (np.asarray(2 * x, dtype=x.dtype),
                                                         np.asarray(3 * x, dtype=x.dtype)))

    @wg.register_gradient("TestTwoWays")
    def two_ways_grad(dy, saved, attrs):
        d2, d3 = dy
        assert saved == () and saved.shapes == ((2,),)
        return (d2 * 2 + d3 * 3,)
    x = wg.tensor([1.0, 1.0], requires_grad=True)
    a, b = wg.run_kernel("TestTwoWays", x)
    assert a.grad_fn is b.grad_fn and a.tolist() == [2.0, 2.0] and b.tolist() == [3.0, 3.0]
    a.sum().backward()                       # b unused: its gradient arrives as zeros
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    (a.sum() + b.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_gradient_returning_broadcast_shape_is_summed(scratch_kernels):
    scratch_kernels.append("TestRowAdd")
    wg.register_kernel("TestRowAdd", "cpu", lambda x, b: np.asarray(x + b, dtype=x.dtype))
    wg.register_gradient("TestRowAdd", lambda dy, saved, attrs: (dy, dy))
    x = wg.ones(3, 2, requires_grad=True)
    b = wg.ones(2, requires_grad=True)
    wg.run_kernel("TestRowAdd", x, b).sum().backward()
    assert x.grad.shape == (3, 2) and b.grad.tolist() == [3.0, 3.0]


def test_kernel_without_gradient_errors_at_backward(scratch_kernels):
    scratch_kernels.append("TestNoGrad")
    wg.register_kernel("TestNoGrad", "cpu", lambda x: np.asarray(x + 1, dtype=x.dtype))
    x = wg.tensor([1.0], requires_grad=True)
    y = wg.run_kernel("TestNoGrad", x)
    with pytest.raises(RuntimeError, match="no gradient is registered for kernel 'TestNoGrad'"):
        y.sum().backward()


def test_gradient_returning_wrong_count_errors(scratch_kernels):
    scratch_kernels.append("TestBadGrad")
    wg.register_kernel("TestBadGrad", "cpu", lambda x: np.asarray(x + 1, dtype=x.dtype))
    wg.register_gradient("TestBadGrad", lambda dy, saved, attrs: (dy, dy))
    x = wg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="'TestBadGrad' returned 2 gradients for 1 inputs"):
        wg.run_kernel("TestBadGrad", x).sum().backward()


def test_non_floating_outputs_never_require_grad():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    assert not (x > 1.0).requires_grad


def test_run_kernel_without_inputs_uses_backend_argument(backend):
    t = wg.run_kernel("Fill", backend=backend, shape=(2,), value=3.0, dtype=wg.float32)
    assert t.device == backend and t.tolist() == [3.0, 3.0]


# ---------------------------------------------------------------- backends

class FakeCpu:
    """A backend that is cpu under another name (every attribute delegates to cpu's)."""
    name = "fakecpu"

    def __init__(self):
        self._cpu = wg.backend("cpu")

    def __getattr__(self, attr):
        return getattr(self._cpu, attr)


@pytest.fixture
def fake_backend(monkeypatch):
    monkeypatch.delenv("WEBGRAD_BACKEND", raising=False)
    previous = wg.get_backend().name
    for name, fn in wg.kernels_for_backend("cpu").items():
        wg.register_kernel(name, "fakecpu", fn)
    wg.register_backend("fakecpu", FakeCpu, priority=100)
    yield "fakecpu"
    wg.unregister_backend("fakecpu")
    for name in wg.kernels_for_backend("fakecpu"):
        wg.unregister_kernel(name, "fakecpu")
    wg.set_backend(previous)


def test_priority_picks_default_backend(fake_backend):
    assert wg.backends()[0] == "fakecpu" and "cpu" in wg.backends()
    assert wg.get_backend().name == "fakecpu"
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    assert t.device == "fakecpu"
    (t * t).sum().backward()
    assert t.grad.device == "fakecpu" and t.grad.tolist() == [2.0, 4.0]
    wg.set_backend("cpu")
    assert wg.get_backend().name == "cpu" and wg.tensor(1.0).device == "cpu"


def test_mixing_backends_errors_with_move_hint(fake_backend):
    a = wg.tensor([1.0], backend="fakecpu")
    b = wg.tensor([2.0], backend="cpu")
    with pytest.raises(RuntimeError, match=r"different backends.*\.to\("):
        a + b
    assert (a.to("cpu") + b).tolist() == [3.0]
    assert (a + b.to("fakecpu")).device == "fakecpu"


def test_to_backend_is_differentiable(fake_backend):
    a = wg.tensor([1.0, 2.0], backend="cpu", requires_grad=True)
    b = a.to("fakecpu")
    assert b.device == "fakecpu" and b.requires_grad
    (b * 3).sum().backward()
    assert a.grad.device == "cpu" and a.grad.tolist() == [3.0, 3.0]


def test_failing_backend_is_skipped(monkeypatch):
    monkeypatch.delenv("WEBGRAD_BACKEND", raising=False)
    previous = wg.get_backend().name

    def broken():
        raise ImportError("no runtime here")
    wg.register_backend("broken", broken, priority=1000)
    try:
        assert "broken" not in wg.backends()
        assert wg.get_backend().name != "broken"
        with pytest.raises(RuntimeError, match="'broken' could not start: ImportError: no runtime here"):
            wg.backend("broken")
    finally:
        wg.unregister_backend("broken")
        wg.set_backend(previous)


def test_unknown_backend_errors():
    with pytest.raises(ValueError, match="unknown backend 'nope'.*cpu"):
        wg.set_backend("nope")
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        wg.tensor([1.0], backend="nope")
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        wg.zeros(2, backend="nope")


def test_get_set_backend(backend):
    assert wg.get_backend().name == backend
    assert backend in wg.backends() and wg.backend(backend) is wg.get_backend()


def _run_python(code, **env):
    full_env = {k: v for k, v in os.environ.items() if k != "WEBGRAD_BACKEND"}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)


def test_webgrad_backend_env_var_overrides_priority():
    code = ("import webgrad as wg\n"
            "class Fake:\n"
            "    name = 'fakecpu'\n"
            "    def __getattr__(self, a): return getattr(wg.backend('cpu'), a)\n"
            "wg.register_backend('fakecpu', Fake, priority=100)\n"
            "print(wg.get_backend().name, wg.tensor(1.0).device)\n")
    assert _run_python(code).stdout.split() == ["fakecpu", "fakecpu"]
    assert _run_python(code, WEBGRAD_BACKEND="cpu").stdout.split() == ["cpu", "cpu"]


def test_webgrad_backend_env_var_unknown():
    r = _run_python("import webgrad as wg; wg.tensor(1.0)", WEBGRAD_BACKEND="nope")
    assert r.returncode != 0 and "unknown backend 'nope'" in r.stderr


# ---------------------------------------------------------------- memory

def test_memory_counts_tensors_and_bytes(backend):
    gc.collect()
    before = wg.memory()[backend]
    a = wg.zeros(2000)
    after = wg.memory()[backend]
    assert after["tensors"] == before["tensors"] + 1
    assert after["bytes"] >= before["bytes"] + 8000
    del a
    gc.collect()
    assert wg.memory()[backend]["tensors"] == before["tensors"]


def test_memory_returns_to_baseline_after_training_loop(backend):
    w = wg.randn(8, 4, requires_grad=True)
    x = wg.randn(16, 8)
    gc.collect()
    base = wg.memory()[backend]
    for _ in range(5):
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        with wg.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    del loss
    gc.collect()
    end = wg.memory()[backend]
    assert end["tensors"] == base["tensors"] and end["bytes"] == base["bytes"]


def test_a_kernel_with_many_inputs_saves_them_all():
    wg.register_kernel("SumOfMany", "cpu", lambda *xs: sum(xs[1:], xs[0]))
    wg.register_gradient("SumOfMany", lambda dy, saved, attrs: tuple(dy * 1.0 for _ in saved),
                         inputs_to_save=list(range(10)))
    try:
        xs = [wg.tensor([float(i)], requires_grad=True) for i in range(10)]
        wg.run_kernel("SumOfMany", *xs).sum().backward()
        assert [x.grad.tolist() for x in xs] == [[1.0]] * 10
    finally:
        wg.unregister_gradient("SumOfMany")
        wg.unregister_kernel("SumOfMany", "cpu")
