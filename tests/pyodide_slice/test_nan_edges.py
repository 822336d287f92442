"""NaN semantics and long runs on the backend under test, without numpy (so they run inside
Pyodide on ``webgpu``, through the browser's WGSL compiler, as well as on the host): the
browser's GPU gets the same kernels as ``wgpu``, and these are the cases most easily wrong.
The full tables are tests/test_nan_semantics.py and tests/test_gpu_long.py."""
import math

import webgrad as wg

NAN, INF = float("nan"), float("inf")


def isnan(v):
    return isinstance(v, float) and math.isnan(v)


def test_nan_propagates_through_max_min_relu_clamp():
    x = wg.tensor([1.0, NAN, -2.0, 0.5])
    assert [isnan(v) for v in wg.relu(x).tolist()] == [False, True, False, False]
    assert [isnan(v) for v in x.clamp(-1.0, 1.0).tolist()] == [False, True, False, False]
    assert isnan(wg.maximum(x, wg.zeros(4)).tolist()[1]) and isnan(wg.minimum(wg.zeros(4), x).tolist()[1])
    assert isnan(x.amax().item()) and isnan(x.amin().item())
    assert x.argmax().item() == 1 and x.argmin().item() == 1
    assert (x != x).tolist() == [False, True, False, False]
    assert x.to(wg.bool).tolist() == [True, True, True, True]


def test_signs_and_special_values():
    x = wg.tensor([-0.0, NAN, INF, -INF])
    assert [math.copysign(1.0, v) for v in wg.relu(x).tolist()[:1]] == [-1.0]
    assert wg.sign(x).tolist()[:2] == [0.0, 0.0]
    assert all(isnan(v) for v in wg.sin(x).tolist()[1:])
    up, down = wg.atan2(wg.tensor([0.0, -0.0]), wg.tensor([-0.0, -0.0])).tolist()
    assert abs(up - math.pi) < 1e-6 and abs(down + math.pi) < 1e-6
    big = 3e38
    assert abs(wg.sin(wg.tensor([big])).item() - math.sin(wg.tensor([big]).item())) < 1e-6
    assert (wg.tensor([NAN, 2.0]) ** wg.tensor([0.0, NAN])).tolist()[0] == 1.0


def test_long_runs_past_65535_iterations():
    n = 70_000
    assert wg.ones(n).sum().item() == n
    assert wg.ones(n).cumsum(0).tolist()[-3:] == [n - 2.0, n - 1.0, float(n)]
    x = wg.zeros(n)
    x[n - 7] = 1.0
    assert x.argmax().item() == n - 7
    assert (wg.ones(1, n) @ wg.ones(n, 2)).tolist() == [[float(n), float(n)]]
    loss = wg.nn.functional.cross_entropy(wg.zeros(2, n), wg.tensor([0, n - 1])).item()
    assert abs(loss - math.log(n)) < 1e-4


def test_floor_divide_and_remainder_compile_and_match_python():
    a = wg.tensor([1.0, -7.5, 7.5, 3e38, -0.0, 5.0])
    b = wg.tensor([0.1, 2.0, -2.0, 1e-30, 3.0, float("inf")])
    got_div, got_rem = (a // b).tolist(), (a % b).tolist()
    assert got_div[:3] == [9.0, -4.0, -4.0] and got_div[5] == 0.0
    assert got_rem[1:3] == [0.5, -0.5] and got_rem[5] == 5.0 and str(got_rem[4]) == "-0.0"
    assert abs(got_rem[0] - 0.09999999) < 1e-6
