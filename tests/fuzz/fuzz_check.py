"""The fuzz suite's oracle: run one program on webgrad and on PyTorch and compare what came out.

A *program* is a function ``program(lib, *tensors)`` written once against PyTorch's API and run with
``lib`` = ``torch`` and ``lib`` = ``webgrad``: the promise under test is that a PyTorch program runs on
webgrad by changing its imports, with PyTorch's numbers. ``check_against_torch`` compares, for every
output, the shape, the dtype and the values (NaN where NaN), the gradients of float inputs, and, when
PyTorch raises, the error's type. ``fuzz`` gives a test its Hypothesis budget.

Budget: each fuzz test runs ``cpu`` examples on the cpu backend and ``gpu`` on a GPU backend (lavapipe is
slow), deterministically (``derandomize=True``: every run tries the same examples). Setting
``WEBGRAD_FUZZ_EXAMPLES=N`` gives every fuzz test N examples on every backend, drawn afresh each run
(derandomised still when ``CI=true``), for long hunts; a failure prints what reproduces it.
"""
from __future__ import annotations

import builtins
import os
import re
import warnings
from typing import NamedTuple, Optional

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings

import webgrad as wg
from fuzz_strategies import FLOATS, GRAD_DTYPES, Input

LONG_BUDGET = os.environ.get("WEBGRAD_FUZZ_EXAMPLES")


def _no_local_constants():
    """Hypothesis mixes into its draws literals it reads from the local modules loaded so far (webgrad's):
    which are loaded depends on what else the session ran, so one fuzz test would draw one set of examples
    alone and another in the whole suite. Without them a test draws the same examples wherever it runs.
    (A private hook of Hypothesis >= 6.131: where it is missing there is nothing to turn off.)"""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        providers._get_local_constants = providers.Constants


_no_local_constants()

class Deliberate(NamedTuple):
    """A difference from PyTorch that is deliberate: where PyTorch raises an error matching ``pattern``
    (at ``stage``, on GPU backends only when ``gpu_only``), webgrad answers, and its answer is checked
    by ``check``: "numpy" (against the test's numpy reference), "forward" (PyTorch's forward, no
    gradients), or "none" (the value is unspecified, as on CUDA)."""
    pattern: re.Pattern
    check: str
    why: str
    stage: str = "forward"
    gpu_only: bool = False


DELIBERATE = [
    Deliberate(re.compile(r"step must be greater than zero"), "numpy",
               "t[::-k]: webgrad takes negative slice steps as numpy does; PyTorch refuses them"),
    Deliberate(re.compile(r"not implemented for '(Half|BFloat16|Bool)'"), "numpy",
               "webgrad's cpu backend runs some ops on float16/bfloat16/bool that PyTorch's CPU build lacks"),
    Deliberate(re.compile(r"derivative for .* is not implemented"), "forward",
               "webgrad has gradients PyTorch lacks (remainder's with respect to its divisor: -floor(a / b))",
               stage="backward"),
    Deliberate(re.compile(r"INTERNAL ASSERT FAILED|the `-` operator, (with|on) a bool tensor"), "forward",
               "PyTorch's own backward fails (pow's and atan2's rules negate or subtract bool inputs, or an "
               "assert trips); webgrad's gradient is checked by finite differences instead", stage="backward"),
    Deliberate(re.compile(r"output of a function that returns multiple views"), "forward",
               "an in-place write into an output of unbind/split/chunk while recording: PyTorch refuses (its "
               "view tracking cannot), webgrad writes through; the values are checked without recording"),
    Deliberate(re.compile(r"ZeroDivisionError"), "none",
               "an integer divided by zero on a GPU backend gives an unspecified value, as on CUDA, since a "
               "shader cannot raise (cpu raises RuntimeError as PyTorch's CPU does)", gpu_only=True),
]
# Where PyTorch refuses a dtype (NotImplementedError or RuntimeError, "... not implemented for 'Float'"),
# webgrad's refusal is a TypeError naming the op and the dtype: also deliberate.
DTYPE_REFUSAL = re.compile(r"not implemented for '")

def fuzz(backend: str, cpu: int, gpu: int):
    """Hypothesis settings for a fuzz test on ``backend``: ``cpu`` or ``gpu`` examples (or
    ``WEBGRAD_FUZZ_EXAMPLES``), no deadline, derandomised unless a long budget asks for fresh draws."""
    n = int(LONG_BUDGET) if LONG_BUDGET else cpu if backend == "cpu" else gpu
    return settings(max_examples=n, deadline=None, database=None, print_blob=True,
                    derandomize=not LONG_BUDGET or os.environ.get("CI") == "true",
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def run_fuzz(backend: str, strategy, check, cpu: int, gpu: int):
    """Run ``check(case)`` on the examples of ``strategy``, under ``fuzz(backend, cpu, gpu)``."""
    @fuzz(backend, cpu, gpu)
    @given(strategy)
    def examples(case):
        check(case)
    examples()


# ---------------------------------------------------------------- running a program


class Outcome(NamedTuple):
    """What a program gave: its outputs as numpy arrays, their dtype names, the gradients of the
    inputs (None where an input got none), or the error it raised and at which stage."""
    outputs: list = []
    dtypes: list = []
    grads: list = []
    error: Optional[BaseException] = None
    stage: str = ""
    devices: list = []


def make_tensor(lib, inp: Input, backend: str, requires_grad=False):
    dtype = getattr(lib, inp.dtype)
    if lib is torch:
        return torch.tensor(inp.values, dtype=dtype, requires_grad=requires_grad)
    return wg.tensor(inp.values, dtype=dtype, backend=backend, requires_grad=requires_grad)


def dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def to_numpy(t) -> np.ndarray:
    """A tensor of either library as numpy: half types widened to float64, others as they are."""
    t = t.detach()
    if isinstance(t, torch.Tensor):
        t = t.float() if t.dtype in (torch.float16, torch.bfloat16) else t
        return t.numpy().copy()
    a = np.asarray(t.numpy())
    return a.astype(np.float64) if dtype_name(t) in ("float16", "bfloat16") else a.copy()


def flat_outputs(out) -> list:
    """The tensors a program returned, in order (tuples and lists flattened, namedtuples too)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_outputs(o)]
    return [out]


def weights(shape, k: int) -> np.ndarray:
    return np.random.default_rng(k).standard_normal(shape)


def _gradients(lib, outs, leaves) -> list:
    wanted = [t for t in leaves if t.requires_grad]
    terms = [(o * lib.tensor(weights(o.shape, k), dtype=o.dtype, device=o.device)).sum()
             for k, o in enumerate(outs) if o.requires_grad and o.is_floating_point()]
    if not wanted or not terms:
        return [None] * len(leaves)
    grads = iter((torch.autograd.grad if lib is torch else wg.grad)(builtins.sum(terms[1:], terms[0]), wanted,
                                                                    allow_unused=True))
    return [next(grads) if t.requires_grad else None for t in leaves]


def run(lib, program, inputs, backend="cpu", grad=False) -> Outcome:
    """Run ``program(lib, *tensors)`` on tensors made from ``inputs``; with ``grad`` (True, or the
    positions of the inputs it covers), float32/float64 inputs require grad and the gradients of
    ``sum(output * w)`` (fixed random ``w``) come back too."""
    wants = range(len(inputs)) if grad is True else grad or ()
    leaves = [make_tensor(lib, i, backend, k in wants and i.dtype in GRAD_DTYPES) for k, i in enumerate(inputs)]
    with warnings.catch_warnings():
        if lib is torch:       # PyTorch's own warnings (a std of one element...) are not under test
            warnings.simplefilter("ignore")
        return _run(lib, program, leaves, grad)


def _run(lib, program, leaves, grad) -> Outcome:
    stage = "forward"
    try:
        outs = flat_outputs(program(lib, *leaves))
        devices = [str(o.device) for o in outs]
        stage = "backward"
        grads = _gradients(lib, outs, leaves) if grad else []
        stage = "readback"        # a GPU backend reports a refused index at the first readback
        return Outcome([to_numpy(o) for o in outs], [dtype_name(o) for o in outs],
                       [None if g is None else to_numpy(g) for g in grads], devices=devices)
    except Exception as e:          # the error is the outcome, compared with PyTorch's
        return Outcome(error=e, stage=stage)


# ---------------------------------------------------------------- comparing


def builtin_error(e: BaseException) -> type:
    """The nearest built-in exception class of ``e`` (torch's own error classes derive from them)."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def deliberate(error: BaseException, stage: str, backend: str) -> Optional[Deliberate]:
    """The deliberate difference that covers PyTorch's ``error`` at ``stage`` on ``backend``, or None."""
    return next((d for d in DELIBERATE if d.pattern.search(str(error)) and d.stage == stage
                 and (backend != "cpu" or not d.gpu_only)), None)


TOLERANCE = {  # dtype -> (rtol, atol) on cpu; GPU float32 gets GPU_FLOAT32
    "float64": (1e-9, 1e-9), "float32": (1e-5, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
}
GPU_FLOAT32 = (2e-4, 2e-4)


def tolerance(dtype: str, backend: str, scale=1.0):
    rtol, atol = GPU_FLOAT32 if backend != "cpu" and dtype == "float32" else TOLERANCE.get(dtype, (0, 0))
    return rtol, atol * scale


def assert_values(got: np.ndarray, want: np.ndarray, dtype: str, backend: str, what: str, scale=1.0):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    if dtype in FLOATS:
        rtol, atol = tolerance(dtype, backend, scale)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def assert_same_error(got: Outcome, want: Outcome, what: str):
    expected = builtin_error(want.error)
    assert got.error is not None, (f"{what}: PyTorch raised {expected.__name__} at {want.stage} "
                                   f"({want.error}); webgrad returned {got.dtypes} {[o.shape for o in got.outputs]}")
    if isinstance(got.error, TypeError) and DTYPE_REFUSAL.search(str(want.error)):
        return
    assert isinstance(got.error, expected), (
        f"{what}: webgrad raised {type(got.error).__name__} ({got.error}) at {got.stage}; "
        f"PyTorch raises {expected.__name__} ({want.error}) at {want.stage}")


def assert_same_outcome(got: Outcome, want: Outcome, what: str, backend: str, scale=1.0):
    """webgrad's outcome equals PyTorch's: the same error type, or the same outputs and gradients."""
    if want.error is not None:
        assert_same_error(got, want, what)
        return
    if got.error is not None:
        raise AssertionError(f"{what}: webgrad raised {type(got.error).__name__} at {got.stage}: {got.error}; "
                             f"PyTorch gave {want.dtypes} {[o.shape for o in want.outputs]}") from got.error
    assert len(got.outputs) == len(want.outputs), f"{what}: {len(got.outputs)} outputs, PyTorch's {len(want.outputs)}"
    assert got.dtypes == want.dtypes, f"{what}: dtypes {got.dtypes}, PyTorch's {want.dtypes}"
    assert all(d == backend for d in got.devices), f"{what}: outputs on {got.devices}, not {backend}"
    for k, (g, w, d) in enumerate(zip(got.outputs, want.outputs, want.dtypes)):
        assert_values(g, w, d, backend, f"{what}: output {k}", scale)
    for k, (g, w) in enumerate(zip(got.grads, want.grads)):
        if w is None:
            assert g is None or not np.any(g), f"{what}: input {k} got a gradient, PyTorch's has none"
            continue
        g = np.zeros_like(w) if g is None else g   # a gradient flows through the outputs' precision too
        precision = max([str(w.dtype)] + want.dtypes, key=lambda d: TOLERANCE.get(d, (0, 0)))
        assert_values(g, w, precision, backend, f"{what}: gradient of input {k}", scale)


def check_against_torch(program, inputs, backend, what, grad=True, numpy_ref=None, scale=1.0, excuse=None):
    """Run ``program`` on both libraries and assert webgrad's outcome is PyTorch's, or, where PyTorch
    raises for a reason listed in ``DELIBERATE``, that webgrad's answer passes that entry's check
    (``numpy_ref(*values)`` gives numpy's result or tuple of results), or that ``excuse(got, want)``
    names a deliberate difference of the test's own. Returns webgrad's outcome and PyTorch's."""
    want = run(torch, program, inputs, "cpu", grad)
    got = run(wg, program, inputs, backend, grad)
    what = f"{what} on {backend}"
    rule = deliberate(want.error, want.stage, backend) if want.error is not None and got.error is None else None
    if excuse is not None and excuse(got, want):
        return got, want
    if rule is None:
        assert_same_outcome(got, want, what, backend, scale)
    elif rule.check == "numpy":
        assert numpy_ref is not None, f"{what}: {rule.why}, but the test gave no numpy reference to check it by"
        with np.errstate(all="ignore"):
            assert_numpy(got, numpy_ref(*[i.values for i in inputs]), what, backend, scale)
    elif rule.check == "forward":
        forward = run(wg, program, inputs, backend)
        assert_same_outcome(forward, run(torch, program, inputs), what, backend, scale)
    return got, want


def assert_numpy(got: Outcome, expected, what: str, backend: str, scale=1.0):
    """webgrad's outputs equal numpy's ``expected`` (an array or a tuple of arrays), compared in the
    dtype webgrad gave."""
    if got.error is not None:
        raise AssertionError(f"{what}: webgrad raised {type(got.error).__name__}: {got.error}") from got.error
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(got.outputs) == len(expected), f"{what}: {len(got.outputs)} outputs, numpy's {len(expected)}"
    for k, (g, e, d) in enumerate(zip(got.outputs, expected, got.dtypes)):
        assert_values(g, np.asarray(e), d, backend, f"{what}: output {k} against numpy", scale)
