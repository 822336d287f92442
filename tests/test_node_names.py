"""Backward nodes carry PyTorch's names (``grad_fn.name()``, ``repr(grad_fn)``, ``grad_fn=<...>`` in a
tensor's repr), and ``next_functions`` PyTorch's structure, for the ops scripts print most."""
import re

import pytest
import torch

import webgrad as wg


def cases(lib, backend="cpu"):
    F = lib.nn.functional
    a, b, v, u = (lib.ones(*s, requires_grad=True) for s in ((2, 3), (3, 4), (3,), (2,)))
    A, B, w = (lib.ones(*s, requires_grad=True) for s in ((5, 2, 3), (5, 3, 4), (4, 3)))
    bias, labels = lib.zeros(4, requires_grad=True), lib.tensor([0, 1])
    return {
        "mm": a @ b, "mv": a @ v, "dot": v @ v, "vector @ matrix": u @ a, "bmm": A @ B, "3-d @ 2-d": A @ b,
        "linear": F.linear(a, w, bias), "linear 3-d": F.linear(A, w, bias), "linear without bias": F.linear(a, w),
        "linear 3-d without bias": F.linear(A, w), "view": a.view(6), "reshape": a.reshape(6), "slice": a[:, 1:],
        "t": a.t(), "transpose": A.transpose(1, 2), "permute": A.permute(2, 0, 1), "sum": a.sum(),
        "sum over a dim": a.sum(1), "mean": a.mean(), "mean over a dim": a.mean(0), "pow": a ** 2,
        "square": a.square(), "clamp": a.clamp(0, 1), "clone": a.clone(), "sub": a - 1,
        "mse_loss": F.mse_loss(a, a.detach()), "mse_loss none": F.mse_loss(a, a.detach(), reduction="none"),
        "cross_entropy": F.cross_entropy(a, labels), "nll_loss": F.nll_loss(a.log_softmax(1), labels),
        "binary_cross_entropy": F.binary_cross_entropy(a.sigmoid(), a.detach() * 0),
        "binary_cross_entropy_with_logits": F.binary_cross_entropy_with_logits(a, a.detach()),
        "smooth_l1_loss": F.smooth_l1_loss(a, a.detach()), "l1_loss": F.l1_loss(a, a.detach()), "max": a.max(),
        "min": a.min(), "relu": a.relu(), "layer_norm": F.layer_norm(a, (3,)), "gelu": F.gelu(a),
        "cat": lib.cat([a, a]), "stack": lib.stack([a, a]), "unsqueeze": a.unsqueeze(0),
        "squeeze": a.unsqueeze(0).squeeze(0), "expand": v.expand(2, 3), "softmax": a.softmax(-1),
        "log_softmax": a.log_softmax(1), "split": a.split(1)[0], "pad": F.pad(a, (1, 1)),
        "where": lib.where(a > 0, a, a), "neg": -a, "div": a / 2, "mul": a * 2, "add": a + 1, "sigmoid": a.sigmoid(),
        "tanh": a.tanh(), "exp": a.exp(), "log": a.log(), "sqrt": a.sqrt(), "flatten": A.flatten(1),
        "cumsum": a.cumsum(1), **({"double": a.double()} if backend == "cpu" else {}),   # (no float64 on GPUs)
    }


def test_node_names_are_torch_names(backend):
    theirs = {k: t.grad_fn.name() for k, t in cases(torch, backend).items()}
    ours = {k: t.grad_fn.name() for k, t in cases(wg, backend).items()}
    assert ours == theirs


def _shape_of_graph(lib):
    """What a user sees printing a small graph: reprs without addresses, and next_functions."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2 + 1).sum()
    add = y.grad_fn.next_functions[0][0]
    mul, const = add.next_functions
    acc = mul[0].next_functions[0][0]
    strip = lambda s: re.sub(r" object at 0x[0-9a-f]+", "", s)   # noqa: E731
    return [repr(y).replace("torch.", "webgrad."), strip(repr(y.grad_fn)), strip(repr(add)), const,
            mul[1], acc.name(), acc.variable is x, acc.next_functions]


def test_graph_prints_and_walks_as_torch():
    assert _shape_of_graph(wg) == _shape_of_graph(torch)


def test_custom_function_nodes_are_named_by_their_class():
    for lib in (torch, wg):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x ** 3

            @staticmethod
            def backward(ctx, dy):
                return dy
        assert Cube.apply(lib.ones(1, requires_grad=True)).grad_fn.name() == "CubeBackward"


@pytest.mark.parametrize("label", ["MeanBackward0"])
def test_a_labelled_node_keeps_its_kernel(label):
    y = wg.ones(3, requires_grad=True).mean()
    assert y.grad_fn.name() == label and y.grad_fn.kernel == "Div"
