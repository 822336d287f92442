"""Numerics where webgrad once differed from PyTorch without reason (issue 18): gradients at the
points where the chain rule alone gives NaN, ties in max(dim)/min(dim), float floor division near
integers, the promotion of 0-d tensors, and the shapes of empty selections. Each against torch's value,
on every backend."""
import numpy as np
import pytest
import torch

import webgrad as wg

NAN, INF = float("nan"), float("inf")
CASES = {   # name: (function of the library and its inputs, inputs as lists)
    "std_of_a_constant": (lambda lib, x: x.std(), [[2.0, 2.0, 2.0]]),
    "var_std_dim": (lambda lib, x: x.std(dim=1), [[[1.0, 1.0], [0.0, 2.0]]]),
    "norm_at_zero": (lambda lib, x: x.norm(), [[0.0, 0.0]]),
    "norm_p3_at_zero": (lambda lib, x: x.norm(3), [[0.0, 0.0]]),
    "atan2_at_origin": (lambda lib, x, y: lib.atan2(x, y), [[0.0, 0.0, 1.0], [0.0, -0.0, 0.0]]),
    "bce_at_0_and_1": (lambda lib, p, t: lib.nn.functional.binary_cross_entropy(p, t), [[0.0, 1.0, 0.5], [1.0, 0.0, 0.5]]),
    "remainder_by_zero": (lambda lib, x, y: lib.remainder(x, y), [[1.5, -2.0], [0.0, 3.0]]),
    "max_dim_ties": (lambda lib, x: x.max(dim=1).values, [[[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]]),
    "min_dim_ties": (lambda lib, x: x.min(dim=0).values, [[[1.0, 1.0], [1.0, 5.0]]]),
    "max_all_ties_split": (lambda lib, x: x.max(), [[1.0, 3.0, 3.0]]),
    "amax_ties_split": (lambda lib, x: x.amax(dim=0), [[1.0, 3.0, 3.0]]),
    # found by tests/fuzz: gradients at NaN and inf as PyTorch's rules give them
    "maximum_with_nan": (lambda lib, x, y: lib.maximum(x, y), [[NAN, 1.0, 2.0], [0.0, NAN, 2.0]]),
    "minimum_with_nan": (lambda lib, x, y: lib.minimum(x, y), [[NAN, 1.0, 2.0], [0.0, NAN, 2.0]]),
    "pow_exponent_at_nonpositive_base": (lambda lib, x, y: lib.pow(x, y), [[-2.0, 0.0, 0.0, 3.0],
                                                                           [0.5, -1.0, 2.0, 2.0]]),
    "prod_of_a_0d_nan": (lambda lib, x: x.prod(0), [NAN]),
    "prod_of_one_element_at_nan": (lambda lib, x: x.prod(1), [[[NAN], [2.0]]]),
    "max_all_shared_among_nans": (lambda lib, x: x.max(), [[NAN, 1.0, NAN]]),
    "min_all_shared_among_nans": (lambda lib, x: x.min(), [[2.0, NAN, 1.0]]),
    "norm_with_inf": (lambda lib, x: x.norm(), [[INF, 0.0]]),
    "norm_p3_with_inf": (lambda lib, x: x.norm(3), [[INF, 0.0, 1.0]]),
    "norm_p1_at_nan": (lambda lib, x: x.norm(1), [[NAN, -1.0]]),
    "norm_inf_at_nan_and_ties": (lambda lib, x: x.norm(INF, dim=1), [[[NAN, 1.0], [-3.0, 3.0]]]),
    "var_with_inf": (lambda lib, x: x.var(), [[0.0, INF]]),
    "std_dim_with_inf": (lambda lib, x: x.std(dim=1), [[[0.0, INF, 1.0], [1.0, 2.0, 4.0]]]),
    "var_without_degrees_of_freedom": (lambda lib, x: x.var(), [[NAN]]),
}


def _run(lib, case, device):
    fn, values = CASES[case]
    kw = {} if lib is torch else {"device": device}
    xs = [lib.tensor(v, requires_grad=True, **kw) for v in values]
    y = fn(lib, *xs)
    y.sum().backward()
    return [np.asarray(y.tolist())] + [np.asarray(x.grad.tolist()) for x in xs]


@pytest.mark.parametrize("case", CASES)
def test_value_and_gradient_are_torchs(case, backend):
    for got, want in zip(_run(wg, case, backend), _run(torch, case, None)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=case)
        assert (np.signbit(got) == np.signbit(want))[want == 0].all() or case.startswith("bce"), case


def test_float_floor_division_near_integers(backend):
    a, b = [1.0, 0.3, -1.0, 7.0], [0.1, 0.1, 0.1, 0.7]
    want = (torch.tensor(a) // torch.tensor(b)).tolist()          # float32's quotients: 0.3 // 0.1 is 3 there
    assert (wg.tensor(a) // wg.tensor(b)).tolist() == want and want[0] == 1.0 // 0.1 == 9.0


def test_a_0d_tensor_does_not_widen_a_tensor_with_dims():
    assert (torch.ones(3) + torch.tensor(1.0, dtype=torch.float64)).dtype == torch.float32
    assert (wg.ones(3) + wg.tensor(1.0, dtype=wg.float64)).dtype is wg.float32
    assert (torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(3)).dtype == torch.int32
    assert (wg.tensor([1, 2], dtype=wg.int32) + wg.tensor(3)).dtype is wg.int32   # int64 0-d: same category


def test_empty_selections_keep_their_dims(backend):
    for lib, kw in ((torch, {}), (wg, {"device": backend})):
        x = lib.ones(3, 2, **kw)
        shapes = [tuple(x[lib.zeros(3, dtype=lib.bool, **kw)].shape),
                  tuple(x[lib.tensor([], dtype=lib.long, **kw)].shape),
                  tuple(x[:, lib.tensor([], dtype=lib.long, **kw)].shape)]
        if lib is torch:
            want = shapes
        else:
            assert shapes == want == [(0, 2), (0, 2), (3, 0)]
