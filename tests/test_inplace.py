"""In-place ops: values, dtype/shape rules, the version counter, leaves, and gradients through them."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import gradcheck

rng = np.random.default_rng(2)


@pytest.mark.parametrize("method, args, want", [
    ("add_", (2,), [3.0, 0.0, 5.5]),
    ("sub_", (wg.tensor([1.0, 1.0, 1.0]),), [0.0, -3.0, 2.5]),
    ("mul_", (2,), [2.0, -4.0, 7.0]),
    ("div_", (2,), [0.5, -1.0, 1.75]),
    ("pow_", (2,), [1.0, 4.0, 12.25]),
    ("clamp_", (-1, 2), [1.0, -1.0, 2.0]),
    ("clip_", (None, 0), [0.0, -2.0, 0.0]),
    ("fill_", (7,), [7.0, 7.0, 7.0]),
    ("zero_", (), [0.0, 0.0, 0.0]),
    ("copy_", (wg.tensor([4, 5, 6]),), [4.0, 5.0, 6.0]),
])
def test_values_and_identity(method, args, want, backend):
    x = wg.tensor([1.0, -2.0, 3.5])
    args = [a.to(backend) if isinstance(a, wg.Tensor) else a for a in args]  # made on cpu at collection
    out = getattr(x, method)(*args)
    assert out is x
    assert x.tolist() == want
    assert x._version == 1


def test_alpha_and_operators(backend):
    x = wg.tensor([1.0, 2.0])
    x.add_(wg.tensor([1.0, 1.0]), alpha=3)
    assert x.tolist() == [4.0, 5.0]
    x.sub_(1, alpha=2)
    assert x.tolist() == [2.0, 3.0]
    before = x
    x += 1
    x -= 0.5
    x *= 2
    x /= 5
    x **= 2
    assert x is before and x._version == 7
    np.testing.assert_allclose(x.tolist(), [1.0, 1.96], rtol=1e-6)


@pytest.mark.float64
def test_broadcast_and_dtype_rules(backend):
    x = wg.zeros(2, 3)
    x.add_(wg.tensor([1.0, 2.0, 3.0]))
    assert x.tolist() == [[1.0, 2.0, 3.0]] * 2
    with pytest.raises(RuntimeError, match=r"add_: the result of shape \(2, 2, 3\) cannot be written into a tensor "
                                           r"of shape \(2, 3\)"):
        x.add_(wg.ones(2, 2, 3))
    i = wg.tensor([1, 2])
    i += 3
    assert i.dtype is wg.int64 and i.tolist() == [4, 5]
    with pytest.raises(RuntimeError, match="add_: result type float32 can't be cast to the desired output type int64"):
        i += 1.5
    with pytest.raises(RuntimeError, match="div_"):
        i /= 2
    f64 = wg.tensor([1.0], dtype=wg.float64)
    f64.mul_(wg.tensor([2.0]))
    assert f64.dtype is wg.float64
    i.copy_(wg.tensor([1.7, -2.2]))
    assert i.tolist() == [1, -2]                   # copy_ casts anything, as torch


def test_fill_and_copy_checks():
    x = wg.zeros(3)
    with pytest.raises(ValueError, match=r"fill_: value must be a number or a one-element tensor, got shape \(2,\)"):
        x.fill_(wg.ones(2))
    with pytest.raises(TypeError, match="fill_"):
        x.fill_("a")
    with pytest.raises(TypeError, match="copy_: other must be a Tensor"):   # torch: argument 'other'
        x.copy_([1, 2, 3])
    with pytest.raises(RuntimeError, match="copy_"):
        x.copy_(wg.ones(4))
    x.fill_(wg.tensor(2.5))
    assert x.tolist() == [2.5, 2.5, 2.5]


def test_fill_with_a_tensor_from_another_backend(gpu):
    """fill_ takes a one-element tensor on any backend (PyTorch takes a CPU scalar for a CUDA tensor):
    the value moves, it never leaves the tensor holding another backend's data."""
    for here, there in (("wgpu", "cpu"), ("cpu", "wgpu")):
        x = wg.zeros(1, 2, dtype=wg.long, device=here)
        x.fill_(wg.tensor(3, device=there))
        assert x.device == here and x.tolist() == [[3, 3]]
        x.add_(1)                                   # still usable on its backend
        assert x.tolist() == [[4, 4]]
    w = wg.tensor(2.0, requires_grad=True)
    y = wg.zeros(2, device="wgpu").fill_(w * 1)     # stays differentiable across the move
    y.sum().backward()
    assert w.grad.item() == 2.0


def test_in_place_result_from_another_backend_refused(gpu):
    """The last line of every in-place op refuses a value on another backend instead of rebinding."""
    x = wg.zeros(2, device="wgpu")
    with pytest.raises(RuntimeError, match=r"fill_: the new value is on cpu but the tensor is on wgpu; "
                                           r"move it first, e\.g\. value\.to\('wgpu'\)"):
        x._assign(wg.ones(2, device="cpu"), "fill_")
    assert x.device == "wgpu" and x.tolist() == [0.0, 0.0] and x._version == 0


# ---------------------------------------------------------------- autograd


def test_leaf_requiring_grad_refuses_in_place():
    w = wg.tensor([1.0, 2.0], requires_grad=True)
    for op in ("add_", "mul_", "zero_", "fill_", "clamp_"):
        args = {"zero_": (), "fill_": (1.0,), "clamp_": (0, 1)}.get(op, (2.0,))
        with pytest.raises(RuntimeError, match=rf"^{op}: a leaf Variable that requires grad"):
            getattr(w, op)(*args)
    with pytest.raises(RuntimeError, match="add_: a leaf Variable"):
        w += 1
    assert w.tolist() == [1.0, 2.0] and w._version == 0


def test_parameter_update_under_no_grad():
    w = wg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with wg.no_grad():
        w -= 0.1 * w.grad
        w.add_(1)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    np.testing.assert_allclose(w.tolist(), [1.8, 2.6], rtol=1e-6)
    w.grad.zero_()
    assert w.grad.tolist() == [0.0, 0.0]
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_modifying_a_saved_output_raises_naming_the_op():
    x = wg.tensor([0.5, 1.0], requires_grad=True)
    y = x.exp()                 # Exp saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation by add_.*Exp.*version 1; "
                                           r"expected version 0"):
        y.sum().backward()


def test_modifying_a_saved_input_raises_naming_the_op():
    x = wg.tensor([0.5, 1.0], requires_grad=True)
    a = x * 2
    b = a * a                   # Mul saves a
    a.mul_(3)
    with pytest.raises(RuntimeError, match=r"in-place operation by mul_.*Mul"):
        b.sum().backward()
    c = x * 2
    d = c.sin()                 # Sin saves c
    c.clamp_(0, 1)
    with pytest.raises(RuntimeError, match="by clamp_.*Sin"):
        d.sum().backward()


def test_in_place_on_unsaved_tensor_is_fine():
    x = wg.tensor([0.5, 1.0], requires_grad=True)
    a = x * 2                   # Mul saves x and the scalar, not a
    a.add_(1).mul_(3)
    a.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert a.grad_fn is not None and a.requires_grad


def test_version_counter_counts():
    x = wg.zeros(2)
    assert x._version == 0
    x.add_(1).mul_(2)
    x.zero_()
    assert x._version == 3


@pytest.mark.parametrize("name, fn", [
    ("mul_self", lambda x: (x * 1).mul_(x)),
    ("mul_own_alias", lambda x: (lambda a: a.mul_(a))(x + 0)),
    ("pow_", lambda x: (x + 2).pow_(x)),
    ("div_", lambda x: (x * 1).div_(x + 3)),
    ("chain", lambda x: (x * 1).add_(x, alpha=2).sub_(1).mul_(x).div_(2).clamp_(-0.8, 0.8)),
    ("iadd", lambda x: _iadd(x)),
    ("copy_", lambda x: wg.zeros(2, 3, dtype=wg.float64).copy_(x.exp())),
    ("fill_", lambda x: wg.zeros(3, dtype=wg.float64).fill_(x.sum())),
])
def test_gradients_through_in_place(name, fn):
    gradcheck(fn, rng.uniform(0.2, 1.0, 3), what=name)


def _iadd(x):
    y = x * 1
    y += x.sin()
    y *= x
    return y


def test_in_place_with_grad_input_on_no_grad_tensor():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    buf = wg.zeros(2)
    buf.add_(x * x)
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_against_torch():
    torch = pytest.importorskip("torch")
    data = rng.uniform(0.2, 1.0, 4)
    results = []
    for lib in (torch, wg):
        x = lib.tensor(data, requires_grad=True)
        y = x * 1
        y.mul_(x).add_(x, alpha=0.5).div_(x + 1).clamp_(0.1, 0.6)
        y.sum().backward()
        results.append((np.asarray(y.detach().tolist()), np.asarray(x.grad.tolist())))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---------------------------------------------------------------- buffers (cpu)
# An in-place add_/sub_/mul_/div_ computes out of place and rebinds the tensor's data: tensors stay
# values, so no other tensor, saved value or user array sees a change it should not. A backend's
# buffer is written in place only where its caller declares the data dead (``donate``).

N = 4096   # float32 elements: 16 KiB, the smallest array the cpu backend takes as a donation


def _donated(t, fn):
    before = id(t._data)
    fn()
    return id(t._data) == before


def test_a_parameter_update_leaves_the_old_buffer_as_it_was():
    p = wg.tensor(np.ones((64, N // 64), np.float32), requires_grad=True)
    old = p._data
    with wg.no_grad():
        assert not _donated(p, lambda: p.sub_(wg.full((64, N // 64), 0.25)))
        p.mul_(2.0)
    np.testing.assert_array_equal(p.detach().numpy(), np.full((64, N // 64), 1.5, np.float32))
    np.testing.assert_array_equal(old, np.ones((64, N // 64), np.float32))
    assert p._version == 2


def test_an_explicit_donation_takes_one_kernel_into_the_array():
    """``CpuBackend.donate``: its caller declares the array dead, the next arithmetic kernel on it writes
    there, and the one after allocates again; small arrays are declined."""
    be, kernels = wg.backend("cpu"), wg.registry.kernels_for_backend("cpu")
    a, two = np.ones(N, np.float32), np.float32(2)
    with be.donate(a):
        out = kernels["Div"](a, two)
        again = kernels["Div"](a, two)
    assert out is a and again is not a and out[0] == 0.5 and again[0] == 0.25
    assert be.donate(np.ones(N - 1, np.float32)) is None


@pytest.mark.parametrize("holder", ["detach", "view"])
def test_views_see_the_change_and_block_donation(holder):
    """Views share storage (PyTorch's aliasing): they see the change, and the buffer they read is not written."""
    p = wg.tensor(np.arange(N, dtype=np.float32))
    held = {"detach": lambda: p.detach(), "view": lambda: p.reshape(2, N // 2)}[holder]()
    kept = held._data
    assert not _donated(p, lambda: p.add_(1.0))
    np.testing.assert_array_equal(held.numpy().reshape(-1), np.arange(N) + 1.0)
    np.testing.assert_array_equal(np.asarray(kept).reshape(-1), np.arange(N))
    np.testing.assert_array_equal(p.numpy(), np.arange(N) + 1.0)


def test_an_array_from_numpy_is_never_written():
    """``numpy()`` gives the data of the moment (PyTorch's shares memory; webgrad's in-place ops do not write
    into an array a user holds)."""
    p = wg.tensor(np.arange(N, dtype=np.float32))
    held = p.numpy()
    assert not _donated(p, lambda: p.add_(1.0))
    np.testing.assert_array_equal(held, np.arange(N))
    np.testing.assert_array_equal(p.numpy(), np.arange(N) + 1.0)


def test_a_saved_output_is_never_written():
    x = wg.tensor(np.linspace(0, 1, N), requires_grad=True)
    y = x.exp()                                     # ExpBackward keeps y's data
    with wg.no_grad():
        assert not _donated(y, lambda: y.add_(1.0))
    np.testing.assert_allclose(y.grad_fn.saved[0]._data, np.exp(np.linspace(0, 1, N)), rtol=1e-6)


def test_no_donation_while_recording_and_gradients_stay_right():
    x = wg.tensor(np.array([1.0, 2.0] * (N // 2), np.float32), requires_grad=True)
    y = x * 1.0
    z = y + 3.0
    assert not _donated(y, lambda: y.mul_(y))       # MulBackward keeps y's old value
    (z.sum() + y.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0 + 2.0, 1.0 + 4.0] * (N // 2))


def test_alpha_and_self_operand():
    a = wg.tensor(np.array([1.0, 2.0] * (N // 2), np.float32))
    a.add_(a, alpha=2)
    np.testing.assert_array_equal(a.numpy(), [3.0, 6.0] * (N // 2))
    b = wg.tensor(np.array([1.0, 2.0] * (N // 2), np.float32))
    b.mul_(b)
    np.testing.assert_array_equal(b.numpy(), [1.0, 4.0] * (N // 2))


def test_a_result_that_does_not_fit_leaves_the_tensor_untouched():
    a = wg.tensor([[1.0], [2.0]])
    with pytest.raises(RuntimeError, match="cannot be written"):
        a.add_(wg.ones(2, 3))
    assert a.tolist() == [[1.0], [2.0]]
    i = wg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.div_(wg.tensor([2, 2]))
    assert i.tolist() == [1, 2]


@pytest.mark.parametrize("overwrite", [lambda y: y.zero_(), lambda y: y.fill_(3.0), lambda y: y.copy_(wg.zeros(3)),
                                       lambda y: y.__setitem__(slice(None), 0.0),
                                       lambda y: y.__setitem__(Ellipsis, wg.ones(3)),
                                       lambda y: y.view(1, 3).fill_(3.0)],
                         ids=["zero_", "fill_", "copy_", "setitem-all", "setitem-ellipsis", "view-fill_"])
def test_overwriting_with_a_constant_cuts_the_gradient(overwrite, backend):
    """Found by tests/fuzz: an in-place overwrite of a tensor that requires grad by a value that needs
    none left the old graph in place, so the gradient flowed through; PyTorch's is zero, and the
    result still requires grad."""
    x = wg.ones(3, requires_grad=True)
    y = x * 2
    overwrite(y)
    assert y.requires_grad
    (y * 5).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
