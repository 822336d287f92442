"""Autograd semantics on the backend under test, as in PyTorch (closed forms; no numpy)."""
import pytest

import webgrad as wg


def leaf(values):
    return wg.tensor(values, requires_grad=True)


def test_requires_grad_propagates_and_leaves():
    x, c = leaf([1.0, 2.0]), wg.tensor([3.0, 4.0])
    y = x * c
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    assert not (c * 2).requires_grad and x.is_leaf and x.grad_fn is None


def test_readme_quick_start():
    x = wg.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_leaves_accumulate_and_zero():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0]


def test_used_twice_and_diamond():
    x = leaf([2.0])
    a, b = x * 3, x * x
    (a * b).sum().backward()            # d/dx 3x^3 = 9x^2
    assert x.grad.tolist() == [36.0]


def test_broadcast_gradient_reduces_to_input_shape():
    a, b = leaf([[1.0], [2.0]]), leaf([1.0, 2.0, 3.0])
    (a * b).sum().backward()
    assert a.grad.tolist() == [[6.0], [6.0]] and b.grad.tolist() == [3.0, 3.0, 3.0]


def test_non_leaf_grad_is_none_unless_retained():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    z = x * 3
    (y * z).sum().backward()
    assert y.retains_grad and not z.retains_grad
    assert y.grad.tolist() == [3.0, 6.0] and z.grad is None
    assert x.grad.tolist() == [12.0, 24.0]


def test_backward_needs_gradient_for_non_scalar():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        y.backward()
    y.backward(wg.tensor([1.0, 0.5]))


def test_second_backward_through_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_no_grad_and_enable_grad():
    x = leaf([1.0])
    with wg.no_grad():
        y = x * 2
        with wg.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad and wg.is_grad_enabled()


def test_detach_shares_no_graph():
    x = leaf([1.0, 2.0])
    d = (x * 2).detach()
    assert not d.requires_grad and d.tolist() == [2.0, 4.0]


def test_autograd_grad_and_higher_order():
    x = leaf([2.0])
    y = (x ** 3).sum()
    (g,) = wg.autograd.grad(y, x, create_graph=True)     # 3x^2
    (h,) = wg.autograd.grad(g.sum(), x, create_graph=True)  # 6x
    (t,) = wg.autograd.grad(h.sum(), x)                   # 6
    assert (g.tolist(), h.tolist(), t.tolist()) == ([12.0], [12.0], [6.0])
    assert x.grad is None


def test_hooks():
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert x.grad.tolist() == [20.0, 40.0]
    handle.remove()


def test_in_place_on_saved_tensor_raises_at_backward():
    x = leaf([1.0, 2.0])
    a = x * 1
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError, match="in-place"):
        y.sum().backward()


def test_int_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        wg.tensor([1, 2], requires_grad=True)


def test_float64_is_refused_on_gpu_backends(slice_backend):
    if slice_backend == "cpu":
        pytest.skip("cpu has float64")
    with pytest.raises(TypeError, match="float64"):
        wg.zeros(2, dtype=wg.float64)
