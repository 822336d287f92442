"""Fuzz: dtypes and promotion: casts between every pair of dtypes a backend holds, the dtypes that
creation infers from Python data and arguments, and the result dtype (and values, NaN and inf among
them) of unary math on every dtype, as PyTorch gives them. (Binary promotion, 0-d tensors and Python
scalars included, is fuzzed in test_fuzz_binary.py.)"""
import torch
from hypothesis import assume, strategies as st

import webgrad as wg
from fuzz_check import assert_same_outcome, check_against_torch, deliberate, dtype_name, run, run_fuzz
from fuzz_strategies import INTS, dtypes, inputs, shapes


@st.composite
def cast_cases(draw, backend):
    source, target = draw(dtypes(backend)), draw(dtypes(backend))
    # NaN, inf and floats past the target's range have no defined integer value (C's cast is undefined)
    special = target not in INTS and draw(st.booleans())
    return draw(inputs(source, shapes(0, 3), special=special, backend=backend)), target


def test_casts_match_torch(backend):
    def check(case):
        x, target = case
        check_against_torch(lambda lib, t: t.to(getattr(lib, target)), [x], backend, f"{x.dtype}.to({target})")
    run_fuzz(backend, cast_cases(backend), check, cpu=600, gpu=180)


UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "round", "sign",
         "reciprocal", "square", "relu", "rsqrt", "expm1", "log1p", "logical_not", "erf"]


@st.composite
def unary_cases(draw, backend):
    x = draw(inputs(dtypes(backend), shapes(0, 3), special=draw(st.booleans()), backend=backend))
    return draw(st.sampled_from(UNARY)), x


def test_unary_dtypes_and_values_match_torch(backend):
    def check(case):
        name, x = case
        check_against_torch(lambda lib, t: getattr(lib, name)(t), [x], backend, f"{name}({x.dtype})",
                            scale=1 + 10 * (name in ("exp", "expm1", "reciprocal", "rsqrt", "square")))
    run_fuzz(backend, unary_cases(backend), check, cpu=1000, gpu=300)


def python_data():
    """Nested lists (rectangular) of bools, ints and floats, or a lone scalar."""
    scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.floats(-5, 5, width=32))
    return st.one_of(scalars, st.integers(0, 3).flatmap(lambda n: st.lists(scalars, min_size=n, max_size=n)),
                     st.tuples(st.integers(1, 3), st.integers(0, 3)).flatmap(
                         lambda s: st.lists(st.lists(scalars, min_size=s[1], max_size=s[1]), min_size=s[0],
                                            max_size=s[0])))


@st.composite
def creation_cases(draw, backend):
    kind = draw(st.sampled_from(["tensor", "arange", "full", "like", "linspace"]))
    number = st.one_of(st.integers(-4, 4), st.floats(-4, 4, width=16).filter(lambda v: v == v), st.booleans())
    dtype = draw(st.one_of(st.none(), dtypes(backend)))
    if kind == "tensor":
        return kind, draw(python_data()), dtype
    if kind == "arange":
        start, end, step = draw(number), draw(number), draw(number.filter(lambda v: v))
        assume((end - start) / step < 20)   # some the wrong way: PyTorch refuses those
        return kind, (start, end, step), dtype
    if kind == "linspace":
        return kind, (draw(number), draw(number), draw(st.integers(0, 5))), dtype
    return kind, (draw(shapes(0, 2)), draw(number)), dtype


def _create(lib, kind, args, dtype, backend):
    kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
    device = {} if lib is torch else {"device": backend}
    if kind == "tensor":
        return lib.tensor(args, **kw, **device)
    if kind == "arange":
        return lib.arange(*args, **kw, **device)
    if kind == "linspace":
        return lib.linspace(*args, **kw, **device)
    shape, value = args
    if kind == "full":
        return lib.full(shape, value, **kw, **device)
    return lib.full_like(lib.zeros(shape, dtype=lib.int32, **device), value, **kw)


def test_creation_infers_torchs_dtypes(backend):
    def check(case):
        kind, args, dtype = case
        got = run(wg, lambda lib: _create(lib, kind, args, dtype, backend), [], backend)
        want = run(torch, lambda lib: _create(lib, kind, args, dtype, backend), [])
        if want.error is None and want.dtypes[0] not in {d.name for d in wg.registry.backend(backend).dtypes}:
            assume(False)                       # float64 data on a GPU backend: its refusal is tested elsewhere
        if want.error is not None and deliberate(want.error, want.stage, backend):
            return   # e.g. linspace(dtype=bool), which PyTorch's CPU lacks (webgrad's may refuse the arguments)
        assert_same_outcome(got, want, f"{kind}{args!r} dtype={dtype}", backend)
    run_fuzz(backend, creation_cases(backend), check, cpu=800, gpu=180)


def test_promotion_table_matches_torch():
    """Every pair of dtypes, as tensors with dims, as 0-d tensors and with Python scalars: the result
    dtype of ``a + b`` is ``torch.result_type``'s. (Exhaustive: no budget.)"""
    names = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    scalars = [True, 2, 2.5]
    for a in names:
        for b in names + scalars:
            for dims in ((1, 1), (1, 0), (0, 1), (0, 0)):
                if isinstance(b, str):
                    ta, tb = torch.ones((1,) * dims[0], dtype=getattr(torch, a)), torch.ones((1,) * dims[1],
                                                                                                dtype=getattr(torch, b))
                    wa, wb = wg.ones((1,) * dims[0], dtype=getattr(wg, a)), wg.ones((1,) * dims[1], dtype=getattr(wg, b))
                else:
                    ta, tb = torch.ones((1,) * dims[0], dtype=getattr(torch, a)), b
                    wa, wb = wg.ones((1,) * dims[0], dtype=getattr(wg, a)), b
                assert (wa * wb).dtype.name == dtype_name(ta * tb), f"{a}{dims} * {b!r}"
