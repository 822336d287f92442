"""An OpInfo-like table format and the checks every kernel must pass:

* forward on each backend (float32) against a numpy reference,
* gradients by central finite differences in float64 on ``cpu``,
* forward and gradients on each backend agreeing with ``cpu`` in float32, and in float16 on the
  backends that hold it (``cpu``'s half results are the oracle).

A test module lists ``OpCase`` rows and calls ``op_tests(CASES)`` into its globals.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np
import pytest

import webgrad as wg


@dataclass
class OpCase:
    """One op on one set of sample inputs.

    fn:      webgrad function of tensors -> tensor (or tuple of tensors)
    ref:     numpy function of float64/int arrays -> array (None: no forward reference)
    inputs:  numpy arrays; floating ones are given to fn as float32 (forward/agreement)
             or float64 (gradcheck); integer/bool ones keep their dtype
    grad:    whether the op is differentiable w.r.t. its floating inputs
    """
    name: str
    fn: Callable
    ref: Optional[Callable]
    inputs: Sequence[np.ndarray]
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-4
    second_order: bool = False
    id: str = field(default="")

    def __post_init__(self):
        self.inputs = [np.asarray(a) for a in self.inputs]
        if not self.id:
            shapes = "_".join("x".join(map(str, a.shape)) or "scalar" for a in self.inputs)
            self.id = f"{self.name}-{shapes}"


def _is_float(a):
    return a.dtype.kind == "f"


def make_tensors(arrays, dtype, backend, requires_grad=False):
    out = []
    for a in arrays:
        if _is_float(a):
            out.append(wg.tensor(a.astype(dtype), backend=backend, requires_grad=requires_grad))
        else:
            out.append(wg.tensor(a, backend=backend))
    return out


def _outputs(y):
    return y if isinstance(y, (tuple, list)) else (y,)


def to_numpy(t):
    return np.asarray(t.detach().numpy())


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, what=""):
    actual = to_numpy(actual) if isinstance(actual, wg.Tensor) else np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != expected {expected.shape}"
    np.testing.assert_allclose(actual.astype(np.float64) if actual.dtype != bool else actual,
                               expected.astype(np.float64) if expected.dtype != bool else expected,
                               rtol=rtol, atol=atol, err_msg=what)


def check_forward(case: OpCase, backend: str):
    ts = make_tensors(case.inputs, np.float32, backend)
    got = _outputs(case.fn(*ts))
    if case.ref is None:
        return
    want = _outputs(case.ref(*[a.astype(np.float32) if _is_float(a) else a for a in case.inputs]))
    for g, w in zip(got, want):
        assert g.device == backend
        assert_close(g, w, case.rtol * 10, case.atol * 10, f"{case.id} forward on {backend}")


def analytic_and_numeric_grads(fn, arrays, eps=1e-6, seed=0):
    """Gradients of sum(fn(x) * w) for a fixed random w: by backward, and by central differences."""
    ts = make_tensors(arrays, np.float64, "cpu", requires_grad=True)
    ts = [t for t in ts]
    outs = _outputs(fn(*ts))
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(o.shape) for o in outs]

    def loss_np(xs):
        with wg.no_grad():
            ys = _outputs(fn(*make_tensors(xs, np.float64, "cpu")))
            return sum(float((to_numpy(y) * w).sum()) for y, w in zip(ys, weights) if y.dtype.is_floating)

    loss = None
    for o, w in zip(outs, weights):
        if o.dtype.is_floating and o.requires_grad:
            term = (o * wg.tensor(w, dtype=wg.float64)).sum()
            loss = term if loss is None else loss + term
    analytic, numeric = [], []
    float_idx = [i for i, a in enumerate(arrays) if _is_float(a)]
    if loss is not None:
        grads = wg.grad(loss, [ts[i] for i in float_idx], allow_unused=True)
    else:
        grads = [None] * len(float_idx)
    for i, g in zip(float_idx, grads):
        x = arrays[i].astype(np.float64)
        num = np.zeros(x.shape)
        flat = num.reshape(-1)
        for j in range(x.size):
            xp, xm = x.copy().reshape(-1), x.copy().reshape(-1)
            xp[j] += eps
            xm[j] -= eps
            args_p = list(arrays); args_p[i] = xp.reshape(x.shape)
            args_m = list(arrays); args_m[i] = xm.reshape(x.shape)
            flat[j] = (loss_np(args_p) - loss_np(args_m)) / (2 * eps)
        analytic.append(np.zeros_like(x) if g is None else to_numpy(g))
        numeric.append(num)
    return analytic, numeric


def gradcheck(fn, *arrays, atol=1e-5, rtol=1e-4, eps=1e-6, what=""):
    """Assert that webgrad's gradients of ``fn`` match finite differences (float64, cpu)."""
    analytic, numeric = analytic_and_numeric_grads(fn, [np.asarray(a) for a in arrays], eps)
    assert analytic, f"{what}: no floating inputs to check"
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol, err_msg=f"{what}: gradient of input {k}")


def gradgradcheck(fn, *arrays, atol=1e-4, rtol=1e-3, what=""):
    """Assert second-order gradients: the gradient of |d(sum(fn(x)^3 * v))/dx|^2 matches finite
    differences. (Cubing makes the first gradient depend on x through the op's own gradient rule,
    so linear ops are checked too.)"""
    arrays = [np.asarray(a) for a in arrays]
    v = wg.tensor(np.random.default_rng(1).standard_normal(fn(*make_tensors(arrays, np.float64, "cpu")).shape))

    @wg.enable_grad()  # the finite differences call this under no_grad
    def first_grad_dot(*ts):
        ts = [t.detach().requires_grad_() if t.dtype.is_floating and not t.requires_grad else t for t in ts]
        floats = [t for t in ts if t.dtype.is_floating]
        gs = wg.grad((fn(*ts) ** 3 * v).sum(), floats, create_graph=True, allow_unused=True)
        return sum((g * g).sum() for g in gs if g is not None)
    gradcheck(first_grad_dot, *arrays, atol=atol, rtol=rtol, eps=1e-5, what=what + " (second order)")


def check_grad(case: OpCase):
    gradcheck(case.fn, *case.inputs, atol=case.grad_atol, rtol=case.grad_rtol, what=case.id)
    if case.second_order:
        gradgradcheck(case.fn, *case.inputs, what=case.id)


def check_agreement(case: OpCase, backend: str):
    """Forward and gradients on ``backend`` agree with ``cpu`` in float32."""
    results = {}
    for be in ("cpu", backend):
        ts = make_tensors(case.inputs, np.float32, be, requires_grad=case.grad)
        outs = _outputs(case.fn(*ts))
        grads = []
        if case.grad:
            loss = None
            for k, o in enumerate(outs):
                if o.requires_grad:
                    w = np.random.default_rng(k).standard_normal(o.shape).astype(np.float32)
                    term = (o * wg.tensor(w, backend=be)).sum()
                    loss = term if loss is None else loss + term
            if loss is not None:
                floats = [t for t in ts if t.requires_grad]
                grads = [g for g in wg.grad(loss, floats, allow_unused=True)]
        results[be] = ([to_numpy(o) for o in outs], [None if g is None else to_numpy(g) for g in grads])
    (co, cg), (bo, bg) = results["cpu"], results[backend]
    for a, b in zip(bo, co):
        assert_close(a, b, 1e-4, 1e-5, f"{case.id}: {backend} vs cpu forward")
    for a, b in zip(bg, cg):
        if a is not None or b is not None:
            assert_close(a, b, 1e-3, 1e-4, f"{case.id}: {backend} vs cpu gradient")


HALF_RTOL, HALF_ATOL = 4e-3, 2e-3   # float16: 4 units in the last place (2**-10 each) of rounding apart


def check_half_agreement(case: OpCase, backend: str):
    """Forward and gradients on ``backend`` agree with ``cpu`` in float16 (the cpu's results the oracle,
    dtypes included). Both compute in float32 and round each kernel's result to half, so they part
    only where a float32 result lies near a rounding boundary (one unit in the last place), and such
    partings compound through an op's kernels and its gradient's: hence a few units of half rounding,
    of each value and, for gradients (longer chains, with cancellations), of the largest one."""
    results = {}
    for be in ("cpu", backend):
        ts = make_tensors(case.inputs, np.float16, be, requires_grad=case.grad)
        outs = _outputs(case.fn(*ts))
        grads = []
        floats = [t for t in ts if t.requires_grad]
        if case.grad and any(o.requires_grad for o in outs):
            weights = [wg.tensor(np.random.default_rng(k).standard_normal(o.shape).astype(np.float16), backend=be)
                       for k, o in enumerate(outs)]
            grads = wg.grad([o for o in outs if o.requires_grad], floats, allow_unused=True,
                            grad_outputs=[w for o, w in zip(outs, weights) if o.requires_grad])
        results[be] = ([(o.dtype, to_numpy(o)) for o in outs], [None if g is None else to_numpy(g) for g in grads])
    (co, cg), (bo, bg) = results["cpu"], results[backend]
    for (bd, a), (cd, b) in zip(bo, co):
        assert bd is cd, f"{case.id}: {backend} gives {bd.name} where cpu gives {cd.name}"
        assert_close(a, b, HALF_RTOL, HALF_ATOL, f"{case.id}: {backend} vs cpu forward in float16")
    for a, b in zip(bg, cg):
        if a is not None or b is not None:
            scale = max(1.0, float(np.abs(b.astype(np.float64)).max(initial=0.0)))
            assert_close(a, b, HALF_RTOL, 2 * HALF_ATOL * scale, f"{case.id}: {backend} vs cpu gradient in float16")


def check_native_vjps(case: OpCase):
    """The gradients of ``backward()`` (native VJPs where cpu has them) equal the gradient rules'
    (run with ``create_graph=True``, which uses the rules), float64 on cpu."""
    results = []
    for create_graph in (False, True):
        ts = make_tensors(case.inputs, np.float64, "cpu", requires_grad=True)
        outs = _outputs(case.fn(*ts))
        loss = sum(((o * wg.tensor(np.random.default_rng(k).standard_normal(o.shape))).sum()
                    for k, o in enumerate(outs) if o.requires_grad), wg.zeros((), dtype=wg.float64))
        floats = [t for t in ts if t.requires_grad]
        grads = wg.grad(loss, floats, allow_unused=True, create_graph=create_graph) if loss.requires_grad else ()
        results.append([None if g is None else to_numpy(g) for g in grads])
    for native, rule in zip(*results):
        assert (native is None) == (rule is None), f"{case.id}: VJP and rule disagree on which inputs get gradients"
        if native is not None:
            assert_close(native, rule, 1e-12, 1e-12, f"{case.id}: native VJP vs gradient rule")


def op_tests(cases):
    """Four parametrised tests over ``cases``: forward, finite-difference gradient, backend agreement,
    and the native VJPs against the gradient rules."""
    ids = [c.id for c in cases]
    grad_cases = [c for c in cases if c.grad]

    @pytest.mark.parametrize("case", cases, ids=ids)
    def test_forward(case, backend):
        check_forward(case, backend)

    @pytest.mark.parametrize("case", grad_cases, ids=[c.id for c in grad_cases])
    def test_gradient_fd(case):
        check_grad(case)

    @pytest.mark.parametrize("case", cases, ids=ids)
    def test_backend_agreement(case, backend):
        check_agreement(case, backend)  # on cpu this checks determinism of forward and gradient

    @pytest.mark.parametrize("case", grad_cases, ids=[c.id for c in grad_cases])
    def test_native_vjps(case):
        check_native_vjps(case)

    @pytest.mark.parametrize("dtype", ["float16"])   # deselected on a backend without float16 (conftest)
    @pytest.mark.parametrize("case", cases, ids=ids)
    def test_half_agreement(case, backend, dtype):
        check_half_agreement(case, backend)   # on cpu this checks determinism of forward and gradient

    return {"test_forward": test_forward, "test_gradient_fd": test_gradient_fd,
            "test_backend_agreement": test_backend_agreement, "test_native_vjps": test_native_vjps,
            "test_half_agreement": test_half_agreement}


def torch_reference(fn, **kw):
    """A reference that calls PyTorch's ``fn`` on the numpy inputs (integer arrays become int64,
    as PyTorch's class indices are). Only for test modules that already required torch."""
    import torch

    def ref(*arrays):
        ts = [torch.from_numpy(np.ascontiguousarray(a.astype(np.int64) if a.dtype.kind == "i" else a))
              for a in arrays]
        return fn(*ts, **kw).numpy()
    return ref
