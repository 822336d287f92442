"""Fuzz: matmul (and ``@``, mm, bmm, dot, outer, einsum) over 1-d, 2-d and batched operands whose
batch dims broadcast, empty ones included, inner sizes that match and some that do not, every dtype:
against PyTorch (values, dtypes, gradients, error types) and numpy; gradients by finite differences."""
import numpy as np
import torch
from hypothesis import strategies as st

from fuzz_check import assert_numpy, check_against_torch, run_fuzz
from fuzz_strategies import dtypes, inputs
from opinfo import gradcheck

PROGRAMS = {
    "matmul": lambda lib, a, b: lib.matmul(a, b), "a @ b": lambda lib, a, b: a @ b,
    "mm": lambda lib, a, b: lib.mm(a, b), "bmm": lambda lib, a, b: lib.bmm(a, b),
    "dot": lambda lib, a, b: lib.dot(a, b), "outer": lambda lib, a, b: lib.outer(a, b),
    "einsum ...ij,...jk": lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b),
}
RANKS = {"mm": (2, 2), "bmm": (3, 3), "dot": (1, 1), "outer": (1, 1), "einsum ...ij,...jk": (2, 4)}


@st.composite
def operand_shapes(draw, name):
    """Shapes for ``name``: ranks it takes, an inner size that matches (now and then not), batch dims
    that broadcast (now and then not), sizes from 0."""
    low, high = RANKS.get(name, (1, 4))
    ra, rb = draw(st.integers(low, high)), draw(st.integers(low, high))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    k2 = k if draw(st.integers(0, 9)) else draw(st.integers(0, 5))
    if name == "outer":
        return (m,), (n,)
    if name == "bmm":
        batch = draw(st.integers(0, 3))
        return (batch, m, k), (batch if draw(st.integers(0, 9)) else batch + 1, k2, n)
    nb = max(ra, rb, 2) - 2
    batch = tuple(draw(st.lists(st.integers(0, 3), min_size=nb, max_size=nb)))
    a_batch = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in batch[len(batch) - max(ra - 2, 0):])
    b_batch = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in batch[len(batch) - max(rb - 2, 0):])
    a = (k,) if ra == 1 else a_batch + (m, k)
    b = (k2,) if rb == 1 else b_batch + (k2, n)
    return a, b


# bool operands: webgrad refuses them (TypeError, as PyTorch's non-empty products do); PyTorch's empty
# products of bools succeed without looking at the dtype
NUMERIC = ("int32", "int64", "float16", "bfloat16", "float32", "float64")
NUMPY = {"matmul": np.matmul, "a @ b": np.matmul, "mm": np.matmul, "bmm": np.matmul, "dot": np.dot,
         "outer": np.outer, "einsum ...ij,...jk": lambda a, b: np.einsum("...ij,...jk->...ik", a, b)}


@st.composite
def matmul_cases(draw, backend):
    name = draw(st.sampled_from(sorted(PROGRAMS)))
    sa, sb = draw(operand_shapes(name))
    da = draw(dtypes(backend, NUMERIC))
    db = da if draw(st.integers(0, 4)) else draw(dtypes(backend, NUMERIC))
    return name, draw(inputs(da, sa, backend=backend)), draw(inputs(db, sb, backend=backend))


def promoted(program):
    """``program`` with PyTorch's operands first cast to one dtype: webgrad's products promote operands
    of different dtypes (documented in core/ops/linalg.py); PyTorch's refuse them (and give an empty
    product of two dtypes one of them)."""
    def run(lib, a, b):
        if lib is torch and a.dtype != b.dtype:
            dtype = torch.promote_types(a.dtype, b.dtype)
            a, b = a.to(dtype), b.to(dtype)
        return program(lib, a, b)
    return run


def check_matmul(backend, case):
    name, a, b = case
    k = a.shape[-1] if a.shape else 1
    got, want = check_against_torch(promoted(PROGRAMS[name]), [a, b], backend, name, scale=1 + 8 * 8 * k)
    if want.error is None:
        assert_numpy(got, NUMPY[name](a.values, b.values), name, backend, scale=1 + 8 * 8 * k)


def test_matmul_matches_torch(backend):
    run_fuzz(backend, matmul_cases(backend), lambda case: check_matmul(backend, case), cpu=1000, gpu=300)


@st.composite
def smooth_cases(draw):
    name = draw(st.sampled_from(sorted(PROGRAMS)))
    sa, sb = draw(operand_shapes(name).filter(lambda s: _fits(name, *s)))
    return name, draw(inputs("float64", sa, low=-2, high=2)), draw(inputs("float64", sb, low=-2, high=2))


def _fits(name, sa, sb):
    try:
        np.matmul(np.zeros(sa), np.zeros(sb)) if name not in ("outer", "dot") else None
    except ValueError:
        return False
    return (name != "bmm" or sa[0] == sb[0]) and (name != "dot" or sa == sb) and 0 < np.prod(sa) * np.prod(sb) <= 64


def test_matmul_gradients_match_finite_differences():
    import webgrad as wg
    run_fuzz("cpu", smooth_cases(),
             lambda case: gradcheck(lambda a, b: PROGRAMS[case[0]](wg, a, b), case[1].values, case[2].values,
                                    what=case[0]), cpu=300, gpu=0)
