"""Movement ops: forward vs numpy, finite-difference gradients (first and second order), bad input."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, assert_close, gradgradcheck, op_tests

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def np_pad(x, pad, mode="constant", value=0.0):
    """numpy reference for torch's pad order (last dim first)."""
    k = len(pad) // 2
    pads = [(0, 0)] * (x.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    if mode == "constant":
        crop = tuple(slice(max(0, -lo), x.shape[d] - max(0, -hi)) for d, (lo, hi) in enumerate(pads))
        pos = [(max(0, lo), max(0, hi)) for lo, hi in pads]
        return np.pad(x[crop], pos, mode="constant", constant_values=value)
    return np.pad(x, pads, mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode))


def np_repeat(x, *sizes):
    return np.tile(x.reshape((1,) * (len(sizes) - x.ndim) + x.shape), sizes)


CASES = [
    OpCase("reshape", lambda x: x.reshape(3, -1), lambda x: x.reshape(3, -1), [r(2, 3)]),
    OpCase("reshape", lambda x: x.reshape(1), lambda x: x.reshape(1), [r()]),
    OpCase("reshape", lambda x: x.reshape(3, 0), lambda x: x.reshape(3, 0), [r(0, 3)]),
    OpCase("reshape", lambda x: x.reshape(-1), lambda x: x.reshape(-1), [r(40, 30)], grad=False),
    OpCase("view", lambda x: x.view((4, 3)), lambda x: x.reshape(4, 3), [r(2, 6)]),
    OpCase("flatten", lambda x: x.flatten(1), lambda x: x.reshape(2, -1), [r(2, 3, 2)]),
    OpCase("flatten", lambda x: wg.flatten(x), lambda x: x.reshape(1), [r()]),
    OpCase("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.reshape(2, 2, 3), [r(2, 6)]),
    OpCase("squeeze", lambda x: x.squeeze(), lambda x: x.squeeze(), [r(1, 3, 1)]),
    OpCase("squeeze", lambda x: x.squeeze((0, 1)), lambda x: x.squeeze(0), [r(1, 3, 1)]),
    OpCase("unsqueeze", lambda x: x.unsqueeze(-1), lambda x: x[..., None], [r(2, 3)]),
    OpCase("transpose", lambda x: x.transpose(0, 2), lambda x: x.transpose(2, 1, 0), [r(2, 3, 4)]),
    OpCase("transpose", lambda x: x.transpose(1, 0), lambda x: x.T, [r(37, 41)], grad=False),
    OpCase("swapaxes", lambda x: wg.swapaxes(x, -1, 0), lambda x: np.swapaxes(x, -1, 0), [r(2, 3)]),
    OpCase("permute", lambda x: x.permute(1, 2, 0), lambda x: x.transpose(1, 2, 0), [r(2, 3, 4)]),
    OpCase("movedim", lambda x: x.movedim(0, -1), lambda x: np.moveaxis(x, 0, -1), [r(2, 3, 4)]),
    OpCase("T", lambda x: x.T, lambda x: x.T, [r(2, 3, 4)]),
    OpCase("mT", lambda x: x.mT, lambda x: np.swapaxes(x, -1, -2), [r(2, 3, 4)]),
    OpCase("expand", lambda x: x.expand(2, -1, 3), lambda x: np.broadcast_to(x, (2, 4, 3)), [r(4, 1)]),
    OpCase("expand", lambda x: x.expand(3), lambda x: np.broadcast_to(x, (3,)), [r()]),
    OpCase("broadcast_to", lambda x: wg.broadcast_to(x, (2, 3)), lambda x: np.broadcast_to(x, (2, 3)), [r(3)]),
    OpCase("expand_as", lambda x, y: x.expand_as(y), lambda x, y: np.broadcast_to(x, y.shape), [r(3), r(2, 3)]),
    OpCase("expand", lambda x: x.expand(1000, 3), lambda x: np.broadcast_to(x, (1000, 3)), [r(3)], grad=False),
    OpCase("contiguous", lambda x: x.contiguous(), lambda x: x, [r(2, 3)]),
    OpCase("clone", lambda x: x.clone(), lambda x: x.copy(), [r(2, 3)]),
    OpCase("cat", lambda a, b, c: wg.cat([a, b, c], 1), lambda a, b, c: np.concatenate([a, b, c], 1),
           [r(2, 1), r(2, 3), r(2, 2)]),
    OpCase("cat", lambda a, b: wg.cat([a, b]), lambda a, b: np.concatenate([a, b]), [r(0, 3), r(2, 3)]),
    OpCase("cat", lambda a, b: wg.concat([a, b], -1), lambda a, b: np.concatenate([a, b], -1),
           [r(30, 17), r(30, 20)], grad=False),
    OpCase("stack", lambda a, b: wg.stack([a, b], -1), lambda a, b: np.stack([a, b], -1), [r(2, 3), r(2, 3)]),
    OpCase("stack", lambda a, b: wg.stack([a, b]), lambda a, b: np.stack([a, b]), [r(), r()]),
    OpCase("split", lambda x: x.split(2, 1), lambda x: tuple(np.split(x, [2, 4], 1)), [r(2, 5)]),
    OpCase("split", lambda x: wg.split(x, [1, 3]), lambda x: tuple(np.split(x, [1])), [r(4, 2)]),
    OpCase("split_one_piece_used", lambda x: x.split(2, 1)[1] * 3, lambda x: np.split(x, [2, 4], 1)[1] * 3, [r(2, 5)]),
    OpCase("split_whole", lambda x: x.split(5, 1)[0] * 2, lambda x: x * 2, [r(2, 5)]),
    OpCase("chunk", lambda x: x.chunk(3), lambda x: tuple(np.split(x, [2, 4])), [r(5)]),
    OpCase("narrow", lambda x: x.narrow(1, -3, 2), lambda x: x[:, 2:4], [r(2, 5)]),
    OpCase("flip", lambda x: x.flip((0, 2)), lambda x: x[::-1, :, ::-1], [r(2, 3, 4)]),
    OpCase("flip", lambda x: x.flip(0), lambda x: x[::-1], [r(1001)], grad=False),
    OpCase("roll", lambda x: x.roll(2), lambda x: np.roll(x, 2), [r(2, 3)]),
    OpCase("roll", lambda x: x.roll((1, -1), (0, 1)), lambda x: np.roll(x, (1, -1), (0, 1)), [r(3, 4)]),
    OpCase("repeat", lambda x: x.repeat(2, 1, 3), lambda x: np_repeat(x, 2, 1, 3), [r(2, 3)]),
    OpCase("repeat", lambda x: x.repeat(2), lambda x: np_repeat(x, 2), [r()]),
    OpCase("tile", lambda x: x.tile((2,)), lambda x: np.tile(x, 2), [r(2, 3)]),
    OpCase("pad", lambda x: wg.pad(x, (1, 2, 0, 1), value=0.5), lambda x: np_pad(x, (1, 2, 0, 1), value=0.5),
           [r(2, 3)]),
    OpCase("pad", lambda x: wg.pad(x, (-1, 2)), lambda x: np_pad(x, (-1, 2)), [r(2, 3)]),
    OpCase("pad", lambda x: wg.pad(x, (2, 2, 2, 2)), lambda x: np_pad(x, (2, 2, 2, 2)), [r(31, 33)], grad=False),
    OpCase("pad_reflect", lambda x: wg.pad(x, (2, 1, 1, 1), mode="reflect"),
           lambda x: np_pad(x, (2, 1, 1, 1), "reflect"), [r(3, 4)]),
    OpCase("pad_replicate", lambda x: wg.pad(x, (4, 1), mode="replicate"),
           lambda x: np_pad(x, (4, 1), "replicate"), [r(2, 3)]),
    OpCase("pad_circular", lambda x: wg.pad(x, (2, 3), mode="circular"),
           lambda x: np_pad(x, (2, 3), "circular"), [r(2, 3)]),
    OpCase("tril", lambda x: x.tril(), np.tril, [r(3, 4)]),
    OpCase("tril", lambda x: wg.tril(x, -1), lambda x: np.tril(x, -1), [r(2, 3, 3)]),
    OpCase("triu", lambda x: x.triu(1), lambda x: np.triu(x, 1), [r(4, 3)]),
    OpCase("triu", lambda x: x.triu(), np.triu, [r(40, 30)], grad=False),
]

globals().update(op_tests(CASES))

SECOND_ORDER = [c for c in CASES if c.id in ("reshape-2x3", "transpose-2x3x4", "expand-4x1", "cat-2x1_2x3_2x2",
                                             "flip-2x3x4", "repeat-2x3", "pad-2x3", "pad_reflect-3x4")]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.id for c in SECOND_ORDER])
def test_second_order(case):
    gradgradcheck(case.fn, *case.inputs, what=case.id)


def test_integer_and_bool_dtypes_are_kept():
    x = wg.tensor([[True, False], [False, True]])
    assert x.T.dtype is wg.bool and wg.cat([x, x]).dtype is wg.bool
    assert wg.pad(wg.tensor([1, 2]), (1, 1), value=7).tolist() == [7, 1, 2, 7]
    assert wg.arange(6).reshape(2, 3).flip(1).tolist() == [[2, 1, 0], [5, 4, 3]]


NOOP_MOVEMENT = ["x.reshape(2, 3)", "x.view(2, 3)", "x.view_as(x)", "x.permute(0, 1)", "x.transpose(0, 0)",
                 "x.expand(2, 3)", "x.expand_as(x)", "x.broadcast_to((2, 3))", "x.squeeze()", "x[:]", "x[...]",
                 "x.narrow(0, 0, 2)", "x.movedim(0, 0)", "x.split(2)[0]", "x.flatten(1)", "x.contiguous()",
                 "x.clone()", "x.to(x.dtype)", "x.float()", "x.detach()"]


@pytest.mark.parametrize("expr", NOOP_MOVEMENT)
def test_noop_movement_is_a_new_tensor_where_torch_makes_one(expr, backend):
    """PyTorch's view ops return a new tensor (a view) even when they change nothing; flatten, contiguous and
    to() return their input then. Which is which is observable (``y is x``, ``y.is_leaf``, hooks on y)."""
    torch = pytest.importorskip("torch")
    x, t = wg.zeros(2, 3, requires_grad=True), torch.zeros(2, 3, requires_grad=True)
    y, u = eval(expr, {"x": x}), eval(expr, {"x": t})
    assert (y is x) == (u is t) and y.is_leaf == u.is_leaf and y.requires_grad == u.requires_grad


def test_t_is_a_property_and_gradients_flow_through_it():
    x = wg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    (x.T * wg.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 3.0]]


def test_strided_slice_gradient_has_a_second_order():
    x = wg.tensor(np.arange(7.0), dtype=wg.float64, requires_grad=True)
    y = (wg.flip(x, 0).narrow(0, 1, 5) ** 2).sum()
    (g,) = wg.grad(y, x, create_graph=True)
    assert_close(g, [0, 2, 4, 6, 8, 10, 0])
    (gg,) = wg.grad(g.sum(), x)
    assert_close(gg, [0, 2, 2, 2, 2, 2, 0])


@pytest.mark.parametrize("call, match", [
    (lambda: wg.zeros(6).reshape(5), r"reshape: shape \(5,\) is invalid for input of size 6"),
    (lambda: wg.zeros(6).view(-1, -1), "view: only one dimension can be -1"),
    (lambda: wg.zeros(2, 3).transpose(0, 2), "transpose: dim 2 is out of range"),
    (lambda: wg.zeros(2, 3).permute(0, 0), "permute: dims"),
    (lambda: wg.zeros(2, 3).permute(0), "permute: got 1 dims"),
    (lambda: wg.zeros(2, 3).expand(2, 4), r"expand: the expanded size of the tensor \(4\)"),
    (lambda: wg.zeros(2, 3).expand(3), "expand: the number of sizes"),
    (lambda: wg.zeros(3).expand(-1, 3), r"expand: the expanded size of the tensor \(-1\) isn.t allowed"),
    (lambda: wg.cat([wg.zeros(2, 3), wg.zeros(2, 4)]), r"cat: sizes of tensors .* \(2, 3\), \(2, 4\)"),
    (lambda: wg.cat([]), "cat: expected a non-empty"),
    (lambda: wg.stack([wg.zeros(2), wg.zeros(3)]), "stack: expects each tensor to be equal size"),
    (lambda: wg.zeros(5).split([2, 2]), r"split: sections \(2, 2\) do not sum to 5"),
    (lambda: wg.zeros(5).narrow(0, 3, 4), r"narrow: start \(3\) \+ length \(4\) exceeds"),
    (lambda: wg.zeros(2, 3).flip(5), "flip: dim 5 is out of range"),
    (lambda: wg.zeros(2, 3).roll((1, 2), 0), "roll: got 2 shifts"),
    (lambda: wg.zeros(2, 3).repeat(2), "repeat: number of repeat dims"),
    (lambda: wg.pad(wg.zeros(3), (1, 1, 1)), "pad: padding length 3"),
    (lambda: wg.pad(wg.zeros(3), (3, 0), mode="reflect"), r"pad: reflect padding \(3, 0\) is invalid"),
    (lambda: wg.pad(wg.zeros(3), (1, 0), mode="wrap"), "pad: unknown mode 'wrap'"),
    (lambda: wg.zeros(3).tril(), "tril: input tensor must have at least 2 dimensions"),
    (lambda: wg.zeros(3).mT, "tensor.mT is only supported on matrices"),
    (lambda: wg.zeros(3).unflatten(0, (2, 2)), r"unflatten: shape \(2, 2\) is invalid for input of size 3"),
])
def test_bad_input(call, match):
    with pytest.raises((ValueError, IndexError, TypeError, RuntimeError), match=match):
        call()


def test_cat_on_two_backends_names_the_op():
    class Other:  # a stand-in second backend: only its identity matters to the check
        name = "other"
    a, b = wg.zeros(2), wg.zeros(2)
    b._backend = Other()
    with pytest.raises(RuntimeError, match=r"cat: tensors live on different backends \(cpu \(2,\), other \(2,\)\)"):
        wg.cat([a, b])


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for f in (lambda t: t.repeat(2, 1, 1, 3), lambda t: t.tile((2, 2)), lambda t: t.roll(3),
              lambda t: t.chunk(2, 2)[1], lambda t: t.tril(1), lambda t: t.movedim((0, 1), (2, 0)),
              lambda t: t.unflatten(2, (2, 2)), lambda t: t.mT):
        assert_close(f(wg.tensor(x)), f(torch.tensor(x)).numpy())
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert_close(wg.pad(wg.tensor(x), (1, 2, 2, 1), mode=mode),
                     torch.nn.functional.pad(torch.tensor(x), (1, 2, 2, 1), mode=mode).numpy())


@pytest.mark.parametrize("op", [lambda t: wg.cat([t]), lambda t: t.flip(()), lambda t: t.roll(0, 0),
                                lambda t: t.repeat(1), lambda t: t.tile((1,)), lambda t: wg.pad(t, (0, 0)),
                                lambda t: wg.pad(t, (0, 0), mode="reflect")])
def test_copying_ops_never_alias_their_input(op):
    x = wg.tensor([1.0, 2.0])
    y = op(x)
    y.add_(1.0)
    assert x.tolist() == [1.0, 2.0] and y.tolist() == [2.0, 3.0]


def test_cat_and_stack_promote_dtypes_as_torch(backend):
    """Found by tests/fuzz: PyTorch's cat and stack promote mixed dtypes (webgrad refused them)."""
    torch = pytest.importorskip("torch")
    for lib in (torch, wg):
        got = lib.cat([lib.tensor([True]), lib.tensor([2], dtype=lib.int32), lib.tensor([0.5])])
        stacked = lib.stack([lib.tensor(True), lib.tensor(3)])
        if lib is torch:
            want = (str(got.dtype).split(".")[-1], got.tolist(), str(stacked.dtype).split(".")[-1], stacked.tolist())
    assert (got.dtype.name, got.tolist(), stacked.dtype.name, stacked.tolist()) == want == \
        ("float32", [1.0, 2.0, 0.5], "int64", [1, 3])


def test_movement_errors_are_torchs(backend):
    """Found by tests/fuzz: shape errors are RuntimeErrors (ShapeError, a ValueError too), chunk of a
    0-d tensor is refused, and fill_/zero_ may write into an expanded view (one value everywhere)."""
    for bad in (lambda: wg.zeros(3).expand(2, 2), lambda: wg.zeros(6).reshape(4), lambda: wg.zeros(2).permute(0, 0),
                lambda: wg.cat([wg.zeros(2), wg.zeros(2, 2)]), lambda: wg.cat([wg.tensor(1.0)])):
        with pytest.raises(RuntimeError):
            bad()
    with pytest.raises(RuntimeError, match="chunk: cannot be applied to a 0-dim tensor"):
        wg.tensor(1.0).chunk(1)
    base = wg.zeros(1)
    view = base.expand(3)
    view.fill_(2.0)
    assert base.tolist() == [2.0] and view.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        view.mul_(2)


@pytest.mark.parametrize("name", ["cat", "stack", "hstack", "vstack", "dstack", "column_stack", "concat"])
def test_joining_a_tensor_given_whole_raises_as_pytorch(name):
    import torch
    with pytest.raises(TypeError):
        getattr(torch, name)(torch.ones(2, 3))
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        getattr(wg, name)(wg.ones(2, 3))
    assert getattr(wg, name)([wg.ones(2, 3), wg.ones(2, 3)]).shape == getattr(torch, name)(
        [torch.ones(2, 3), torch.ones(2, 3)]).shape
