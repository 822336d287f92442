"""Window kernels (Im2Col, Col2Im) and the ops built on them: unfold/fold, conv1d/conv2d,
conv_transpose2d, max/avg/adaptive pooling. PyTorch is the forward oracle; numpy formulas check
conv and pooling where cheap; gradients by finite differences (first and second order)."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad import kernel_names as K
from opinfo import OpCase, assert_close, gradcheck, gradgradcheck, op_tests

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same.")

rng = np.random.default_rng(0)


def rn(*shape):
    return rng.standard_normal(shape)


def distinct(*shape):
    """Values with no ties (max pooling is only differentiable away from ties)."""
    return rng.permutation(np.arange(np.prod(shape))).reshape(shape) * 0.1 + rng.uniform(0, 0.01, shape)


def tref(fn, **kw):
    """A reference calling PyTorch on the numpy inputs."""
    return lambda *arrays: fn(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays], **kw).numpy()


def im2col(**kw):
    return lambda x: wg.run_kernel(K.IM2COL, x, **kw)


def col2im(**kw):
    return lambda c: wg.run_kernel(K.COL2IM, c, **kw)


W33 = dict(kernel_size=(3, 3), stride=(1, 1), padding=(0, 0), dilation=(1, 1))
W_ODD = dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 2), dilation=(1, 2))
W_GAPS = dict(kernel_size=(2, 2), stride=(3, 3), padding=(1, 0), dilation=(1, 1))   # some pixels in no window

CASES = [
    OpCase("im2col", im2col(**W33), tref(TF.unfold, kernel_size=3), [rn(1, 2, 4, 5)]),
    OpCase("im2col_strided", im2col(**W_ODD),
           tref(TF.unfold, kernel_size=(2, 3), stride=(2, 1), padding=(1, 2), dilation=(1, 2)), [rn(1, 1, 4, 5)]),
    OpCase("im2col_big", im2col(**W33), tref(TF.unfold, kernel_size=3), [rn(2, 3, 20, 21)], grad=False),
    OpCase("col2im", col2im(output_size=(4, 5), **W33), tref(TF.fold, output_size=(4, 5), kernel_size=3),
           [rn(1, 9, 6)]),
    OpCase("col2im_strided", col2im(output_size=(4, 5), **W_ODD),
           tref(TF.fold, output_size=(4, 5), kernel_size=(2, 3), stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
           [rn(1, 6, 15)]),
    OpCase("im2col_gaps", im2col(**W_GAPS),
           tref(TF.unfold, kernel_size=2, stride=3, padding=(1, 0)), [rn(2, 2, 5, 7)]),
    OpCase("col2im_gaps", col2im(output_size=(5, 7), **W_GAPS),
           tref(TF.fold, output_size=(5, 7), kernel_size=2, stride=3, padding=(1, 0)), [rn(2, 8, 4)]),
    OpCase("unfold", lambda x: F.unfold(x, 2, padding=1, stride=2), tref(TF.unfold, kernel_size=2, padding=1,
                                                                               stride=2), [rn(1, 2, 3, 3)]),
    OpCase("fold", lambda x: F.fold(x, (3, 4), 2), tref(TF.fold, output_size=(3, 4), kernel_size=2),
           [rn(1, 8, 6)]),
    OpCase("conv2d", lambda x, w, b: F.conv2d(x, w, b), tref(TF.conv2d), [rn(1, 2, 5, 5), rn(3, 2, 3, 3), rn(3)],),
    OpCase("conv2d_stride_pad_dil", lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
           tref(TF.conv2d, stride=(2, 1), padding=(1, 2), dilation=(1, 2)), [rn(1, 2, 5, 4), rn(2, 2, 2, 2)]),
    OpCase("conv2d_groups", lambda x, w: F.conv2d(x, w, groups=2, padding=1),
           tref(TF.conv2d, groups=2, padding=1), [rn(1, 4, 3, 3), rn(4, 2, 2, 2)]),
    OpCase("conv2d_same", lambda x, w: F.conv2d(x, w, padding="same"), tref(TF.conv2d, padding="same"),
           [rn(1, 1, 4, 5), rn(2, 1, 2, 3)]),
    OpCase("conv2d_unbatched", lambda x, w: F.conv2d(x, w), tref(TF.conv2d), [rn(2, 4, 4), rn(1, 2, 3, 3)]),
    OpCase("conv2d_big", lambda x, w, b: F.conv2d(x, w, b, padding=1), tref(TF.conv2d, padding=1),
           [rn(2, 3, 17, 19), rn(8, 3, 3, 3), rn(8)], grad=False, rtol=1e-4, atol=1e-5),
    OpCase("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), tref(TF.conv1d, stride=2, padding=1),
           [rn(2, 2, 7), rn(3, 2, 3), rn(3)]),
    OpCase("conv1d_same_dilated", lambda x, w: F.conv1d(x, w, padding="same", dilation=2),
           tref(TF.conv1d, padding="same", dilation=2), [rn(1, 2, 6), rn(2, 2, 3)]),
    OpCase("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b), tref(TF.conv_transpose2d),
           [rn(1, 2, 3, 3), rn(2, 3, 2, 2), rn(3)]),
    OpCase("conv_transpose2d_stride_outpad",
           lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
           tref(TF.conv_transpose2d, stride=2, padding=1, output_padding=1), [rn(1, 2, 3, 2), rn(2, 1, 3, 3)]),
    OpCase("conv_transpose2d_groups_dil",
           lambda x, w: F.conv_transpose2d(x, w, stride=(1, 2), groups=2, dilation=(2, 1), output_padding=(1, 1)),
           tref(TF.conv_transpose2d, stride=(1, 2), groups=2, dilation=(2, 1), output_padding=(1, 1)),
           [rn(1, 2, 3, 3), rn(2, 2, 2, 2)]),
    OpCase("max_pool2d", lambda x: F.max_pool2d(x, 2), tref(TF.max_pool2d, kernel_size=2), [distinct(1, 2, 4, 4)]),
    OpCase("max_pool2d_pad_stride", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
           tref(TF.max_pool2d, kernel_size=3, stride=2, padding=1), [distinct(1, 1, 5, 5)]),
    OpCase("max_pool2d_ceil_dil", lambda x: F.max_pool2d(x, 2, stride=2, dilation=(1, 2), ceil_mode=True),
           tref(TF.max_pool2d, kernel_size=2, stride=2, dilation=(1, 2), ceil_mode=True), [distinct(1, 1, 5, 6)]),
    OpCase("max_pool2d_batch", lambda x: F.max_pool2d(x, (2, 3)), tref(TF.max_pool2d, kernel_size=(2, 3)),
           [distinct(3, 2, 6, 7)]),
    OpCase("max_pool2d_big", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
           tref(TF.max_pool2d, kernel_size=3, stride=2, padding=1), [distinct(2, 3, 16, 15)], grad=False),
    OpCase("avg_pool2d", lambda x: F.avg_pool2d(x, 2), tref(TF.avg_pool2d, kernel_size=2), [rn(1, 2, 4, 4)],),
    OpCase("avg_pool2d_batch", lambda x: F.avg_pool2d(x, (2, 3), stride=(3, 2)),
           tref(TF.avg_pool2d, kernel_size=(2, 3), stride=(3, 2)), [rn(2, 3, 6, 7)]),
    OpCase("avg_pool2d_pad_ceil", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
           tref(TF.avg_pool2d, kernel_size=3, stride=2, padding=1, ceil_mode=True), [rn(1, 1, 6, 5)]),
    OpCase("avg_pool2d_exclude_pad",
           lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
           tref(TF.avg_pool2d, kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
           [rn(1, 1, 6, 5)]),
    OpCase("avg_pool2d_divisor", lambda x: F.avg_pool2d(x, (1, 2), divisor_override=3),
           tref(TF.avg_pool2d, kernel_size=(1, 2), divisor_override=3), [rn(2, 4, 5)]),
    OpCase("adaptive_avg_pool2d_divides", lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
           tref(TF.adaptive_avg_pool2d, output_size=(2, 3)), [rn(1, 2, 4, 6)]),
    OpCase("adaptive_avg_pool2d_general", lambda x: F.adaptive_avg_pool2d(x, (3, None)),
           tref(TF.adaptive_avg_pool2d, output_size=(3, None)), [rn(1, 1, 5, 4)]),
    OpCase("adaptive_avg_pool2d_global", lambda x: F.adaptive_avg_pool2d(x, 1),
           tref(TF.adaptive_avg_pool2d, output_size=1), [rn(2, 3, 17, 19)], grad=False),
]

globals().update(op_tests(CASES))


# ---------------------------------------------------------------- numpy formulas


def np_conv2d(x, w, stride=1):
    """Direct cross-correlation with sliding_window_view."""
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", win, w)


def test_conv2d_matches_numpy_formula():
    x, w = rn(2, 3, 9, 8), rn(4, 3, 3, 2)
    got = F.conv2d(wg.tensor(x, dtype=wg.float64), wg.tensor(w, dtype=wg.float64), stride=2)
    np.testing.assert_allclose(got.numpy(), np_conv2d(x, w, 2), rtol=1e-10, atol=1e-12)


def test_pools_match_numpy_formula():
    x = rn(2, 3, 6, 8)
    blocks = x.reshape(2, 3, 3, 2, 4, 2)
    t = wg.tensor(x, dtype=wg.float64)
    np.testing.assert_allclose(F.max_pool2d(t, 2).numpy(), blocks.max(axis=(3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(t, 2).numpy(), blocks.mean(axis=(3, 5)))
    np.testing.assert_allclose(F.adaptive_avg_pool2d(t, (3, 4)).numpy(), blocks.mean(axis=(3, 5)))


def test_im2col_col2im_are_adjoint():
    """<Im2Col(x), c> == <x, Col2Im(c)>: why each is the other's gradient."""
    x, attrs = rn(2, 3, 7, 6), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2))
    cols = wg.run_kernel(K.IM2COL, wg.tensor(x, dtype=wg.float64), **attrs)
    c = rn(*cols.shape)
    back = wg.run_kernel(K.COL2IM, wg.tensor(c, dtype=wg.float64), output_size=(7, 6), **attrs)
    assert np.isclose((cols.numpy() * c).sum(), (x * back.numpy()).sum())


SECOND_ORDER = {
    "im2col": (im2col(**W_ODD), [rn(1, 1, 4, 5)]),
    "col2im": (col2im(output_size=(4, 5), **W33), [rn(1, 9, 6)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b), [rn(1, 2, 4, 4), rn(2, 2, 3, 3), rn(2)]),
    "conv2d_strided": (lambda x, w: F.conv2d(x, w, stride=2, padding=1), [rn(1, 1, 4, 4), rn(2, 1, 2, 2)]),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2), [rn(1, 2, 2, 2), rn(2, 1, 2, 2)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2, padding=1), [rn(1, 1, 3, 4)]),
    "max_pool2d_of_square": (lambda x: F.max_pool2d(x * x, 2), [distinct(1, 1, 4, 4) + 0.5]),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    fn, arrays = SECOND_ORDER[name]
    gradgradcheck(fn, *arrays, what=name)


def test_max_pool2d_gradient_goes_to_the_max():
    x = wg.tensor([[[[1.0, 4.0], [2.0, 3.0]]]], requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0], [0.0, 0.0]]]]


def test_conv2d_float32_dtype_kept():
    y = F.conv2d(wg.ones(1, 1, 3, 3), wg.ones(1, 1, 2, 2))
    assert y.dtype == wg.float32


def test_conv_module_like_training_step():
    x = wg.tensor(rn(2, 1, 5, 5), dtype=wg.float64)
    w = wg.tensor(rn(2, 1, 3, 3), dtype=wg.float64, requires_grad=True)
    loss = F.max_pool2d(F.conv2d(x, w, padding=1).relu(), 2).sum()
    loss.backward()
    assert w.grad.shape == (2, 1, 3, 3)
    gradcheck(lambda w: F.max_pool2d(F.conv2d(x, w, padding=1), 2), w.detach().numpy(), what="conv+pool")


# ---------------------------------------------------------------- bad input


def test_conv2d_channel_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"conv2d: input of shape \(1, 3, 5, 5\).*weight of shape \(2, 2, 3, 3\)"):
        F.conv2d(wg.ones(1, 3, 5, 5), wg.ones(2, 2, 3, 3))


@pytest.mark.parametrize("call, match", [
    (lambda: F.conv2d(wg.ones(1, 1, 2, 2), wg.ones(1, 1, 3, 3)), "conv2d: input of spatial size"),
    (lambda: F.conv2d(wg.ones(1, 2, 5, 5), wg.ones(3, 1, 3, 3), groups=2), "conv2d: .*groups=2"),
    (lambda: F.conv2d(wg.ones(1, 1, 5, 5), wg.ones(1, 1, 3, 3), padding="full"), "conv2d: padding must be"),
    (lambda: F.conv2d(wg.ones(1, 1, 5, 5), wg.ones(1, 1, 3, 3), stride=2, padding="same"), "conv2d: padding='same'"),
    (lambda: F.conv2d(wg.ones(1, 1, 5, 5), wg.ones(1, 1, 3, 3), wg.ones(2)), r"conv2d: bias must have shape \(1,\)"),
    (lambda: F.conv2d(wg.ones(5, 5), wg.ones(1, 1, 3, 3)), "conv2d: expected a 4-D input"),
    (lambda: F.conv1d(wg.ones(1, 2, 5), wg.ones(1, 3, 3)), "conv1d: input of shape"),
    (lambda: F.conv_transpose2d(wg.ones(1, 2, 3, 3), wg.ones(3, 1, 2, 2)), "conv_transpose2d: input of shape"),
    (lambda: F.conv_transpose2d(wg.ones(1, 1, 3, 3), wg.ones(1, 1, 2, 2), output_padding=1),
     "conv_transpose2d: output_padding"),
    (lambda: F.max_pool2d(wg.ones(1, 1, 4, 4), 2, padding=2), "max_pool2d: need positive"),
    (lambda: F.max_pool2d(wg.ones(1, 1, 1, 1), 3, padding=1, dilation=2), "max_pool2d: input of spatial size"),
    (lambda: F.avg_pool2d(wg.ones(4, 4), 2), "avg_pool2d: expected a 3-D or 4-D input"),
    (lambda: F.adaptive_avg_pool2d(wg.ones(1, 1, 4, 4), 0), "adaptive_avg_pool2d: output_size"),
    (lambda: F.unfold(wg.ones(1, 1, 4, 4), (2, 2, 2)), "unfold: kernel_size must be"),
    (lambda: F.fold(wg.ones(1, 5, 4), (3, 3), 2), r"fold: input of shape \(1, 5, 4\)"),
])
def test_bad_arguments(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


@pytest.mark.parametrize("h, w, k, p", [(4, 6, 2, 0), (6, 4, 2, 1), (6, 6, 3, 0), (5, 5, 2, 0)],
                         ids=["tiles", "tiles-padded", "tiles-3x3", "overhang"])
def test_col2im_where_windows_tile_the_image(h, w, k, p, backend):
    """A pooling's Col2Im (stride = kernel) takes a shortcut on cpu when the windows tile the padded
    image exactly; it and the general path both agree with torch's fold."""
    oh, ow = (h + 2 * p - k) // k + 1, (w + 2 * p - k) // k + 1
    cols = rn(2, 3 * k * k, oh * ow)
    got = wg.run_kernel(K.COL2IM, wg.tensor(cols.astype(np.float32)), output_size=(h, w), kernel_size=(k, k),
                        stride=(k, k), padding=(p, p), dilation=(1, 1))
    want = TF.fold(torch.from_numpy(cols), (h, w), k, stride=k, padding=p).numpy()
    assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs, hw", [(W33, (4, 5)), (W_ODD, (4, 5)), (W_GAPS, (5, 7)),
                                       (dict(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1)),
                                        (6, 8)),
                                       (dict(kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1)),
                                        (8, 8))],
                         ids=["3x3", "odd", "gaps", "tiles", "padded-3x3"])
def test_cpu_windows_gather_and_strided_roads_agree(attrs, hw, monkeypatch):
    """cpu Im2Col/Col2Im gather through a cached index on short rows and copy strided slabs on long
    ones: both roads give the same columns and the same image, here on one geometry each."""
    from webgrad.backends.cpu import windows
    x = rn(2, 3, *hw)
    cols = windows.im2col(x, **attrs)
    back = windows.col2im(cols, output_size=hw, **attrs)
    monkeypatch.setattr(windows, "_GATHER_MAX_ROW", 0)
    windows._gather_index.cache_clear()
    windows._scatter_index.cache_clear()
    try:
        np.testing.assert_array_equal(windows.im2col(x, **attrs), cols)
        np.testing.assert_allclose(windows.col2im(cols, output_size=hw, **attrs), back, rtol=1e-12, atol=1e-12)
    finally:
        windows._gather_index.cache_clear()
        windows._scatter_index.cache_clear()
