"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, all/any, cumsum."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, assert_close, gradcheck, gradgradcheck, op_tests

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def distinct(*shape):
    """Values with no ties (max/min are differentiable there), well separated for finite differences."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.1).reshape(shape)


def away_from_zero(*shape):
    return (rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape))


def np_var(x, axis=None, ddof=1, keepdims=False):
    return np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)


def np_lse(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


CASES = [
    # sum
    OpCase("sum", lambda x: x.sum(), np.sum, [r(3, 4)], second_order=True),
    OpCase("sum", lambda x: x.sum(), np.sum, [np.array(2.5)], id="sum-scalar"),
    OpCase("sum", lambda x: wg.sum(x, 0), lambda x: np.sum(x, 0), [np.array(2.5)], id="sum-scalar-dim0"),
    OpCase("sum", lambda x: x.sum(), np.sum, [np.zeros((0, 3))], grad=False, id="sum-empty"),
    OpCase("sum", lambda x: x.sum(1), lambda x: x.sum(1), [np.zeros((0, 3))], grad=False, id="sum-empty-dim"),
    OpCase("sum", lambda x: x.sum(-1, keepdim=True), lambda x: x.sum(-1, keepdims=True), [r(2, 3, 4)],
           second_order=True, id="sum-neg-keepdim"),
    OpCase("sum", lambda x: x.sum((0, 2)), lambda x: x.sum((0, 2)), [r(2, 3, 4)], id="sum-tuple"),
    OpCase("sum", lambda x: x.sum(1), lambda x: x.sum(1), [r(37, 129)], grad=False, rtol=1e-4, atol=1e-4,
           id="sum-37x129-dim1"),
    OpCase("sum", lambda x: x.sum(), np.sum, [r(37, 129)], grad=False, rtol=1e-4, atol=1e-3, id="sum-37x129-all"),
    OpCase("sum", lambda x: x.sum(0), lambda x: x.sum(0), [r(1000, 3)], grad=False, rtol=1e-4, atol=1e-4,
           id="sum-1000x3-dim0"),
    # mean
    OpCase("mean", lambda x: x.mean(), np.mean, [r(3, 5)]),
    OpCase("mean", lambda x: x.mean((0, -1), keepdim=True), lambda x: x.mean((0, 2), keepdims=True), [r(2, 3, 4)]),
    OpCase("mean", lambda x: x.mean(0), lambda x: x.mean(0), [r(1031, 2)], grad=False, rtol=1e-4, atol=1e-5,
           id="mean-1031x2"),
    # prod
    OpCase("prod", lambda x: x.prod(), np.prod, [away_from_zero(2, 3)]),
    OpCase("prod", lambda x: x.prod(1), lambda x: x.prod(1), [away_from_zero(3, 4)], second_order=True),
    OpCase("prod", lambda x: x.prod(0), lambda x: x.prod(0), [np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 0.0],
                                                                        [1.5, -1.0, 2.0]])], id="prod-zeros"),
    OpCase("prod", lambda x: x.prod(1), lambda x: x.prod(1), [1 + 1e-4 * r(3, 1100)], grad=False, rtol=1e-3,
           id="prod-3x1100"),
    # max / min / amax / amin
    OpCase("max", lambda x: x.max(), np.max, [distinct(3, 4)]),
    OpCase("max", lambda x: x.max(1), lambda x: (x.max(1), x.argmax(1)), [distinct(3, 5)], id="max-dim"),
    OpCase("min", lambda x: wg.min(x, 0, keepdim=True), lambda x: (x.min(0, keepdims=True),
                                                                   x.argmin(0)[None]), [distinct(4, 3)]),
    OpCase("amax", lambda x: x.amax((0, 2)), lambda x: x.max((0, 2)), [distinct(2, 3, 4)]),
    OpCase("amin", lambda x: x.amin(-1), lambda x: x.min(-1), [distinct(3, 4)]),
    OpCase("amax", lambda x: x.amax(1), lambda x: x.max(1), [distinct(5, 1031)], grad=False, id="amax-5x1031"),
    OpCase("amax", lambda x: x.amax(), np.max, [np.array(1.5)], id="amax-scalar"),
    OpCase("amax-ties", lambda x: x.amax(1), lambda x: x.max(1), [np.array([[1.0, 3.0, 3.0, 0.0],
                                                                             [2.0, 2.0, 2.0, -1.0]])],
           grad=False),  # not differentiable at ties: test_max_gradient_split_among_ties checks torch's rule
    # argmax / argmin / all / any (not differentiable)
    OpCase("argmax", lambda x: x.argmax(), np.argmax, [distinct(3, 5)], grad=False),
    OpCase("argmax", lambda x: x.argmax(1, keepdim=True), lambda x: x.argmax(1)[:, None], [distinct(3, 5)],
           grad=False, id="argmax-dim-keepdim"),
    OpCase("argmin", lambda x: x.argmin(0), lambda x: x.argmin(0), [distinct(1033, 3)], grad=False),
    OpCase("argmax-ties", lambda x: x.argmax(1), lambda x: x.argmax(1), [np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]])],
           grad=False),
    OpCase("all", lambda x: (x > 0).all(1), lambda x: (x > 0).all(1), [r(4, 3)], grad=False),
    OpCase("any", lambda x: (x > 1).any(), lambda x: (x > 1).any(), [r(4, 3)], grad=False),
    OpCase("any", lambda x: (x > 3).any(0), lambda x: (x > 3).any(0), [r(1200, 2)], grad=False, id="any-1200x2"),
    # var / std
    OpCase("var", lambda x: x.var(), lambda x: np_var(x), [r(3, 4)], second_order=True),
    OpCase("var", lambda x: x.var(1, keepdim=True, correction=0), lambda x: np_var(x, 1, 0, True), [r(3, 4)],
           id="var-dim-correction0"),
    OpCase("var", lambda x: x.var(0, unbiased=False), lambda x: np_var(x, 0, 0), [r(5, 2)], id="var-unbiased-false"),
    OpCase("var", lambda x: x.var(0), lambda x: np_var(x, 0), [r(1500, 2)], grad=False, rtol=1e-4, atol=1e-4,
           id="var-1500x2"),
    OpCase("std", lambda x: x.std((0, 1)), lambda x: np.std(x, (0, 1), ddof=1), [r(2, 3, 2)]),
    # logsumexp
    OpCase("logsumexp", lambda x: x.logsumexp(1), lambda x: np_lse(x, 1), [r(3, 4)], second_order=True),
    OpCase("logsumexp", lambda x: wg.logsumexp(x * 100, (0, 1), keepdim=True),
           lambda x: np_lse(x * 100, (0, 1), True), [r(2, 3)], rtol=1e-4, id="logsumexp-large"),
    OpCase("logsumexp", lambda x: x.logsumexp(0), lambda x: np_lse(x, 0), [r(1100, 3)], grad=False, rtol=1e-4,
           id="logsumexp-1100x3"),
    # norm
    OpCase("norm", lambda x: x.norm(), np.linalg.norm, [r(3, 4)]),
    OpCase("norm", lambda x: x.norm(1, dim=1), lambda x: np.abs(x).sum(1), [away_from_zero(3, 4)], id="norm-p1"),
    OpCase("norm", lambda x: x.norm(float("inf"), dim=0, keepdim=True), lambda x: np.abs(x).max(0, keepdims=True),
           [distinct(3, 4)], id="norm-inf"),
    OpCase("norm", lambda x: x.norm("fro"), np.linalg.norm, [r(3, 4)], id="norm-fro"),
    OpCase("norm", lambda x: x.norm(3, dim=-1), lambda x: (np.abs(x) ** 3).sum(-1) ** (1 / 3),
           [away_from_zero(2, 5)], id="norm-p3"),
    OpCase("norm", lambda x: x.norm(dim=1), lambda x: np.linalg.norm(x, axis=1), [r(3, 1024)], grad=False,
           rtol=1e-4, id="norm-3x1024"),
    # cumsum
    OpCase("cumsum", lambda x: x.cumsum(1), lambda x: x.cumsum(1), [r(3, 5)], second_order=True),
    OpCase("cumsum", lambda x: wg.cumsum(x, -3), lambda x: x.cumsum(0), [r(3, 2, 2)], id="cumsum-neg"),
    OpCase("cumsum", lambda x: x.cumsum(0), lambda x: x, [np.array(1.5)], id="cumsum-scalar"),
    OpCase("cumsum", lambda x: x.cumsum(0), lambda x: x.cumsum(0), [r(1500)], grad=False, rtol=1e-4, atol=1e-3,
           id="cumsum-1500"),
]

globals().update(op_tests(CASES))


# ---------------------------------------------------------------- dtypes and semantics

def test_int_and_bool_sums_give_int64():
    assert wg.tensor([1, 2, 3]).sum().dtype is wg.int64 and wg.tensor([1, 2], dtype=wg.int32).sum().dtype is wg.int64
    assert wg.tensor([True, True, False]).sum().item() == 2
    assert wg.tensor([2, 3]).prod().dtype is wg.int64
    assert wg.tensor([True, False, True]).cumsum(0).tolist() == [1, 1, 2]
    assert wg.tensor([1, 2]).sum(dtype=wg.float64).dtype is wg.float64
    assert wg.tensor([1.5, 2.0]).sum(dtype=wg.int32).item() == 3


def test_float_reductions_keep_dtype():
    x = wg.tensor([1.0, 2.0], dtype=wg.float64)
    for y in (x.sum(), x.mean(), x.prod(), x.amax(), x.var(), x.std(), x.logsumexp(0), x.norm(), x.cumsum(0)):
        assert y.dtype is wg.float64


def test_max_min_with_dim_return_named_tuples():
    x = wg.tensor([[1.0, 5.0, 5.0], [7.0, 4.0, 7.0]])
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]      # first occurrence
    assert x.min(dim=0).indices.dtype is wg.int64
    assert type(x.max(1)).__name__ == "max"
    assert x.max(0, keepdim=True).values.shape == (1, 3)


def test_max_with_a_tensor_is_elementwise_maximum():
    assert wg.max(wg.tensor([1.0, 4.0]), wg.tensor([3.0, 2.0])).tolist() == [3.0, 4.0]


def test_argmax_flattens_and_keepdim():
    x = wg.tensor([[1.0, 9.0], [9.0, 0.0]])
    assert x.argmax().item() == 1 and x.argmax().shape == ()
    assert x.argmax(keepdim=True).shape == (1, 1)
    assert wg.tensor(3.0).argmax().item() == 0


def test_all_any_are_bool():
    x = wg.tensor([[1, 0], [2, 3]])
    assert x.all().dtype is wg.bool and x.any(0).tolist() == [True, True] and x.all(1).tolist() == [False, True]
    assert wg.zeros(0).all().item() is True and wg.zeros(0).any().item() is False


def test_empty_reductions():
    assert wg.zeros(0).sum().item() == 0.0
    assert wg.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert wg.zeros(0).prod().item() == 1.0
    assert wg.zeros(2, 0).logsumexp(1).tolist() == [float("-inf")] * 2
    assert wg.zeros(0, 2).amax(1).shape == (0,)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # log(0) for the all -inf row
def test_logsumexp_stable_and_infinite():
    x = wg.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [float("-inf"), float("-inf")]])
    got = x.logsumexp(1).tolist()
    np.testing.assert_allclose(got[:2], [1000 + np.log(2), -1000 + np.log(2)], rtol=1e-6)
    assert got[2] == float("-inf")
    y = wg.tensor([1000.0, 1000.0], requires_grad=True)
    y.logsumexp(0).backward()
    assert_close(y.grad, [0.5, 0.5])


def test_max_gradient_split_among_ties():
    x = wg.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    x.amax(1).sum().backward()
    assert_close(x.grad, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    x.grad = None
    x.max().backward()
    assert_close(x.grad, [[0, 0.5, 0.5], [0, 0, 0]])


def test_prod_gradient_with_zeros_is_exact():
    x = wg.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 5.0]], requires_grad=True)
    x.prod(1).sum().backward()
    assert_close(x.grad, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [10.0, 5.0, 2.0]])


def test_prod_second_order_with_one_zero():
    gradgradcheck(lambda x: x.prod(1), np.array([[0.0, 2.0, -1.5], [1.2, 0.7, -2.0]]), what="prod with a zero")


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # correction=2 leaves no degrees of freedom
def test_var_and_std_options():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    t = wg.tensor(x, dtype=wg.float64)
    assert_close(t.var(1), np.var(x, 1, ddof=1))
    assert_close(t.var(False), np.var(x))                 # torch's var(input, unbiased)
    assert_close(t.std(0, correction=0), np.std(x, 0))
    assert t.var(0, keepdim=True, correction=2).tolist() == [[float("inf")] * 3]   # no degrees of freedom


def test_norm_p0_counts_nonzeros():
    assert wg.tensor([0.0, 2.0, -1.0]).norm(0).item() == 2.0
    assert wg.tensor([3, 4]).norm().item() == 5.0


def test_reduction_gradients_of_float64_composites():
    gradcheck(lambda x: x.std(1, keepdim=True), r(3, 4), what="std")
    gradcheck(lambda x: x.norm(2, dim=(0, 1)), r(2, 3), what="norm tuple dims")


def test_matches_torch():
    torch = pytest.importorskip("torch")
    x = r(4, 5)
    t, w = torch.tensor(x), wg.tensor(x, dtype=wg.float64)
    assert_close(w.var(1, correction=0), t.var(1, correction=0).numpy())
    assert_close(w.logsumexp((0, 1)), t.logsumexp((0, 1)).numpy())
    assert_close(w.norm(3, 1), t.norm(3, 1).numpy())
    assert_close(w.amin((0, 1), keepdim=True), t.amin((0, 1), keepdim=True).numpy())
    assert w.argmin().item() == t.argmin().item()


# ---------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("fn, op", [
    (lambda x: x.sum(2), "sum"), (lambda x: x.mean(-3), "mean"), (lambda x: x.prod(5), "prod"),
    (lambda x: x.amax((0, 2)), "amax"), (lambda x: x.max(2), "max"), (lambda x: x.argmin(2), "argmin"),
    (lambda x: x.var(3), "var"), (lambda x: x.std(-4), "std"), (lambda x: x.logsumexp(2), "logsumexp"),
    (lambda x: x.norm(dim=4), "norm"),
    (lambda x: x.all(2), "all"), (lambda x: x.any(-3), "any"), (lambda x: x.cumsum(2), "cumsum"),
])
def test_bad_dim_names_op_dim_and_ndim(fn, op):
    with pytest.raises(IndexError, match=rf"({op}).*dim -?\d+ is out of range for a tensor with 2 dimensions"):
        fn(wg.zeros(2, 3))


def test_repeated_dim_refused():
    with pytest.raises(ValueError, match="sum: dim"):
        wg.zeros(2, 3).sum((1, -1))


def test_mean_of_int_refused():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype"):
        wg.tensor([1, 2]).mean()
    assert wg.tensor([1, 2]).mean(dtype=wg.float32).item() == 1.5


def test_var_of_int_refused():
    with pytest.raises(RuntimeError, match=r"var\(\).*floating point"):
        wg.tensor([1, 2]).var()


def test_max_of_empty_refused():
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        wg.zeros(0).max()
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 1 to have non-zero size"):
        wg.zeros(2, 0).amax(1)
    with pytest.raises(IndexError, match=r"argmax\(\)"):
        wg.zeros(0).argmax()


def test_max_with_tuple_dim_refused():
    with pytest.raises(TypeError, match="max.*amax"):
        wg.zeros(2, 3).max((0, 1))


def test_norm_bad_p():
    with pytest.raises(ValueError, match="norm: p must be"):
        wg.zeros(2, 2).norm("nuc")


def test_non_tensor_input():
    with pytest.raises(TypeError, match="sum: input must be a Tensor"):
        wg.sum([1.0, 2.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, dim", [((4, 5, 20), 1), ((3, 16, 2, 9), 1), ((1024, 10), 1), ((8, 40, 6), 2),
                                        ((2, 3, 4), 1)],
                         ids=["short-middle", "pool-window", "many-short-rows", "short-last-3d", "small"])
def test_reductions_over_a_short_axis_match_numpy_exactly(shape, dim, dtype, backend):
    """The cpu kernels reduce a short axis slice by slice (a pooling window's, or the classes of many
    rows for max/min): same order as numpy, so the same bits; other backends agree within float32."""
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    if backend != "cpu" and dtype == np.float64:
        x = x.astype(np.float32)
    t = wg.tensor(x)
    for name, ref in (("sum", np.sum), ("prod", np.prod), ("amax", np.max), ("amin", np.min)):
        got = getattr(t, name)(dim).numpy()
        want = ref(x, axis=dim)
        if backend == "cpu":
            np.testing.assert_array_equal(got, want, err_msg=name)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
    assert getattr(t, "amax")(dim, keepdim=True).shape == tuple(1 if i == dim else s for i, s in enumerate(shape))


# ---------------------------------------------------------------- found by tests/fuzz


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_sums_accumulate_in_float32_as_torch(dtype):
    """numpy rounds every partial sum of a half type: 1000 bfloat16 ones summed to 256."""
    torch = pytest.importorskip("torch")
    x, t = wg.ones(3000, dtype=getattr(wg, dtype)), torch.ones(3000, dtype=getattr(torch, dtype))
    assert x.sum().item() == t.sum().item() == float(torch.tensor(3000.0).to(t.dtype))   # one rounding
    assert x.mean().item() == 1.0 and x[:1000].sum().item() == 1000
    assert x.cumsum(0)[-1].item() == t.cumsum(0)[-1].item()
    factor = float(torch.tensor(1.01).to(t.dtype))     # PyTorch's own half products round lane by lane
    assert (x * 1.01).prod().item() == float(torch.tensor(factor ** 3000, dtype=torch.float64).to(t.dtype))


def test_reduction_errors_are_torchs(backend):
    with pytest.raises(RuntimeError, match=r"sum: dims \(1, -1\) name a dimension twice"):
        wg.zeros(2, 3).sum((1, -1))
    with pytest.raises(RuntimeError, match=r"argmax\(\): does not support bool input"):
        wg.tensor([True, False]).argmax()
    assert wg.tensor([True, False]).max(0).indices.item() == 0           # max(dim) takes bools
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified"):
        wg.zeros(0).amax()
    with pytest.raises(RuntimeError, match=r"norm: cannot compute the inf norm over an empty dim"):
        wg.zeros(2, 0).norm(float("inf"), dim=1)
    assert wg.zeros(0, 2).norm(float("inf"), dim=1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"std\(\): std and var only support floating point"):
        wg.tensor(True).std(1)                                            # the dtype is checked first


def test_all_and_any_over_no_dims_reduce_nothing(backend):
    """dim=() means every dim to sum, but no dim to all/any (PyTorch's)."""
    x = wg.tensor([[1, 0], [2, 3]])
    assert x.all(()).tolist() == [[True, False], [True, True]] and x.any(dim=(), keepdim=True).shape == (2, 2)
    assert x.sum(()).item() == 6


def test_norm_of_one_element_is_its_magnitude_as_torchs(backend):
    """PyTorch's p-norm of a single element is |x|: no square or power to underflow (1e-23 ** 2 is 0 in
    float32), with the p-norm's gradient (NaN at x where |x|^(p-1) overflows, as PyTorch's)."""
    torch = pytest.importorskip("torch")
    values = [[1e-23, 0.0, -3e-30, 2.5]]
    for p in (2, 3, 0.5, -1, 1, float("inf")):
        x, t = wg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        y, z = x.norm(p, dim=0), t.norm(p, dim=0)
        y.sum().backward()
        z.sum().backward()
        assert y.tolist() == z.tolist(), p
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, equal_nan=True, err_msg=str(p))


def test_max_along_a_dim_of_an_empty_tensor_has_an_empty_gradient(backend):
    for shape, dim in (((1, 0), 0), ((0, 3), 1)):
        x = wg.zeros(*shape, requires_grad=True)
        values, indices = x.max(dim)
        (values * 2).sum().backward()
        assert values.shape == indices.shape and x.grad.shape == shape


PROD_SPECIALS = [[0.0, float("nan"), 2.0], [0.0, 0.0, float("nan")], [3.0, float("inf"), 2.0],
                 [0.0, float("inf"), -2.0], [0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [[0.0, float("nan"), 2.0],
                                                                           [1.0, float("inf"), 3.0]]]


@pytest.mark.parametrize("values", PROD_SPECIALS, ids=str)
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod_gradient_with_zeros_nan_and_inf_as_torch(backend, values, dim):
    """PyTorch's prod_backward: prod / x without zeros; else the product of the others (NaN beside a zero
    when a NaN or inf is among them), and for the whole product 0 beside two zeros or more."""
    torch = pytest.importorskip("torch")
    x, t = wg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    args = () if dim is None else (dim,)
    (x.prod(*args) * wg.arange(1, 1 + x.prod(*args).numel()).reshape(x.prod(*args).shape)).sum().backward()
    tp = t.prod(*args)
    (tp * torch.arange(1, 1 + tp.numel()).reshape(tp.shape)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_prod_gradient_with_zeros_second_order():
    x = np.array([[0.5, 0.0, 2.0, -1.5], [1.2, 0.7, 0.0, 0.0], [0.3, 1.1, -0.8, 2.0]])
    gradcheck(lambda t: t.prod(1), x, what="prod with zeros")
    gradgradcheck(lambda t: t.prod(1), x)
