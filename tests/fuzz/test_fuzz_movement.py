"""Fuzz: movement ops (reshape, view, transpose, permute, expand, squeeze, unsqueeze, flip, movedim,
flatten, unflatten, narrow, select, split, chunk, unbind, repeat, tile, roll, diagonal, tril/triu, cat,
stack, ...) with arguments that fit and some that do not, on tensors of every dtype including empty and
0-d ones: against PyTorch (values, dtypes, gradients, error types), and, through an in-place write into
the result, whether it is a view of its input as PyTorch's is."""
import numpy as np
from hypothesis import assume, strategies as st

import webgrad as wg
from fuzz_check import check_against_torch, run_fuzz
from fuzz_strategies import MAX_SIDE, dim_for, dtypes, inputs, shapes
from opinfo import gradcheck


@st.composite
def new_shape(draw, shape):
    """A shape with ``shape``'s number of elements (one size now and then -1), or now and then one without."""
    n = int(np.prod(shape))
    sizes = []
    rest = n
    for _ in range(draw(st.integers(0, 3))):
        divisors = [d for d in range(1, MAX_SIDE + 1) if rest % d == 0] if rest else [0, 1, 2]
        sizes.append(draw(st.sampled_from(divisors)))
        rest = rest // sizes[-1] if sizes[-1] else rest
    sizes.append(rest if n else draw(st.sampled_from([0, 1, 3])))
    if 0 not in sizes and draw(st.integers(0, 3)) == 0:
        sizes[draw(st.integers(0, len(sizes) - 1))] = -1
    if draw(st.integers(0, 9)) == 0:
        sizes.append(2)                                                   # does not fit (or -1 twice)
    return tuple(draw(st.permutations(sizes)))


@st.composite
def expand_sizes(draw, shape):
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    sizes = [draw(st.sampled_from([s, -1] + ([0, 2, 3] if s == 1 else []))) for s in shape]
    if sizes and draw(st.integers(0, 9)) == 0:
        sizes[draw(st.integers(0, len(sizes) - 1))] = shape[0] + 2                        # does not fit
    return lead + tuple(sizes)


def _perm(draw, ndim):
    perm = list(draw(st.permutations(range(ndim))))
    if draw(st.integers(0, 9)) == 0:
        perm = perm[:-1] if perm and draw(st.booleans()) else perm + [0]              # does not fit
    return tuple(d - ndim if draw(st.booleans()) else d for d in perm)


# name -> a function of (draw, shape) returning (the op's text, program(lib, x))
def _reshape(draw, shape):
    s = draw(new_shape(shape))
    return f"reshape{s}", lambda lib, x: x.reshape(s)


def _view(draw, shape):
    s = draw(new_shape(shape))
    if draw(st.booleans()) and len(shape) == 2:   # a transposed tensor: view may refuse its strides
        return f"t().view{s}", lambda lib, x: x.t().view(s)
    return f"view{s}", lambda lib, x: x.view(s)


def _transpose(draw, shape):
    a, b = draw(dim_for(len(shape))), draw(dim_for(len(shape)))
    return f"transpose({a}, {b})", lambda lib, x: x.transpose(a, b)


def _permute(draw, shape):
    p = _perm(draw, len(shape))
    return f"permute{p}", lambda lib, x: x.permute(p)


def _expand(draw, shape):
    s = draw(expand_sizes(shape))
    return f"expand{s}", lambda lib, x: x.expand(s)


def _squeeze(draw, shape):
    dim = draw(st.one_of(st.none(), dim_for(len(shape)),
                         st.lists(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1), max_size=3, unique=True)
                         .map(tuple)))
    return f"squeeze({dim})", (lambda lib, x: x.squeeze()) if dim is None else (lambda lib, x: x.squeeze(dim))


def _unsqueeze(draw, shape):
    d = draw(st.integers(-len(shape) - 2, len(shape) + 1))
    return f"unsqueeze({d})", lambda lib, x: x.unsqueeze(d)


def _flip(draw, shape):
    dims = tuple(draw(st.lists(dim_for(len(shape)), max_size=len(shape) + 1)))
    return f"flip({dims})", lambda lib, x: x.flip(dims)


def _movedim(draw, shape):
    n = len(shape)
    k = draw(st.integers(0, n))
    src = tuple(draw(st.permutations(range(n)))[:k])
    dst = tuple(draw(st.permutations(range(n)))[:k])
    return f"movedim({src}, {dst})", lambda lib, x: lib.movedim(x, src, dst)


def _flatten(draw, shape):
    a, b = draw(dim_for(len(shape))), draw(dim_for(len(shape)))
    return f"flatten({a}, {b})", lambda lib, x: x.flatten(a, b)


def _unflatten(draw, shape):
    d = draw(dim_for(len(shape)))
    n = shape[d] if shape and -len(shape) <= d < len(shape) else 1
    sizes = draw(new_shape((n,)))
    return f"unflatten({d}, {sizes})", lambda lib, x: x.unflatten(d, sizes)


def _narrow(draw, shape):
    d = draw(dim_for(len(shape)))
    n = shape[d] if shape and -len(shape) <= d < len(shape) else 0
    start, length = draw(st.integers(-n - 1, n + 1)), draw(st.integers(0, n + 1))
    return f"narrow({d}, {start}, {length})", lambda lib, x: x.narrow(d, start, length)


def _select(draw, shape):
    d = draw(dim_for(len(shape)))
    n = shape[d] if shape and -len(shape) <= d < len(shape) else 0
    i = draw(st.integers(-n - 1, n))
    return f"select({d}, {i})", lambda lib, x: x.select(d, i)


def _split(draw, shape):
    d = draw(dim_for(len(shape)))
    n = shape[d] if shape and -len(shape) <= d < len(shape) else 0
    arg = draw(st.one_of(st.integers(1, 3), st.lists(st.integers(0, n), max_size=3).map(
        lambda ls: ls + [n - sum(ls)] if sum(ls) <= n and draw(st.integers(0, 9)) else ls)))
    return f"split({arg}, {d})", lambda lib, x: x.split(arg, d)


def _chunk(draw, shape):
    k, d = draw(st.integers(1, 5)), draw(dim_for(len(shape)))
    return f"chunk({k}, {d})", lambda lib, x: x.chunk(k, d)


def _unbind(draw, shape):
    d = draw(dim_for(len(shape)))
    return f"unbind({d})", lambda lib, x: x.unbind(d)


def _repeat(draw, shape):
    sizes = tuple(draw(st.lists(st.integers(0, 3), min_size=max(len(shape) - 1, 0), max_size=len(shape) + 2)))
    return f"repeat{sizes}", lambda lib, x: x.repeat(sizes)


def _tile(draw, shape):
    sizes = tuple(draw(st.lists(st.integers(0, 3), max_size=len(shape) + 1)))
    return f"tile({sizes})", lambda lib, x: lib.tile(x, sizes)


def _roll(draw, shape):
    if draw(st.booleans()):
        s = draw(st.integers(-5, 5))
        return f"roll({s})", lambda lib, x: x.roll(s)
    dims = tuple(draw(st.lists(dim_for(len(shape)), min_size=1, max_size=3)))
    shifts = tuple(draw(st.lists(st.integers(-5, 5), min_size=len(dims), max_size=len(dims))))
    return f"roll({shifts}, {dims})", lambda lib, x: x.roll(shifts, dims)


def _diagonal(draw, shape):
    off, a, b = draw(st.integers(-3, 3)), draw(dim_for(len(shape))), draw(dim_for(len(shape)))
    return f"diagonal({off}, {a}, {b})", lambda lib, x: x.diagonal(off, a, b)


def _triangle(draw, shape):
    name, k = draw(st.sampled_from(["tril", "triu"])), draw(st.integers(-3, 3))
    return f"{name}({k})", lambda lib, x: getattr(x, name)(k)


def _broadcast_to(draw, shape):
    s = tuple(abs(v) if v != -1 else 1 for v in draw(expand_sizes(shape)))
    return f"broadcast_to({s})", lambda lib, x: lib.broadcast_to(x, s)


def _swap(draw, shape):
    name, a, b = draw(st.sampled_from(["swapaxes", "swapdims"])), draw(dim_for(len(shape))), draw(dim_for(len(shape)))
    return f"{name}({a}, {b})", lambda lib, x: getattr(x, name)(a, b)


def _t(draw, shape):
    name = draw(st.sampled_from(["t", "T", "mT", "contiguous", "clone"]))
    return name, (lambda lib, x: x.t()) if name == "t" else (lambda lib, x: getattr(x, name)) \
        if name in ("T", "mT") else (lambda lib, x: getattr(x, name)())


MOVES = {f.__name__.lstrip("_"): f for f in (
    _reshape, _view, _transpose, _permute, _expand, _squeeze, _unsqueeze, _flip, _movedim, _flatten, _unflatten,
    _narrow, _select, _split, _chunk, _unbind, _repeat, _tile, _roll, _diagonal, _triangle, _broadcast_to, _swap,
    _t)}


@st.composite
def move_cases(draw, backend):
    x = draw(inputs(dtypes(backend), shapes(0, 4), backend=backend))
    name = draw(st.sampled_from(sorted(MOVES)))
    text, program = MOVES[name](draw, x.shape)
    return text, program, x, draw(st.booleans())


def written_through(program):
    """``program`` on a copy ``y`` of ``x``, followed by an in-place write into each of its results:
    returns ``y`` after the writes (changed exactly where the results are views of ``y``) and the results."""
    def through(lib, x):
        y = x.clone()
        outs = program(lib, y)
        for o in outs if isinstance(outs, (tuple, list)) else [outs]:
            o.mul_(2) if o.dtype != lib.bool else o.fill_(True)
        return y, outs
    return through


def check_move(backend, case):
    text, program, x, write = case
    if write:
        check_against_torch(written_through(program), [x], backend, f"x.{text}, then written into")
    else:
        check_against_torch(program, [x], backend, f"x.{text}")


def test_movement_ops_match_torch(backend):
    run_fuzz(backend, move_cases(backend), lambda case: check_move(backend, case), cpu=1800, gpu=360)


@st.composite
def join_cases(draw, backend):
    name = draw(st.sampled_from(["cat", "stack", "concat"]))
    shape = draw(shapes(0, 3))
    dim = draw(dim_for(len(shape) + (name == "stack")))
    tensors = []
    for _ in range(draw(st.integers(1, 3))):
        s = list(shape)
        if s and draw(st.booleans()) and name in ("cat", "concat") and -len(s) <= dim < len(s):
            s[dim] = draw(st.integers(0, 3))                     # the joined dim may differ
        if draw(st.integers(0, 14)) == 0:
            s = draw(shapes(0, 3))                                 # may not fit
        tensors.append(draw(inputs(dtypes(backend), tuple(s), backend=backend)))
    return name, dim, tensors


def check_join(backend, case):
    name, dim, tensors = case
    check_against_torch(lambda lib, *ts: getattr(lib, name)(ts, dim), tensors, backend, f"{name}(..., {dim})")


def test_cat_and_stack_match_torch(backend):
    run_fuzz(backend, join_cases(backend), lambda case: check_join(backend, case), cpu=800, gpu=180)


# ---------------------------------------------------------------- finite differences (float64, cpu)

@st.composite
def smooth_move_cases(draw):
    x = draw(inputs("float64", shapes(1, 3, 1, 3)))
    name = draw(st.sampled_from(sorted(set(MOVES) - {"view", "unbind", "split", "chunk"})))
    text, program = MOVES[name](draw, x.shape)
    return text, program, x


def check_gradient(case):
    text, program, x = case
    try:
        program(wg, wg.tensor(x.values))
    except (IndexError, RuntimeError, ValueError, TypeError):
        assume(False)                                 # refused arguments have no gradient to check
    gradcheck(lambda t: program(wg, t), x.values, what=text)


def test_movement_gradients_match_finite_differences():
    run_fuzz("cpu", smooth_move_cases(), check_gradient, cpu=450, gpu=0)
