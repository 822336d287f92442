"""layer_norm as the fused LayerNorm kernel and its fused backward LayerNormGrad (whose own gradient
is written with ops): with and without weight and bias, over one or several trailing dims, against
PyTorch (eps inside the square root, biased variance) over shapes and dtypes; finite differences
to second order; backends agreeing (a workgroup per long row, a thread per short one)."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradcheck, op_tests

torch = pytest.importorskip("torch")
TF = torch.nn.functional
K = wg.kernel_names

rng = np.random.default_rng(11)


def rn(*shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def ref(shape, eps=1e-5):
    def fn(x, *params):
        return TF.layer_norm(torch.tensor(x), shape, *[torch.tensor(p) for p in params], eps=eps).numpy()
    return fn


def ref_bias_only(shape):
    return lambda x, b: TF.layer_norm(torch.tensor(x), shape, None, torch.tensor(b)).numpy()


def layer_norm_grad(ndim, has_weight, has_bias, eps=1e-5):
    """LayerNormGrad's outputs (dx[, dweight][, dbias]) flattened into one tensor (the second-order check
    takes one output)."""
    def fn(dy, x, *weight):
        attrs = dict(ndim=ndim, eps=eps, has_weight=has_weight, has_bias=has_bias)
        _, mean, rstd = wg.run_kernel(K.LAYER_NORM, x, **{**attrs, "has_weight": False, "has_bias": False})
        outs = wg.run_kernel(K.LAYER_NORM_GRAD, dy, x, mean, rstd, *weight, **attrs)
        return wg.cat([o.reshape(-1) for o in outs])
    return fn


def layer_norm_grad_ref(ndim, has_weight, has_bias, eps=1e-5):
    """PyTorch's gradients of layer_norm at x (weight, bias) for the output gradient dy."""
    def fn(dy, x, *weight):
        shape = x.shape[x.ndim - ndim:]
        xt = torch.tensor(x, requires_grad=True)
        w = torch.tensor(weight[0], requires_grad=True) if has_weight else None
        b = torch.zeros(shape, dtype=xt.dtype, requires_grad=True) if has_bias else None
        TF.layer_norm(xt, shape, w, b, eps).backward(torch.tensor(dy))
        return np.concatenate([t.grad.numpy().reshape(-1) for t in (xt, w, b) if t is not None])
    return fn


CASES = [
    OpCase("layer_norm", lambda x, w, b: F.layer_norm(x, (5,), w, b), ref((5,)), [rn(3, 5), rn(5), rn(5)],
           second_order=True),
    OpCase("layer_norm_weight_only", lambda x, w: F.layer_norm(x, (5,), w), ref((5,)), [rn(2, 3, 5), rn(5)],
           second_order=True),
    OpCase("layer_norm_bias_only", lambda x, b: F.layer_norm(x, (4,), None, b), ref_bias_only((4,)),
           [rn(3, 4), rn(4)], second_order=True),
    OpCase("layer_norm_plain", lambda x: F.layer_norm(x, (6,)), ref((6,)), [rn(4, 6, scale=3) + 2],
           second_order=True),
    OpCase("layer_norm_2d", lambda x, w, b: F.layer_norm(x, (3, 4), w, b), ref((3, 4)),
           [rn(2, 3, 4), rn(3, 4), rn(3, 4)], second_order=True),
    OpCase("layer_norm_all_dims", lambda x: F.layer_norm(x, (2, 3, 2)), ref((2, 3, 2)), [rn(2, 3, 2)]),
    OpCase("layer_norm_eps", lambda x: F.layer_norm(x, 4, eps=0.5), ref((4,), 0.5), [rn(3, 4) * 0.3],
           second_order=True, id="layer_norm_eps"),
    OpCase("layer_norm_long_rows", lambda x, w, b: F.layer_norm(x, (300,), w, b), ref((300,)),
           [rn(5, 300), rn(300), rn(300)], rtol=1e-4, atol=1e-5),
    OpCase("layer_norm_many_rows", lambda x, w: F.layer_norm(x, (8,), w), ref((8,)), [rn(600, 8), rn(8)],
           grad=False),
    OpCase("layer_norm_no_rows", lambda x, w, b: F.layer_norm(x, (3,), w, b), ref((3,)),
           [np.zeros((0, 3)), rn(3), rn(3)]),
    OpCase("layer_norm_grad", layer_norm_grad(1, True, True), layer_norm_grad_ref(1, True, True),
           [rn(3, 5), rn(3, 5), rn(5)], second_order=True),
    OpCase("layer_norm_grad_plain_2d", layer_norm_grad(2, False, False), layer_norm_grad_ref(2, False, False),
           [rn(2, 2, 3), rn(2, 2, 3)], second_order=True),
    OpCase("layer_norm_grad_bias_only", layer_norm_grad(1, False, True), layer_norm_grad_ref(1, False, True),
           [rn(4, 3), rn(4, 3)], second_order=True),
]

globals().update(op_tests(CASES))


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("shape,k", [((7,), 1), ((4, 65), 1), ((2, 3, 4, 5), 2), ((16, 64, 128), 1), ((3, 1), 1)])
def test_matches_torch(backend, affine, shape, k):
    pshape = shape[len(shape) - k:]
    x = (rn(*shape, scale=2) + 1).astype(np.float32)
    w = rn(*pshape).astype(np.float32) if affine in ("weight", "both") else None
    b = rn(*pshape).astype(np.float32) if affine in ("bias", "both") else None
    ours = [wg.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    y, yt = F.layer_norm(ours[0], pshape, *ours[1:]), TF.layer_norm(theirs[0], pshape, *theirs[1:])
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    dy = rn(*shape).astype(np.float32)
    y.backward(wg.tensor(dy))
    yt.backward(torch.tensor(dy))
    for a, t in zip(ours, theirs):
        if a is not None:
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])   # where the backend holds it
def test_other_dtypes_as_torch(backend, dtype):
    arrays = [rn(6, 40, scale=2).astype(np.float32), rn(40).astype(np.float32), rn(40).astype(np.float32)]
    ours = [wg.tensor(a, backend=backend).to(dtype).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a).to(getattr(torch, dtype)).requires_grad_() for a in arrays]
    y, yt = F.layer_norm(ours[0], (40,), *ours[1:]), TF.layer_norm(theirs[0], (40,), *theirs[1:])
    assert y.dtype.name == dtype
    tol = {"float16": 4e-3, "bfloat16": 3e-2, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(y.detach().numpy().astype(np.float64), yt.double().detach().numpy(), rtol=tol, atol=tol)
    y.sum().backward()
    yt.sum().backward()
    for a, t in zip(ours, theirs):
        assert a.grad.dtype.name == dtype
        np.testing.assert_allclose(a.grad.numpy().astype(np.float64), t.grad.double().numpy(),
                                   rtol=tol * 10, atol=tol * 10)


def test_constant_rows_normalise_to_zero(backend):
    """var = 0: (x - mean) * 1/sqrt(eps) = 0, as in PyTorch, and the gradient stays finite."""
    x = wg.full((3, 8), 2.5, requires_grad=True)
    y = F.layer_norm(x, (8,))
    assert y.tolist() == [[0.0] * 8] * 3
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_errors_as_torch(backend):
    x = wg.ones(2, 3)
    with pytest.raises(ValueError, match=r"layer_norm: normalized_shape \(2,\)"):
        F.layer_norm(x, (2,))
    with pytest.raises(ValueError, match=r"layer_norm: weight must have shape \(3,\)"):
        F.layer_norm(x, 3, wg.ones(2))
    with pytest.raises(NotImplementedError, match="layer_norm: input must be a floating tensor, got int64"):
        F.layer_norm(wg.ones(2, 3, dtype=wg.int64), 3)
    if "float64" in {d.name for d in wg.get_backend().dtypes}:
        with pytest.raises(RuntimeError, match="layer_norm: weight has dtype float64 but the input has float32"):
            F.layer_norm(x, 3, wg.ones(3, dtype=wg.float64))
    with pytest.raises(TypeError, match="layer_norm: bias must be a Tensor"):
        F.layer_norm(x, 3, None, [0.0, 0.0, 0.0])


def test_one_kernel_each_way():
    x, w, b = (wg.tensor(a, requires_grad=True) for a in (rn(4, 6), rn(6), rn(6)))
    with wg.profile() as prof:
        F.layer_norm(x, (6,), w, b).backward(wg.tensor(rn(4, 6)))
    assert prof.stats[K.LAYER_NORM].calls == 1 and prof.stats[K.LAYER_NORM_GRAD].calls == 1
    assert set(prof.stats) == {K.LAYER_NORM, K.LAYER_NORM_GRAD}


def test_module_and_group_norm_use_it(backend):
    m = wg.nn.LayerNorm((3, 4))
    tm = torch.nn.LayerNorm((3, 4))
    x = rn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(m(wg.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5)
    g, tg = wg.nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)
    x = rn(3, 4, 5).astype(np.float32)
    np.testing.assert_allclose(g(wg.tensor(x)).detach().numpy(), tg(torch.tensor(x)).detach().numpy(), atol=1e-5)


def test_third_order():
    weight = wg.tensor(rn(2, 4), dtype=wg.float64)

    @wg.enable_grad()
    def second(x, w):
        x = x if x.requires_grad else x.detach().requires_grad_()
        w = w if w.requires_grad else w.detach().requires_grad_()
        gx, gw = wg.grad((F.layer_norm(x, (4,), w) * weight).sum(), (x, w), create_graph=True)
        return wg.grad((gx * gx * gx).sum() + (gw * gw * gx.sum()).sum(), (x, w), create_graph=True)
    gradcheck(second, rn(2, 4), rn(4), atol=1e-4, rtol=1e-3, eps=1e-5, what="layer_norm third order")


def test_mean_and_rstd_are_not_differentiable(backend):
    """LayerNorm's kernel returns (y, mean, rstd), PyTorch's native_layer_norm: the statistics, kept for
    the backward, require no grad (PyTorch's output_differentiability) and match the row statistics."""
    a = rn(3, 4, 5).astype(np.float32)
    x = wg.tensor(a, backend=backend).requires_grad_()
    y, mean, rstd = wg.run_kernel(K.LAYER_NORM, x, ndim=2, eps=1e-5, has_weight=False, has_bias=False)
    assert y.requires_grad and not mean.requires_grad and not rstd.requires_grad
    assert mean.shape == rstd.shape == (3, 1, 1)
    flat = a.reshape(3, -1)
    np.testing.assert_allclose(mean.numpy().reshape(-1), flat.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd.numpy().reshape(-1), 1 / np.sqrt(flat.var(1) + 1e-5), rtol=1e-5)
