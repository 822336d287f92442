"""Fuzz: reductions and scans over None / one dim / a tuple of dims (negative, empty, repeated, out of
range), with and without keepdim, on empty and 0-d tensors of every dtype, NaN and inf among the
values: against PyTorch (values, dtypes, index outputs, gradients with ties, error types) and numpy;
gradients by finite differences."""
import numpy as np
from hypothesis import assume, strategies as st

from fuzz_check import assert_numpy, check_against_torch, run_fuzz
from fuzz_strategies import FLOATS, dim_for, dims_for, dtypes, inputs, shapes
from opinfo import gradcheck

# name -> (the dims its signature takes: "tuple" (an int or a tuple) or "int"; how it takes dim=None:
#          "explicit" (dim=None, keepdim=...), "omitted" (no dim and no keepdim) or "never";
#          whether it takes keepdim; extra keyword arguments drawn from)
REDUCTIONS = {
    "sum": ("tuple", "explicit", True, [{}]), "mean": ("tuple", "explicit", True, [{}]),
    "prod": ("int", "omitted", True, [{}]),
    "amax": ("tuple", "explicit", True, [{}]), "amin": ("tuple", "explicit", True, [{}]),
    "max": ("int", "omitted", True, [{}]), "min": ("int", "omitted", True, [{}]),
    "argmax": ("int", "explicit", True, [{}]), "argmin": ("int", "explicit", True, [{}]),
    "std": ("tuple", "explicit", True, [{}, {"correction": 0}, {"correction": 2}]),
    "var": ("tuple", "explicit", True, [{}, {"correction": 0}]),
    "logsumexp": ("tuple", "never", True, [{}]), "all": ("tuple", "explicit", True, [{}]),
    "any": ("tuple", "explicit", True, [{}]), "count_nonzero": ("tuple", "omitted", False, [{}]),
    "cumsum": ("int", "never", False, [{}]),
    "norm": ("tuple", "explicit", True, [{}, {"p": 1}, {"p": float("inf")}]),
}
# dim=() means every dim, but PyTorch's logsumexp fails there ("output with shape [] doesn't match the
# broadcast shape [1, 1]") and std's and var's backward take it as no dim (their gradients come out
# wrong: std([0., 1.], dim=()) gives [-1, 1], not [-0.5, 0.5]); webgrad's reduce every dim throughout
EMPTY_DIMS_DIFFER = {"logsumexp", "std", "var"}
# NORM_DIMS: PyTorch's norm over three dims or more fails (its default p, "fro", is a matrix norm);
# webgrad's is the vector norm over them
# norm of an integer or bool tensor: webgrad's works on a float32 copy (tested in test_reduce.py);
# PyTorch's refuses
FLOAT_ONLY = {"norm"}

# numpy's answer for the ops it has under the same name and meaning (dims as a tuple, or None)
NUMPY = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.amax, "amin": np.amin,
    "all": np.all, "any": np.any, "cumsum": lambda v, axis: np.cumsum(v, axis=axis),
}


def reduction(name, dim, keepdim, extra):
    """The program ``lib.name(x, dim=dim, keepdim=keepdim, **extra)``, leaving out what is None."""
    kwargs = dict(extra, dim=dim, keepdim=keepdim)
    kwargs = {k: v for k, v in kwargs.items() if v is not None or (k == "dim" and keepdim is not None)}
    return lambda lib, x: getattr(lib, name)(x, **kwargs)


@st.composite
def reduction_cases(draw, backend):
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    takes, none, keeps, extras = REDUCTIONS[name]
    dtype = dtypes(backend, FLOATS) if name in FLOAT_ONLY else dtypes(backend)
    x = draw(inputs(dtype, shapes(0, 4), special=draw(st.integers(0, 3)) == 0, backend=backend))
    dim = draw(dims_for(x.values.ndim, allow_none=none != "never") if takes == "tuple" else
               st.one_of(dim_for(x.values.ndim), *([st.none()] if none != "never" else [])))
    if name in EMPTY_DIMS_DIFFER and dim == ():
        dim = None if x.values.ndim else 0
    if isinstance(dim, tuple) and (name == "norm" or not x.values.size):   # see NORM_DIMS; and PyTorch
        dim = tuple(dict.fromkeys(dim))[:2 if name == "norm" else None]    # finds an empty dim before a repeat
    keepdim = draw(st.booleans()) if keeps and (dim is not None or none == "explicit") else None
    return name, dim, keepdim, draw(st.sampled_from(extras)), x


def _numpy_reference(name, dim, keepdim):
    fn = NUMPY.get(name)
    if fn is None or name == "cumsum":       # numpy's cumsum of a 0-d array has one dim
        return (lambda v: fn(v, axis=dim).reshape(v.shape)) if fn else None
    axis = () if dim == () and name in ("sum", "mean") else dim
    return lambda v: fn(v, axis=axis, keepdims=bool(keepdim))


def check_reduction(backend, case):
    name, dim, keepdim, extra, x = case
    # the GPU backends hold int64 in 32 bits (documented): a product past 2**31 wraps there
    assume(backend == "cpu" or name != "prod" or x.dtype in FLOATS or np.abs(x.values.astype(float)).prod() < 2**31)
    what = f"{name}(x, dim={dim}, keepdim={keepdim}, {extra})"
    scale = 1 + float(np.abs(x.values[np.isfinite(x.values)]).sum()) if x.values.dtype.kind == "f" else 1
    got, want = check_against_torch(reduction(name, dim, keepdim, extra), [x], backend, what, scale=scale)
    ref = _numpy_reference(name, dim, keepdim)
    if want.error is None and ref is not None and dim != () and x.dtype != "bool" and name != "mean":
        with np.errstate(all="ignore"):
            assert_numpy(got, ref(x.values), what, backend, scale=scale)


def test_reductions_match_torch(backend):
    run_fuzz(backend, reduction_cases(backend), lambda case: check_reduction(backend, case), cpu=1600, gpu=360)


# ---------------------------------------------------------------- finite differences (float64, cpu)

SMOOTH = {  # name -> a function of (x, dims) smooth at values without ties
    "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "prod": lambda x, d: x.prod(d[0]),
    "amax": lambda x, d: x.amax(d), "amin": lambda x, d: x.amin(d), "max": lambda x, d: x.max(d[0])[0],
    "std": lambda x, d: x.std(d), "var": lambda x, d: x.var(d, correction=0),
    "logsumexp": lambda x, d: x.logsumexp(d), "norm": lambda x, d: x.norm(dim=d),
    "cumsum": lambda x, d: x.cumsum(d[0]),
}


@st.composite
def smooth_cases(draw):
    name = draw(st.sampled_from(sorted(SMOOTH)))
    shape = draw(shapes(1, 3, 2, 3))
    dims = tuple(draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True)))
    return name, dims, draw(inputs("float64", shape, unique=True, low=-4, high=4))


def test_reduction_gradients_match_finite_differences():
    run_fuzz("cpu", smooth_cases(),
             lambda case: gradcheck(lambda x: SMOOTH[case[0]](x, case[1]), case[2].values, what=case[0]),
             cpu=300, gpu=0)
