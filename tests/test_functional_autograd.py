"""Functional forms (grad(f), value_and_grad(f), nesting), custom_grad and Function."""
import numpy as np
import pytest

import webgrad as wg
from backends_under_test import BACKENDS


def leaf(values, dtype=wg.float32):
    return wg.tensor(values, dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------- grad(f), value_and_grad(f)

def test_grad_of_function():
    df = wg.grad(lambda x: (x * x * x).sum())
    x = wg.tensor([1.0, 2.0])
    g = df(x)
    assert g.tolist() == [3.0, 12.0]
    assert not x.requires_grad and x.grad is None and not g.requires_grad


def test_grad_of_function_keeps_name():
    def energy(x):
        return (x * x).sum()
    assert wg.grad(energy).__name__ == "energy"


def test_grad_argnums():
    def f(x, y, scale):
        return (x * y * scale).sum()
    x, y = wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])
    assert wg.grad(f)(x, y, 2.0).tolist() == [6.0, 8.0]
    assert wg.grad(f, argnums=1)(x, y, 2.0).tolist() == [2.0, 4.0]
    gx, gy = wg.grad(f, argnums=(0, 1))(x, y, 2.0)
    assert gx.tolist() == [6.0, 8.0] and gy.tolist() == [2.0, 4.0]


def test_value_and_grad():
    v, g = wg.value_and_grad(lambda x: (x ** 2).sum())(wg.tensor([3.0, 4.0]))
    assert v.item() == 25.0 and g.tolist() == [6.0, 8.0]
    v, (ga, gb) = wg.value_and_grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(wg.tensor([2.0]), wg.tensor([5.0]))
    assert v.item() == 10.0 and ga.tolist() == [5.0] and gb.tolist() == [2.0]


def test_grad_of_function_does_not_touch_leaf_grad():
    w = leaf([1.0, 2.0])
    g = wg.grad(lambda x: (x * w).sum())(wg.tensor([3.0, 4.0]))
    assert g.tolist() == [1.0, 2.0] and w.grad is None


def test_grad_of_function_works_under_no_grad():
    with wg.no_grad():
        g = wg.grad(lambda x: (x * x).sum())(wg.tensor([3.0]))
    assert g.tolist() == [6.0]


def test_grad_of_function_needs_scalar_output():
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        wg.grad(lambda x: x * 2)(wg.tensor([1.0, 2.0]))


def test_nested_grad():
    f = lambda x: x ** 3  # noqa: E731
    x = wg.tensor(2.0)
    assert wg.grad(f)(x).item() == 12.0
    assert wg.grad(wg.grad(f))(x).item() == 12.0            # 6x
    assert wg.grad(wg.grad(wg.grad(f)))(x).item() == 6.0


def test_nested_grad_of_sin():
    x = wg.tensor(0.7, dtype=wg.float64)
    d2 = wg.grad(wg.grad(lambda t: t.sin()))(x)
    np.testing.assert_allclose(d2.item(), -np.sin(0.7), rtol=1e-12)


def test_grad_of_function_on_input_requiring_grad_is_differentiable():
    x = leaf(3.0)
    g = wg.grad(lambda t: t ** 3)(x)
    assert g.requires_grad and g.item() == 27.0
    g.backward()
    assert x.grad.item() == 18.0


# ---------------------------------------------------------------- custom_grad

def test_custom_grad_value_and_gradient():
    @wg.custom_grad
    def clipped_identity(x):
        return x * 1.0, lambda dy: dy.clamp(-1, 1)
    x = leaf([5.0, 0.5])
    y = clipped_identity(x)
    assert y.tolist() == [5.0, 0.5] and y.requires_grad
    assert y.grad_fn.name() == "clipped_identityBackward"
    (y * wg.tensor([10.0, 0.5])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.5]


def test_custom_grad_records_one_node():
    @wg.custom_grad
    def softplus_ish(x):
        y = (x.exp() + 1).log()
        return y, lambda dy: dy * x.sigmoid()
    x = leaf([0.0, 1.0])
    y = softplus_ish(x)
    nxt = y.grad_fn.next_functions
    assert len(nxt) == 1 and nxt[0][0].variable is x      # the inner exp/add/log are not recorded
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.exp(-np.array([0.0, 1.0]))), rtol=1e-6)


def test_custom_grad_several_inputs_and_non_tensor_args():
    @wg.custom_grad
    def scaled_product(a, b, scale):
        return a * b * scale, lambda dy: (dy * b * scale, dy * a * scale)
    a, b = leaf([2.0]), leaf([3.0])
    out = scaled_product(a, b, 10.0)
    assert out.tolist() == [60.0]
    out.sum().backward()
    assert a.grad.tolist() == [30.0] and b.grad.tolist() == [20.0]


def test_custom_grad_one_input_without_grad():
    @wg.custom_grad
    def product(a, b):
        return a * b, lambda dy: (dy * b, dy * a)
    a, c = leaf([2.0]), wg.tensor([3.0])
    product(a, c).sum().backward()
    assert a.grad.tolist() == [3.0] and c.grad is None


def test_custom_grad_second_order():
    @wg.custom_grad
    def cube(x):
        return x ** 3, lambda dy: dy * 3 * x ** 2
    x = leaf(2.0)
    (g,) = wg.grad(cube(x), x, create_graph=True)
    (gg,) = wg.grad(g, x)
    assert g.item() == 12.0 and gg.item() == 12.0


def test_custom_grad_not_recorded_without_grad():
    @wg.custom_grad
    def double(x):
        return x * 2, lambda dy: dy * 2
    assert not double(wg.tensor([1.0])).requires_grad
    with wg.no_grad():
        assert not double(leaf([1.0])).requires_grad


# ---------------------------------------------------------------- Function

class Cube(wg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * 3 * x ** 2


def test_function_value_gradient_and_name():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x)
    assert y.tolist() == [1.0, 8.0] and y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "CubeBackward" and y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_function_second_order_through_saved_input():
    x = leaf([1.0, -2.0])
    (g,) = wg.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.requires_grad and g.tolist() == [3.0, 12.0]
    (gg,) = wg.grad(g.sum(), x)
    assert gg.tolist() == [6.0, -12.0]


class Exp(wg.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)      # an output
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return dy * y


def test_function_saving_its_output():
    x = leaf([0.0, 1.0], dtype=wg.float64)
    y = Exp.apply(x)
    (y * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.0, 1.0]), rtol=1e-12)


def test_function_saving_its_output_second_order():
    x = leaf([0.5], dtype=wg.float64)
    (g,) = wg.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = wg.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([0.5]), rtol=1e-12)


class ScaleShift(wg.Function):
    """Non-tensor arguments, needs_input_grad, ctx attributes, and two outputs."""
    seen = []

    @staticmethod
    def forward(ctx, x, scale, b):
        ctx.scale = scale
        ScaleShift.seen.append(ctx.needs_input_grad)
        return x * scale + b, x - b

    @staticmethod
    def backward(ctx, d_first, d_second):
        gx = d_first * ctx.scale + d_second if ctx.needs_input_grad[0] else None
        gb = d_first - d_second if ctx.needs_input_grad[2] else None
        return gx, None, gb


def test_function_non_tensor_args_needs_input_grad_and_two_outputs():
    ScaleShift.seen.clear()
    x, b = leaf([1.0, 2.0]), wg.tensor([10.0, 20.0])
    first, second = ScaleShift.apply(x, 3.0, b)
    assert ScaleShift.seen == [(True, False, False)]
    assert first.tolist() == [13.0, 26.0] and second.tolist() == [-9.0, -18.0]
    assert first.grad_fn is second.grad_fn
    (first.sum() + 2 * second.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0] and b.grad is None
    x.grad = None
    first.sum().backward()                  # the unused output's gradient arrives as zeros
    assert x.grad.tolist() == [3.0, 3.0]


def test_function_outputs_on_two_backends_are_refused():
    if "wgpu" not in BACKENDS:
        pytest.skip("needs the wgpu backend too (pip install wgpu, and a Vulkan driver: mesa-vulkan-drivers)")

    class Split(wg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, (x * 1).to("wgpu")

        @staticmethod
        def backward(ctx, d_here, d_there):
            return d_here
    x = wg.tensor([1.0, 2.0], requires_grad=True, backend="cpu")
    with pytest.raises(RuntimeError, match=r"Split: outputs live on different backends \(cpu \(2,\), wgpu \(2,\)\)"):
        Split.apply(x)


def test_function_wrong_gradient_count():
    class Bad(wg.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, dy):
            return dy
    with pytest.raises(RuntimeError, match="Bad.backward returned 1 gradients; forward took 2 arguments"):
        Bad.apply(leaf([1.0]), 2.0).sum().backward()


def test_function_forward_not_recorded():
    class Probe(wg.Function):
        grad_enabled = []

        @staticmethod
        def forward(ctx, x):
            Probe.grad_enabled.append(wg.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, dy):
            return dy * 2
    y = Probe.apply(leaf([1.0]))
    assert Probe.grad_enabled == [False] and y.grad_fn.name() == "ProbeBackward"


def test_function_saved_tensor_modified_in_place():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = Cube.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match=r"in-place operation by add_.*'Cube'"):
        y.sum().backward()


def test_function_freed_after_backward():
    x = leaf([1.0])
    y = Cube.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_function_without_inputs_requiring_grad():
    y = Cube.apply(wg.tensor([2.0]))
    assert not y.requires_grad and y.grad_fn is None and y.tolist() == [8.0]


def test_function_and_gradcheck():
    """Function gradients agree with finite differences (float64)."""
    from opinfo import gradcheck
    gradcheck(lambda t: Cube.apply(t), np.array([0.3, -1.2, 2.0]), what="Cube")
    gradcheck(lambda t: Exp.apply(t), np.array([0.3, -1.2]), what="Exp")


def test_function_parity_with_torch():
    torch = pytest.importorskip("torch")

    class TCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            return dy * 3 * x ** 2

    x0 = np.array([0.5, -1.5, 2.0])
    tx = torch.tensor(x0, requires_grad=True)
    (tg,) = torch.autograd.grad(TCube.apply(tx).sin().sum(), tx, create_graph=True)
    (tg * tg).sum().backward()
    wx = wg.tensor(x0, dtype=wg.float64, requires_grad=True)
    (wgr,) = wg.grad(Cube.apply(wx).sin().sum(), wx, create_graph=True)
    (wgr * wgr).sum().backward()
    np.testing.assert_allclose(wgr.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(wx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
