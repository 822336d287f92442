"""``webgrad.Size`` against ``torch.Size``: ``Tensor.shape`` and ``Tensor.size()`` return one on every
backend, and it behaves as PyTorch's (printing, slicing, ``+``/``*``, equality, hashing, pickling,
the errors of its constructor), with ``webgrad`` where PyTorch prints ``torch``."""
import copy
import io
import pickle

import numpy as np
import pytest
import torch

import webgrad as wg


def as_torch_text(text: str) -> str:
    return text.replace("webgrad.", "torch.")


def same(ours, theirs) -> bool:
    """Equal values of the corresponding types: a Size where torch gives a torch.Size, else the same type."""
    if isinstance(theirs, torch.Size):
        return type(ours) is wg.Size and tuple(ours) == tuple(theirs)
    return type(ours) is type(theirs) and ours == theirs


# ---------------------------------------------------------------- Tensor.shape / size() on every backend

SHAPES = [(), (0,), (5,), (2, 3), (2, 1, 4), (1, 2, 3, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shape_and_size_are_sizes_as_torch(backend, shape):
    x, t = wg.zeros(shape), torch.zeros(shape)
    for ours, theirs in [(x.shape, t.shape), (x.size(), t.size())]:
        assert same(ours, theirs)
        assert as_torch_text(repr(ours)) == repr(theirs) and as_torch_text(str(ours)) == str(theirs)
        assert ours.numel() == theirs.numel() == x.numel()
    for d in range(-len(shape), len(shape)):
        assert same(x.size(d), t.size(d)) and same(x.shape[d], t.shape[d])


def test_views_parameters_and_results_have_sizes(backend):
    x = wg.ones(2, 3, requires_grad=True)
    p = wg.nn.Parameter(wg.zeros(4, 2))
    for t in (x.t(), x[0], x.view(3, 2), x.detach(), p, x * 2, (x * 2).sum(), wg.nn.Linear(3, 4).weight):
        assert type(t.shape) is wg.Size and type(t.size()) is wg.Size and t.shape == t.detach().numpy().shape
    (x * x).sum().backward()
    assert type(x.grad.shape) is wg.Size and x.grad.shape == (2, 3)


def test_stride_stays_a_tuple_as_torch():
    assert type(wg.zeros(2, 3).stride()) is type(torch.zeros(2, 3).stride()) is tuple


def test_shape_is_a_new_size_of_the_current_shape(backend):
    x = wg.zeros(2, 3)
    s = x.shape
    x.data = wg.zeros(6)
    assert s == (2, 3) and x.shape == (6,) and type(x.shape) is wg.Size


def test_sizes_are_accepted_where_shapes_are(backend):
    x = wg.ones(2, 3)
    assert wg.zeros(x.shape).shape == (2, 3) and wg.ones(x.size()).shape == (2, 3)
    assert x.view(x.shape[::-1]).shape == (3, 2) and x.reshape(x.size()[1:] + (2,)).shape == (3, 2)
    assert wg.ones(1, 3).expand(x.shape).shape == (2, 3) and x.new_zeros(x.shape).shape == (2, 3)
    assert wg.randn(x.shape).shape == (2, 3) and wg.full(x.shape, 2.0).sum().item() == 12.0


def test_compiled_steps_take_sizes_as_attributes():
    """A Size given to a kernel as an attribute is written into the generated code as its tuple."""
    def step(x):
        y = wg.run_kernel("Reshape", x, shape=x.shape[::-1])   # the Size itself, as the attribute
        return y.expand(wg.Size([2]) + x.shape[::-1]) * 2
    f = wg.compile(step)
    x = wg.arange(6.0, device="cpu").reshape(2, 3)
    for _ in range(3):
        assert f(x).tolist() == step(x).tolist()
    source = "\n".join(entry.source for entry in f.plans.values())
    assert "shape=(3, 2))" in source and "shape=(2, 3, 2)" in source and "Size" not in source, source


# ---------------------------------------------------------------- Size itself, against torch.Size

OPS = {
    "slice": lambda s: s[1:], "reversed": lambda s: s[::-1], "index": lambda s: s[0], "last": lambda s: s[-1],
    "+ tuple": lambda s: s + (4,), "tuple +": lambda s: (4,) + s, "+ Size": lambda s: s + type(s)([5]),
    "* 2": lambda s: s * 2, "2 *": lambda s: 2 * s, "* 0": lambda s: s * 0, "+=": lambda s: _iadd(s, (7,)),
    "== tuple": lambda s: s == (2, 3), "== list": lambda s: s == [2, 3], "!= tuple": lambda s: s != (2, 3),
    "< tuple": lambda s: s < (3,), "hash": lambda s: hash(s) == hash((2, 3)), "numel": lambda s: s.numel(),
    "count": lambda s: s.count(3), "index()": lambda s: s.index(3), "len": lambda s: len(s),
    "in": lambda s: 3 in s, "list": lambda s: list(s), "tuple": lambda s: tuple(s),
    "isinstance tuple": lambda s: isinstance(s, tuple), "json": lambda s: __import__("json").dumps(s),
    "pickle": lambda s: pickle.loads(pickle.dumps(s)), "copy": lambda s: copy.copy(s),
    "deepcopy": lambda s: copy.deepcopy(s), "as dict key": lambda s: {s: 1}[(2, 3)],
    "index by 0-d tensor": lambda s: s[_scalar(s, 1)], "numpy": lambda s: np.array(s).tolist(),
    "%s": lambda s: "%s" % (s,), "format": lambda s: f"{s}", "format !s": lambda s: f"{s!s:>24}".strip(),
}


def _iadd(s, other):
    s += other
    return s


def _scalar(s, v):
    return torch.tensor(v) if isinstance(s, torch.Size) else wg.tensor(v)


@pytest.mark.parametrize("op", OPS, ids=str)
def test_size_ops_as_torch(op):
    ours, theirs = OPS[op](wg.Size([2, 3])), OPS[op](torch.Size([2, 3]))
    if isinstance(theirs, str):
        assert as_torch_text(ours) == theirs
    else:
        assert same(ours, theirs)


ERRORS = {
    "+ list": lambda s: s + [4], "list +": lambda s: [4] + s, "* float": lambda s: s * 2.0,
    "- tuple": lambda s: s - (1,), "index out of range": lambda s: s[5], "index by str": lambda s: s["a"],
    "format spec": lambda s: format(s, ">30"),
}


@pytest.mark.parametrize("op", ERRORS, ids=str)
def test_size_errors_as_torch(op):
    with pytest.raises(Exception) as theirs:
        ERRORS[op](torch.Size([2, 3]))
    with pytest.raises(theirs.type):
        ERRORS[op](wg.Size([2, 3]))


BUILT_FROM = {
    "list": lambda: [2, 3], "tuple": lambda: (2, 3), "empty": lambda: (), "generator": lambda: (i for i in range(3)),
    "bools": lambda: [True, False], "negative": lambda: [-1, 2], "numpy ints": lambda: [np.int64(3), np.int32(4)],
    "range": lambda: range(4), "largest int64": lambda: [2 ** 63 - 1],
}


@pytest.mark.parametrize("what", BUILT_FROM, ids=str)
def test_built_from_ints_as_torch(what):
    assert same(wg.Size(BUILT_FROM[what]()), torch.Size(BUILT_FROM[what]()))


def test_built_from_tensors_and_with_no_argument_as_torch(backend):
    assert same(wg.Size(wg.tensor([3, 4])), torch.Size(torch.tensor([3, 4])))
    assert same(wg.Size([wg.tensor(3), 2]), torch.Size([torch.tensor(3), 2]))
    assert same(wg.Size(), torch.Size()) and repr(wg.Size()) == "webgrad.Size([])"


BAD = {"floats": [2.0], "strings": ["a"], "None": [None], "numpy floats": [np.float32(3)], "an int": 3,
       "nested": [[2]]}


@pytest.mark.parametrize("what", BAD, ids=str)
def test_bad_entries_raise_as_torch(what):
    with pytest.raises(Exception) as theirs:
        torch.Size(BAD[what])
    with pytest.raises(theirs.type) as ours:
        wg.Size(BAD[what])
    if theirs.type is TypeError and what != "an int":   # ours names the item as torch's does
        assert as_torch_text(str(ours.value)) == str(theirs.value).replace("'Tensor'", "'torch.Tensor'")


def test_float_tensor_entries_raise_as_torch(backend):
    with pytest.raises(TypeError):
        torch.Size([torch.tensor(3.0)])
    with pytest.raises(TypeError, match="item 0"):
        wg.Size([wg.tensor(3.0)])


# ---------------------------------------------------------------- where shapes are stored and shown

def test_sizes_round_trip_through_checkpoints(backend):
    x = wg.zeros(2, 3)
    buf = io.BytesIO()
    wg.save({"shape": x.shape, "empty": wg.Size(), "by_shape": {x.shape: x}}, buf)
    buf.seek(0)
    back = wg.load(buf)
    assert same(back["shape"], torch.Size([2, 3])) and same(back["empty"], torch.Size([]))
    assert back["by_shape"][(2, 3)].shape == (2, 3)


def test_error_messages_show_shapes_without_the_class_name(backend):
    x = wg.zeros(2, 3)
    for bad in (lambda: x.view(4, 2), lambda: x + wg.zeros(4), lambda: x @ wg.zeros(2, 3),
                lambda: wg.cat([x, wg.zeros(3, 2)])):
        with pytest.raises(RuntimeError) as e:
            bad()
        assert "Size" not in str(e.value), str(e.value)
