"""PyTorch's modules that scripts import at the top: ``torch.jit`` (TorchScript's decorators and
queries, with Python's meaning), ``torch.onnx`` and ``torch.hub`` (importable; their functions
raise saying what to do instead) and ``torch.utils.checkpoint`` (values, gradients, warnings and
errors as PyTorch's), each compared with torch."""
import doctest
import importlib
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint

import webgrad as wg
import webgrad.hub
import webgrad.jit
import webgrad.onnx
import webgrad.utils.checkpoint as wck

from nn_compare import load_torch_weights


@pytest.mark.parametrize("name", ["webgrad.jit", "webgrad.onnx", "webgrad.hub", "webgrad.utils.checkpoint"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed


# ---------------------------------------------------------------- torch.jit

def scriptable_block(lib):
    """A block written as scriptable model code is (timm, torchvision): the same class under either library."""
    nn = lib.nn

    class Block(nn.Module):
        scale: lib.jit.Final[float]

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.scale = 0.5

        @lib.jit.ignore
        def extra(self, x):
            return x + 1

        @lib.jit.ignore(drop=True)
        def dropped(self, x):
            return x * 3

        @lib.jit.unused
        def unused(self, x):
            return x - 1

        @lib.jit.export
        def exported(self, x):
            return self.fc(x)

        def forward(self, x):
            y = lib.jit.annotate(lib.Tensor, self.fc(x) * self.scale)
            if not lib.jit.is_scripting() and not lib.jit.is_tracing():
                y = self.extra(y)
            fut = lib.jit.fork(self.dropped, y)
            return self.unused(lib.jit.wait(fut)) + self.exported(x)
    return Block()


def test_scriptable_code_runs_as_in_pytorch(backend):
    with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
        theirs = scriptable_block(torch)
    with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
        ours = scriptable_block(wg).to(backend)
    load_torch_weights(theirs, ours)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    with pytest.warns(DeprecationWarning, match="torch.jit.fork. is deprecated"):
        want = theirs(torch.tensor(x))
    with pytest.warns(DeprecationWarning, match="torch.jit.fork. is deprecated"):
        got = ours(wg.tensor(x, device=backend))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_script_returns_its_argument():
    def f(x):
        return x * 2
    module = wg.nn.Linear(2, 2)
    assert wg.jit.script(f) is f and wg.jit.script(module) is module
    assert wg.jit.script_if_tracing(f) is f and wg.jit.interface(f) is f
    assert wg.jit.is_scripting() is False and wg.jit.is_tracing() is False


def test_fork_keeps_an_error_for_wait():
    def fails():
        raise ValueError("inside")
    with pytest.warns(DeprecationWarning):
        fut = wg.jit.fork(fails)
    with pytest.raises(ValueError, match="inside"), pytest.warns(DeprecationWarning, match="jit.wait"):
        wg.jit.wait(fut)


@pytest.mark.parametrize("name", ["trace", "trace_module", "save", "load", "freeze", "optimize_for_inference"])
def test_torchscript_only_functions_raise_saying_what_to_do(name):
    with pytest.raises(NotImplementedError, match=f"torch.jit.{name}: webgrad has no TorchScript; .*webgrad"):
        getattr(wg.jit, name)(wg.nn.Linear(1, 1), wg.ones(1, 1))


def test_missing_jit_names_say_why():
    with pytest.raises(AttributeError, match="ScriptModule.*TorchScript machinery"):
        wg.jit.ScriptModule


# ---------------------------------------------------------------- torch.onnx, torch.hub

def test_onnx_export_raises_and_nothing_is_exporting():
    assert wg.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="torch.onnx.export: webgrad has no ONNX exporter"):
        wg.onnx.export(wg.nn.Linear(1, 1), (wg.ones(1, 1),), "model.onnx")


@pytest.mark.parametrize("name", ["load", "load_state_dict_from_url", "download_url_to_file", "list", "help",
                                  "get_dir", "set_dir"])
def test_hub_functions_raise_saying_what_to_do(name):
    with pytest.raises(NotImplementedError, match=f"torch.hub.{name}: webgrad downloads nothing.*webgrad.load"):
        getattr(wg.hub, name)("pytorch/vision", "resnet18")


# ---------------------------------------------------------------- torch.utils.checkpoint

def mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 8), lib.nn.ReLU(),
                             lib.nn.Linear(8, 2))


def run_checkpointed(lib, net, x, how, use_reentrant, x_grad=True):
    """(output, grads of the parameters and of x, the warnings' messages) of one checkpointed pass."""
    ck = lib.utils.checkpoint
    x = x.detach().requires_grad_(x_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if how == "checkpoint":
            y = ck.checkpoint(lambda t: net[2:](net[:2](t)), x, use_reentrant=use_reentrant)
        else:
            y = ck.checkpoint_sequential(net, 2, x, use_reentrant=use_reentrant)
    if y.requires_grad:
        y.square().sum().backward()
    grads = [None if p.grad is None else p.grad for p in net.parameters()] + [x.grad]
    messages = [str(w.message).split(".")[0] for w in caught if "checkpoint" in str(w.message).lower()
                or "requires_grad" in str(w.message)]
    return y, grads, messages


@pytest.mark.parametrize("how", ["checkpoint", "checkpoint_sequential"])
@pytest.mark.parametrize("use_reentrant", [True, False, None])
@pytest.mark.parametrize("x_grad", [True, False])
def test_checkpoint_as_pytorch(backend, how, use_reentrant, x_grad):
    theirs, ours = mlp(torch), mlp(wg).to(backend)
    load_torch_weights(theirs, ours)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    want = run_checkpointed(torch, theirs, torch.tensor(x), how, use_reentrant, x_grad)
    got = run_checkpointed(wg, ours, wg.tensor(x, device=backend), how, use_reentrant, x_grad)
    assert got[0].requires_grad == want[0].requires_grad
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(got[1], want[1]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)
    assert len(got[2]) == len(want[2])
    assert [m.split(":")[0] for m in got[2]] == [m.split(":")[0] for m in want[2]]


def test_checkpoint_keyword_rules_as_pytorch():
    f = lambda t, scale=1.0: t * scale   # noqa: E731
    x = wg.ones(2, requires_grad=True)
    assert wck.checkpoint(f, x, use_reentrant=False, scale=3.0).tolist() == [3.0, 3.0]
    for lib, t in ((torch, torch.ones(2, requires_grad=True)), (wg, x)):
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            lib.utils.checkpoint.checkpoint(f, t, use_reentrant=True, scale=3.0)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            lib.utils.checkpoint.checkpoint(f, t, use_reentrant=True, debug=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: bogus"):
            lib.utils.checkpoint.checkpoint_sequential([f], 1, t, use_reentrant=False, bogus=1)


def test_checkpoint_runs_the_forward_context():
    entered = []

    class Note:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False
    y = wck.checkpoint(lambda t: t + 1, wg.ones(1, requires_grad=True), use_reentrant=False,
                       context_fn=lambda: (Note("forward"), Note("recompute")))
    assert y.tolist() == [2.0] and entered == ["forward"]


# ---------------------------------------------------------------- torch.nn.modules (PyTorch's file layout)

def test_module_layout_is_pytorchs():
    """Every public class PyTorch defines in torch/nn/modules/<file>.py is in LAYOUT[file], and every class
    webgrad.nn has is reachable under that file, as the same object."""
    import inspect
    import torch.nn.modules
    from webgrad.nn import modules as ours
    for file, names in ours.LAYOUT.items():
        theirs = importlib.import_module(f"torch.nn.modules.{file}")
        defined = {n for n, o in vars(theirs).items()
                   if inspect.isclass(o) and o.__module__ == theirs.__name__ and not n.startswith("_")}
        assert defined <= set(names), (file, defined - set(names))
        mine = importlib.import_module(f"webgrad.nn.modules.{file}")
        for name in defined:
            if hasattr(wg.nn, name):
                assert getattr(mine, name) is getattr(wg.nn, name) and getattr(ours, name) is getattr(wg.nn, name)
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchLayer'.*porting.md"):
        ours.linear.NoSuchLayer


@pytest.mark.parametrize("lib", [torch, wg], ids=["torch", "webgrad"])
def test_private_bases_scripts_use(lib):
    from_loss = importlib.import_module(f"{lib.__name__}.nn.modules.loss")
    from_bn = importlib.import_module(f"{lib.__name__}.nn.modules.batchnorm")
    from_conv = importlib.import_module(f"{lib.__name__}.nn.modules.conv")

    class Scaled(from_loss._Loss):
        def forward(self, a, b):
            d = (a - b).abs()
            return d.sum() if self.reduction == "sum" else d.mean()
    loss = Scaled(reduction="sum")
    assert loss.reduction == "sum"
    assert float(loss(lib.ones(2), lib.zeros(2))) == 2.0
    weighted = from_loss._WeightedLoss(lib.ones(2), reduction="none")
    assert weighted.reduction == "none" and list(weighted.state_dict()) == ["weight"]
    net = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.Linear(2, 2))
    norms = [m for m in net.modules() if isinstance(m, from_bn._BatchNorm)]
    convs = [m for m in net.modules() if isinstance(m, from_conv._ConvNd)]
    assert len(norms) == 1 and len(convs) == 1
