"""No silent ignores: every public callable of webgrad raises TypeError naming an unknown keyword
argument, as Python and PyTorch do (issue 17, item 5).

The test walks the public API (the callables of webgrad and its public modules, every Tensor
method, the methods of a module, an optimizer, a scheduler, a loader ...) and calls each with one
keyword nobody accepts; arguments a callable needs before it reads its keywords come from
``ARGS``. The few that take any keyword by design, as PyTorch's do, are listed in ``FORWARDS`` with
the reason.
"""
import inspect
import types

import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad.utils import data

BOGUS = "no_such_keyword_xyz"

MODULES = {
    "webgrad": wg, "webgrad.nn": wg.nn, "webgrad.nn.functional": F, "webgrad.nn.init": wg.nn.init,
    "webgrad.nn.utils": wg.nn.utils, "webgrad.nn.utils.rnn": wg.nn.utils.rnn, "webgrad.optim": wg.optim,
    "webgrad.optim.lr_scheduler": wg.optim.lr_scheduler, "webgrad.utils.data": data, "webgrad.autograd": wg.autograd,
    "webgrad.cuda": wg.cuda, "webgrad.cuda.amp": wg.cuda.amp, "webgrad.amp": wg.amp,
    "webgrad.accelerator": wg.accelerator, "webgrad.random": wg.random, "webgrad.profiler": wg.profiler,
    "webgrad.backends.cuda": wg.backends.cuda, "webgrad.backends.cudnn": wg.backends.cudnn,
    "webgrad.backends.mps": wg.backends.mps, "webgrad.backends.mkldnn": wg.backends.mkldnn,
    "webgrad.backends.mkl": wg.backends.mkl, "webgrad.backends.openmp": wg.backends.openmp,
    "webgrad.backends.opt_einsum": wg.backends.opt_einsum, "webgrad.func": wg.func,
    "webgrad.autograd.functional": wg.autograd.functional, "webgrad.linalg": wg.linalg,
}

# callables that take any keyword by design, as PyTorch's do: name -> why
FORWARDS = {
    "webgrad.nn.Identity": "takes and ignores any argument, as torch.nn.Identity",
    "webgrad.run_kernel": "keywords are the kernel's attributes, checked by the kernel",
    "webgrad.autograd.run_kernel": "keywords are the kernel's attributes, checked by the kernel",
    "webgrad.utils.data.StackDataset": "keywords name the stacked datasets, as torch.utils.data.StackDataset's",
}

# positional arguments a callable needs before its keywords are read
_IMAGE = wg.ones(1, 1, 2, 2)
ARGS = {
    "webgrad.nn.RNN": (2, 3), "webgrad.nn.GRU": (2, 3), "webgrad.load": (b"",),
    "webgrad.nn.functional.max_pool2d": (_IMAGE,), "webgrad.nn.functional.avg_pool2d": (_IMAGE,),
    "webgrad.nn.functional.adaptive_avg_pool2d": (_IMAGE,),
    "webgrad.nn.functional.max_pool2d_with_indices": (_IMAGE,),
    "webgrad.nn.utils.skip_init": (wg.nn.Linear, 1, 1),   # its keywords go to the module class
}


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name, None)
        if callable(obj) and not isinstance(obj, types.ModuleType):
            yield name, obj


def _callables():
    seen = {}
    for prefix, module in MODULES.items():
        for name, obj in _public(module):
            seen.setdefault(f"{prefix}.{name}", obj)
    return sorted(seen.items())


CALLABLES = _callables()


def assert_refused(fn, args=(), what=""):
    with pytest.raises(TypeError) as info:
        fn(*args, **{BOGUS: 1})
    message = str(info.value)
    # Python's own words for a class without parameters and for a built-in method name no keyword
    python = ("takes no arguments", "takes no keyword arguments")
    assert BOGUS in message or any(p in message for p in python), f"{what}: TypeError without the keyword: {message}"


@pytest.mark.parametrize("name,obj", [c for c in CALLABLES if c[0] not in FORWARDS], ids=[c[0] for c in CALLABLES
                                                                                           if c[0] not in FORWARDS])
def test_public_callable_refuses_an_unknown_keyword(name, obj):
    if isinstance(obj, type) and (issubclass(obj, BaseException) or getattr(obj, "_is_protocol", False)):
        return   # exceptions take Python's arguments; a Protocol is not made
    assert_refused(obj, ARGS.get(name, ()), name)


def test_the_forwarding_ones_are_real():
    names = dict(CALLABLES)
    for name in FORWARDS:
        assert name in names, f"{name} is listed in FORWARDS but is not public"
        params = inspect.signature(names[name]).parameters.values()
        assert any(p.kind is p.VAR_KEYWORD for p in params), name


def test_identity_takes_any_argument_as_pytorch():
    assert wg.nn.Identity(54, unused_argument1=0.1)(wg.ones(2)).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- methods of instances

def _tensor_methods():
    out = []
    for name in sorted(dir(wg.Tensor)):
        if name.startswith("_") and name not in ("__getitem__", "__setitem__", "__format__"):
            continue
        if callable(getattr(wg.Tensor, name)) and not isinstance(getattr(wg.Tensor, name), type):
            out.append(name)
    return out


@pytest.mark.parametrize("name", _tensor_methods())
def test_tensor_method_refuses_an_unknown_keyword(name, backend):
    t = wg.ones(2, 2, requires_grad=False)
    assert_refused(getattr(t, name), (), f"Tensor.{name}")


def _instances():
    lin = wg.nn.Linear(2, 2)
    opt = wg.optim.SGD(lin.parameters(), lr=0.1)
    ds = data.TensorDataset(wg.arange(4))
    return {
        "Module": lin, "Sequential": wg.nn.Sequential(wg.nn.ReLU()), "ModuleList": wg.nn.ModuleList(),
        "ModuleDict": wg.nn.ModuleDict(),
        "Optimizer": opt, "LRScheduler": wg.optim.lr_scheduler.StepLR(opt, 1),
        "ReduceLROnPlateau": wg.optim.lr_scheduler.ReduceLROnPlateau(wg.optim.SGD(lin.parameters(), lr=0.1)),
        "DataLoader": data.DataLoader(ds), "TensorDataset": ds, "Generator": wg.Generator(),
        "GradScaler": wg.amp.GradScaler(enabled=False), "autocast": wg.autocast("cpu"), "no_grad": wg.no_grad(),
        "device": wg.device("cpu"), "profile": wg.profiler.profile(), "Size": wg.Size([2]),
        "finfo": wg.finfo(), "dtype": wg.float32,
    }


def _instance_methods():
    out = []
    for owner, obj in _instances().items():
        for name in sorted(dir(obj)):
            attr = getattr(type(obj), name, None)
            if name.startswith("_") or isinstance(attr, (property, type)) or not callable(getattr(obj, name)):
                continue
            out.append((owner, name))
    return out


@pytest.mark.parametrize("owner,name", _instance_methods(), ids=[f"{o}.{n}" for o, n in _instance_methods()])
def test_instance_method_refuses_an_unknown_keyword(owner, name):
    instances = _instances()
    args = {"GradScaler.step": (instances["Optimizer"],)}.get(f"{owner}.{name}", ())
    assert_refused(getattr(instances[owner], name), args, f"{owner}.{name}")


def test_module_call_names_the_keyword_from_forward():
    assert_refused(wg.nn.Linear(2, 2), (wg.ones(1, 2),), "Linear.__call__")
