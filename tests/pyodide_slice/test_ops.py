"""Every op family's forward and gradient on the backend under test against the stored ``cpu``
results (cases.py; float32 tolerances), plus a few closed forms that need no stored result."""
import math

import pytest

import webgrad as wg
from cases import CASES, run_case

RTOL, ATOL = 2e-4, 2e-4


def flat(v):
    if isinstance(v, list):
        return [x for item in v for x in flat(item)]
    return [v]


def assert_close(got, want, what):
    g, w = flat(got), flat(want)
    assert len(g) == len(w), f"{what}: {len(g)} values, expected {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        if isinstance(b, float) or isinstance(a, float):
            ok = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= ATOL + RTOL * abs(b)
        else:
            ok = a == b
        assert ok, f"{what}: element {i} is {a!r}, cpu gives {b!r}"


@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_gradient_match_cpu(name, expected, slice_backend):
    got, want = run_case(wg, name), expected[name]
    assert got["shape"] == want["shape"] and got["dtype"] == want["dtype"], (got["shape"], got["dtype"])
    assert_close(got["out"], want["out"], f"{name} forward on {slice_backend}")
    assert (got["grads"] is None) == (want["grads"] is None)
    for k, (g, w) in enumerate(zip(got["grads"] or [], want["grads"] or [])):
        assert (g is None) == (w is None), f"{name}: gradient {k}"
        if w is not None:
            assert_close(g, w, f"{name} gradient of input {k} on {slice_backend}")


def test_closed_form_gradients(slice_backend):
    x = wg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    (x.exp() * x.sin() + x ** 2).sum().backward()
    want = [math.exp(v) * (math.sin(v) + math.cos(v)) + 2 * v for v in (0.5, 1.0, 2.0)]
    assert_close(x.grad.tolist(), want, "d/dx exp(x) sin(x) + x^2")


def test_tensors_live_on_the_backend_under_test(slice_backend):
    assert wg.ones(2).device == slice_backend
    assert (wg.ones(2) * 3).device == slice_backend
