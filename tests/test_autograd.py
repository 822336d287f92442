"""Autograd semantics, checked against PyTorch's documented behaviour: requires_grad
propagation, leaves and .grad accumulation, hooks, backward's errors, grad mode,
autograd.grad, higher-order gradients and the version counter."""
import threading

import numpy as np
import pytest

import webgrad as wg


def leaf(values, dtype=wg.float32):
    return wg.tensor(values, dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------- graph structure

def test_requires_grad_propagates():
    x, c = leaf([1.0, 2.0]), wg.tensor([3.0, 4.0])
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not c.requires_grad and c.is_leaf
    y = x * c
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    z = c * 2
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None


def test_grad_fn_name_and_next_functions():
    x, c = leaf([1.0, 2.0]), wg.tensor([3.0, 4.0])
    y = x * c
    assert y.grad_fn.name() == "MulBackward0" and repr(y.grad_fn).startswith("<MulBackward0 object at 0x")
    assert "grad_fn=<MulBackward0>" in repr(y)
    nxt = y.grad_fn.next_functions
    assert len(nxt) == 2 and nxt[0][0].variable is x and nxt[0][1] == 0 and nxt[1] == (None, 0)
    z = y.exp()
    assert z.grad_fn.name() == "ExpBackward0" and z.grad_fn.next_functions[0][0] is y.grad_fn


def test_int_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        wg.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        wg.tensor([True]).requires_grad_()
    assert not wg.tensor([1, 2]).requires_grad_(False).requires_grad


def test_requires_grad_false_on_non_leaf_refused():
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    assert y.requires_grad_(True) is y          # as torch: setting True on a non-leaf is allowed


def test_requires_grad_method_returns_self():
    x = wg.tensor([1.0])
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf


def test_detach():
    x = leaf([1.0, 2.0])
    y = x * 3
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None and d.tolist() == [3.0, 6.0]
    (d * x).sum().backward()                    # d is a constant here
    assert x.grad.tolist() == [3.0, 6.0]


# ---------------------------------------------------------------- .grad on leaves and non-leaves

def test_leaves_accumulate_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_grad_zero_in_place():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0]
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_grad_is_not_an_alias_of_another_tensor():
    x, y = leaf([1.0]), leaf([1.0])
    (x + y).sum().backward()
    x.grad.add_(5.0)
    assert y.grad.tolist() == [1.0] and x.grad.tolist() == [6.0]


def test_grad_does_not_require_grad():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    assert not x.grad.requires_grad and x.grad.is_leaf and x.grad.dtype is x.dtype and x.grad.shape == x.shape


def test_used_twice_sums_gradients():
    x = leaf(3.0)
    (x * x + x).backward()
    assert x.grad.item() == 7.0


def test_diamond_graph():
    x = leaf(2.0)
    a = x * 3
    b = a.exp()
    c = a * a
    (b + c).backward()
    np.testing.assert_allclose(x.grad.item(), 3 * np.exp(6.0) + 2 * 6 * 3, rtol=1e-6)


def test_a_node_runs_once_after_all_its_consumers():
    """The schedule waits for the gradient from a long path and a short one (and one made later)
    before running their common producer: its hook sees the summed gradient, once."""
    x = leaf(0.5)
    a = x * 3
    seen = []
    a.register_hook(lambda g: seen.append(g.item()))
    long = a
    for _ in range(5):
        long = long.tanh()
    late = a * 2            # made after the long path
    (late + long + a.exp()).backward()
    t, d = 1.5, 1.0
    for _ in range(5):
        d, t = d * (1 - np.tanh(t) ** 2), np.tanh(t)
    want = 2 + d + np.exp(1.5)
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], want, rtol=1e-5)
    np.testing.assert_allclose(x.grad.item(), 3 * want, rtol=1e-5)


def test_non_leaf_grad_is_none_unless_retained():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = x * 3
    z.retain_grad()
    assert z.retains_grad and not y.retains_grad
    ((y * y).sum() + (z * z).sum()).backward()
    assert y.grad is None
    assert z.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [8.0 + 18.0, 16.0 + 36.0]


def test_retained_grad_accumulates():
    x = leaf([1.0])
    y = x * 2
    y.retain_grad()
    (y * 3).sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    assert y.grad.tolist() == [6.0]


def test_retain_grad_on_leaf_is_noop_and_on_constant_refused():
    x = leaf([1.0])
    x.retain_grad()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        wg.tensor([1.0]).retain_grad()


def test_gradient_of_a_leaf_itself():
    x = leaf([1.0, 2.0])
    x.backward(wg.tensor([3.0, 4.0]))
    assert x.grad.tolist() == [3.0, 4.0]


def test_broadcast_gradients_reduce_to_input_shapes():
    a = leaf([[1.0], [2.0]])          # (2, 1)
    b = leaf([10.0, 20.0, 30.0])      # (3,)
    (a * b).sum().backward()
    assert a.grad.shape == (2, 1) and a.grad.tolist() == [[60.0], [60.0]]
    assert b.grad.shape == (3,) and b.grad.tolist() == [3.0, 3.0, 3.0]


def test_float64_grads_stay_float64():
    x = leaf([1.0, 2.0], dtype=wg.float64)
    (x * x).sum().backward()
    assert x.grad.dtype is wg.float64


# ---------------------------------------------------------------- hooks

def test_hook_on_leaf_modifies_grad_and_removes():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and x.grad.tolist() == [20.0, 20.0]
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and len(seen) == 1


def test_hook_on_non_leaf_changes_upstream_gradient():
    x = leaf([1.0, 2.0])
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))           # observing: returns None
    h = y.register_hook(lambda g: g * 0.5)
    (y * y).sum().backward(retain_graph=True)
    assert seen == [[6.0, 12.0]]
    assert x.grad.tolist() == [9.0, 18.0]                      # 0.5 * 2y * 3
    h.remove()
    x.grad = None
    (y * y).sum().backward()
    assert x.grad.tolist() == [18.0, 36.0]


def test_retained_grad_sees_hooked_value():
    x = leaf([1.0])
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 100)
    (y * 1).sum().backward()
    assert y.grad.tolist() == [100.0] and x.grad.tolist() == [200.0]


def test_hook_on_constant_refused():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        wg.tensor([1.0]).register_hook(lambda g: g)


def test_hook_runs_in_autograd_grad_too():
    x = leaf([1.0])
    x.register_hook(lambda g: g * 3)
    (g,) = wg.grad((x * 2).sum(), x)
    assert g.tolist() == [6.0] and x.grad is None


# ---------------------------------------------------------------- backward's arguments and errors

def test_backward_non_scalar_needs_gradient():
    x = leaf([1.0, 2.0])
    y = x * x
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(gradient=wg.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [2.0, 2.0]


def test_backward_one_element_non_scalar_is_implicit():
    x = leaf([[3.0]])
    (x * x).backward()
    assert x.grad.tolist() == [[6.0]]


def test_backward_gradient_shape_checked():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"shape \(3,\)"):
        (x * x).backward(wg.tensor([1.0, 1.0, 1.0]))


def test_backward_gradient_as_list():
    x = leaf([1.0, 2.0])
    (x * x).backward([1.0, 2.0])
    assert x.grad.tolist() == [2.0, 8.0]


def test_backward_gradient_cast_to_output_dtype():
    x = leaf([1.0, 2.0])
    (x * x).backward(wg.tensor([1.0, 1.0], dtype=wg.float64))
    assert x.grad.dtype is wg.float32 and x.grad.tolist() == [2.0, 4.0]


def test_leaf_hook_called_once_with_summed_gradient():
    x = leaf([1.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 2 + x * 3).sum().backward()
    assert seen == [[5.0]] and x.grad.tolist() == [5.0]


def test_backward_on_tensor_not_requiring_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        wg.tensor(1.0).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        (wg.tensor([1.0]) * 2).sum().backward()


def test_second_backward_through_freed_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_retain_graph_allows_second_backward_and_accumulates():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_graph_without_saved_tensors_can_backward_twice():
    x = leaf([1.0, 2.0])
    y = (x + 1).sum()        # Add and Sum save nothing (as in PyTorch)
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_freed_graph_partially_shared():
    x = leaf(2.0)
    h = x * x
    (h * 2).backward()
    with pytest.raises(RuntimeError, match="second time"):
        (h * 3).backward()


def test_autograd_backward_function_with_several_roots():
    x = leaf([1.0, 2.0])
    wg.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]
    x.grad = None
    wg.autograd.backward([x * 2, x * x], [wg.ones(2), wg.tensor([1.0, 0.0])])
    assert x.grad.tolist() == [4.0, 2.0]


# ---------------------------------------------------------------- grad mode

def test_no_grad_context():
    x = leaf([1.0])
    with wg.no_grad():
        assert not wg.is_grad_enabled()
        y = x * 2
    assert wg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_decorator():
    x = leaf([1.0])

    @wg.no_grad()
    def f(t):
        return t * 2, wg.is_grad_enabled()
    y, enabled = f(x)
    assert not y.requires_grad and not enabled and wg.is_grad_enabled()
    assert f.__name__ == "f"


def test_no_grad_bare_decorator():
    @wg.no_grad
    def f():
        return wg.is_grad_enabled()
    assert f() is False and wg.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with wg.no_grad():
        with wg.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad

    @wg.enable_grad()
    def f():
        return wg.is_grad_enabled()
    with wg.no_grad():
        assert f() is True


def test_set_grad_enabled_call_and_context():
    x = leaf([1.0])
    with wg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with wg.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not wg.is_grad_enabled()
    assert wg.is_grad_enabled()
    wg.set_grad_enabled(False)
    try:
        assert not wg.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        wg.set_grad_enabled(True)
    assert wg.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with wg.no_grad():
            raise ValueError
    assert wg.is_grad_enabled()


def test_grad_mode_is_thread_local():
    x = leaf([1.0])
    inside, released = threading.Event(), threading.Event()
    result = {}

    def other():
        with wg.no_grad():
            inside.set()
            released.wait(10)
            result["other"] = (x * 2).requires_grad

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    result["main"] = wg.is_grad_enabled() and (x * 2).requires_grad
    released.set()
    t.join()
    assert result == {"main": True, "other": False}


def test_new_thread_starts_with_grad_enabled():
    result = []
    with wg.no_grad():
        t = threading.Thread(target=lambda: result.append(wg.is_grad_enabled()))
        t.start()
        t.join()
    assert result == [True]


# ---------------------------------------------------------------- autograd.grad

def test_grad_returns_without_touching_dot_grad():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    gx, gy = wg.grad((x * y).sum(), [x, y])
    assert gx.tolist() == [3.0, 4.0] and gy.tolist() == [1.0, 2.0]
    assert x.grad is None and y.grad is None
    assert not gx.requires_grad


def test_grad_of_single_tensor_returns_tuple():
    x = leaf(2.0)
    out = wg.grad(x * x, x)
    assert isinstance(out, tuple) and len(out) == 1 and out[0].item() == 4.0


def test_grad_with_grad_outputs():
    x = leaf([1.0, 2.0])
    (g,) = wg.grad(x * x, x, grad_outputs=wg.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        wg.grad(x * x, x)


def test_grad_unused_input():
    x, unused = leaf([1.0]), leaf([1.0])
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        wg.grad((x * 2).sum(), [x, unused])
    gx, gu = wg.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None


def test_grad_input_not_requiring_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        wg.grad((leaf([1.0]) * 2).sum(), wg.tensor([1.0]))


def test_grad_wrt_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 3
    out = (h * h).sum()
    gh, gx = wg.grad(out, [h, x])
    assert gh.tolist() == [6.0, 12.0] and gx.tolist() == [18.0, 36.0]
    assert h.grad is None and x.grad is None


def test_grad_frees_graph_unless_retained():
    x = leaf(2.0)
    y = x * x
    wg.grad(y, x, retain_graph=True)
    wg.grad(y, x)
    with pytest.raises(RuntimeError, match="second time"):
        wg.grad(y, x)


def test_grad_with_several_outputs():
    x = leaf(2.0)
    (g,) = wg.grad([x * x, x * 3], x)
    assert g.item() == 7.0


# ---------------------------------------------------------------- higher order

def test_second_and_third_derivative_of_cube():
    x = leaf([1.0, 2.0, -3.0])
    y = (x ** 3).sum()
    (g1,) = wg.grad(y, x, create_graph=True)
    assert g1.requires_grad and g1.tolist() == [3.0, 12.0, 27.0]
    (g2,) = wg.grad(g1.sum(), x, create_graph=True)
    assert g2.tolist() == [6.0, 12.0, -18.0]     # 6x
    (g3,) = wg.grad(g2.sum(), x)
    assert g3.tolist() == [6.0, 6.0, 6.0]


def test_backward_create_graph_then_backward_again():
    x = leaf(3.0)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.item() == 27.0
    x.grad = None
    g.backward()
    assert x.grad.item() == 18.0


def test_hessian_vector_product():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    a = a + a.T
    v = rng.standard_normal(4)
    x0 = rng.standard_normal(4)
    A = wg.tensor(a, dtype=wg.float64)
    x = wg.tensor(x0, dtype=wg.float64, requires_grad=True)
    f = 0.5 * (x * (A @ x)).sum() + (x ** 3).sum()      # hessian: A + diag(6 x)
    (g,) = wg.grad(f, x, create_graph=True)
    (hv,) = wg.grad(g, x, grad_outputs=wg.tensor(v, dtype=wg.float64))
    np.testing.assert_allclose(hv.numpy(), a @ v + 6 * x0 * v, rtol=1e-10)


def test_gradient_penalty_against_finite_differences():
    """WGAN-GP: penalty = (||d D(x)/dx|| - 1)^2 with D(x) = sum(tanh(x @ w)); its gradient w.r.t. w."""
    rng = np.random.default_rng(1)
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)) * 0.5

    def penalty(w_np, differentiable=False):
        w = wg.tensor(w_np, dtype=wg.float64, requires_grad=differentiable)
        x = wg.tensor(x0, dtype=wg.float64, requires_grad=True)
        d = (x @ w).tanh().sum()
        (gx,) = wg.grad(d, x, create_graph=differentiable)
        norm = ((gx * gx).sum(dim=1) + 1e-12).sqrt()
        return ((norm - 1) ** 2).mean(), w

    p, w = penalty(w0, differentiable=True)
    p.backward()
    analytic = w.grad.numpy()
    numeric = np.zeros_like(w0)
    eps = 1e-6
    for i in np.ndindex(w0.shape):
        wp, wm = w0.copy(), w0.copy()
        wp[i] += eps
        wm[i] -= eps
        numeric[i] = (penalty(wp)[0].item() - penalty(wm)[0].item()) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)


def test_create_graph_false_gives_constant_gradients():
    x = leaf(2.0)
    (g,) = wg.grad(x ** 3, x)
    assert not g.requires_grad


# ---------------------------------------------------------------- version counter

def test_in_place_on_saved_tensor_raises_at_backward():
    x = leaf([1.0, 2.0])
    a = x * 1
    b = a * a                 # Mul saves a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation by add_.*kernel 'Mul'"):
        b.sum().backward()


@pytest.mark.parametrize("modify, name", [
    (lambda t: t.mul_(2), "mul_"),
    (lambda t: t.add_(1), "add_"),
    (lambda t: t.sub_(1), "sub_"),
    (lambda t: t.__setitem__(0, 5.0), "__setitem__"),
    (lambda t: t.__iadd__(1), "add_"),
])
def test_in_place_variants_detected(modify, name):
    y = leaf([1.0, 2.0]) * 1
    s = y.sin()               # Sin saves its input y
    modify(y)
    with pytest.raises(RuntimeError, match=rf"in-place operation by {name}.*kernel 'Sin'"):
        s.sum().backward()


def test_augmented_assignment_detected():
    x = leaf([1.0, 2.0])
    y = x * 1
    s = y * y
    y += 1
    assert y._version == 1
    with pytest.raises(RuntimeError, match="in-place"):
        s.sum().backward()


def test_in_place_on_output_saved_by_its_kernel():
    x = leaf([1.0, 2.0])
    y = x.exp()               # Exp saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"add_.*kernel 'Exp'"):
        y.sum().backward()


def test_in_place_not_saved_is_fine():
    x = leaf([1.0, 2.0])
    y = x * 1
    s = y.exp()               # Exp saves only its output, not y
    y.add_(1)
    s.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_in_place_on_non_leaf_is_differentiable():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.mul_(3)
    y.add_(1)
    assert y._version == 2 and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_in_place_with_other_requiring_grad():
    x, z = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * 1
    y.mul_(z)                 # as torch: the original y is kept for z's gradient
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0] and z.grad.tolist() == [1.0, 2.0]


def test_in_place_on_leaf_requiring_grad_refused():
    x = leaf([1.0, 2.0])
    for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.__setitem__(0, 1.0)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            op()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x += 1
    assert x._version == 0 and x.tolist() == [1.0, 2.0]


def test_in_place_on_leaf_allowed_under_no_grad():
    w = leaf([1.0, 2.0])
    (w * w).sum().backward()
    with wg.no_grad():
        w -= 0.5 * w.grad
        w.add_(1)
    assert w.tolist() == [1.0, 1.0] and w._version == 2
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_parameter_update_between_steps_is_fine():
    w = leaf([1.0, 2.0])
    loss = (w * w).sum()
    loss.backward()
    with wg.no_grad():
        w.sub_(0.1 * w.grad)
    w.grad = None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.6, 3.2], rtol=1e-6)


def test_in_place_on_leaf_saved_under_no_grad_is_detected():
    w = leaf([1.0, 2.0])
    loss = (w * w).sum()      # Mul saves w
    with wg.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="in-place operation by add_"):
        loss.backward()


def test_in_place_on_plain_tensor_with_grad_operand():
    c = wg.zeros(2)
    x = leaf([1.0, 2.0])
    c.add_(x * 2)             # c now depends on x, as in torch
    assert c.requires_grad and not c.is_leaf
    c.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_version_counter_bumps():
    t = wg.zeros(3)
    assert t._version == 0
    t.add_(1)
    t.mul_(2)
    t[0] = 5.0
    t += 1
    assert t._version == 4 and t.tolist() == [6.0, 3.0, 3.0]


# ---------------------------------------------------------------- PyTorch parity (optional oracle)

def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((4,))

    def program(lib, a, b):
        h = (a * b).tanh()
        out = (h * h).sum() + (a.exp() * b).mean()
        (ga,) = lib.autograd.grad(out, a, create_graph=True)
        h.retain_grad()
        (ga * ga).sum().backward()
        return h

    tw = dict(a=torch.tensor(a0, requires_grad=True), b=torch.tensor(b0, requires_grad=True))
    ww = dict(a=wg.tensor(a0, dtype=wg.float64, requires_grad=True), b=wg.tensor(b0, dtype=wg.float64,
                                                                                  requires_grad=True))
    th = program(torch, **tw)
    wh = program(wg, **ww)
    for k in ("a", "b"):
        np.testing.assert_allclose(ww[k].grad.numpy(), tw[k].grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(wh.grad.numpy(), th.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_in_place_on_plain_tensor_times_grad_operand():
    z = leaf([3.0, 4.0])
    c = wg.ones(2)
    c.mul_(z)                 # c's old value is saved for z's gradient by this very op: no error (as torch)
    c.sum().backward()
    assert z.grad.tolist() == [1.0, 1.0]


def test_backward_inputs_restricts_accumulation():
    x, y = leaf([1.0]), leaf([2.0])
    h = x * y
    (h * h).sum().backward(inputs=[x, h])
    assert x.grad.tolist() == [8.0] and y.grad is None and h.grad.tolist() == [4.0]


def test_autograd_grad_leaves_retained_grad_alone():
    """Decision: webgrad's grad() touches no .grad at all, retained non-leaf ones included
    (PyTorch fills a retained non-leaf's .grad during autograd.grad)."""
    x = leaf([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    wg.grad((h * h).sum(), x)
    assert h.grad is None and x.grad is None


# ---------------------------------------------------------------- Variable (PyTorch's legacy name)

def test_variable_is_a_detached_leaf_sharing_data(backend):
    """Variable(t, requires_grad=True) as in PyTorch 2: a new leaf over t's data; every tensor is a Variable."""
    from webgrad.autograd import Variable
    t = wg.ones(2) * 3
    v = Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and v.is_leaf and not t.requires_grad
    assert isinstance(t, Variable) and isinstance(v, Variable) and not isinstance([1.0], Variable)
    v.data[0] = 5.0                                  # the storage is shared, as torch's
    assert t.tolist() == [5.0, 3.0]
    (v * v).sum().backward()
    assert v.grad.tolist() == [10.0, 6.0]
    w = Variable(wg.ones(2, requires_grad=True) * 2)
    assert not w.requires_grad and w.grad_fn is None
    assert Variable().shape == (0,)


def test_variable_refuses_non_tensors_and_warns_on_volatile():
    from webgrad.autograd import Variable
    with pytest.raises(TypeError, match="Variable: data has to be a tensor, but got list"):
        Variable([1.0])
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert not Variable(wg.ones(1), volatile=True).requires_grad
