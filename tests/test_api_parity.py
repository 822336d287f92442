"""PyTorch's signatures: every webgrad callable that PyTorch also has takes PyTorch's parameters,
by name and position, so keyword calls such as ``matmul(input=a, other=b)`` or
``x.sum(dim=1, keepdim=True)`` and PyTorch's positional orders work unchanged (issue 17, item 6).

The signatures come from torch itself (``torch_signatures.py``: Python functions through
``inspect``, built-ins through the type stubs torch ships). What webgrad deliberately does not take
is listed in ``EXEMPT`` with the reason; ``out=`` is nowhere (assign the result instead).
"""
import inspect
import types

import numpy as np
import pytest
import torch

import webgrad as wg
from torch_signatures import doc_params, mismatches, python_params, torch_signatures

OUT = "out"   # PyTorch's out= (write into a given tensor): not taken anywhere; docs/porting.md says so

# "module.name" -> (parameter names not checked, why)
EXEMPT = {
    "torch.addmm": ({"out_dtype"}, "out_dtype (a CUDA-only low-precision overload; CPU torch refuses it too)"),
    "torch.baddbmm": ({"out_dtype"}, "out_dtype: a CUDA-only overload"),
    "torch.bmm": ({"out_dtype"}, "out_dtype: a CUDA-only overload"),
    "torch.mm": ({"out_dtype"}, "out_dtype: a CUDA-only overload"),
    "torch.arange": ({"end"}, "arange(end) is arange(start) with one argument, and arange(end=5) works"),
    "torch.full": ({"names"}, "named tensors: torch's own full() refuses names= outside its named-tensor build"),
    "torch.max": ({"other"}, "one positional slot, an int dim or a tensor other (and other= by keyword)"),
    "torch.min": ({"other"}, "one positional slot, an int dim or a tensor other (and other= by keyword)"),
    "Tensor.max": ({"other"}, "one positional slot, an int dim or a tensor other (and other= by keyword)"),
    "Tensor.min": ({"other"}, "one positional slot, an int dim or a tensor other (and other= by keyword)"),
    "torch.std": ({"unbiased"}, "std(x, True): a bool in dim's place is unbiased, as PyTorch's overload"),
    "torch.var": ({"unbiased"}, "var(x, True): a bool in dim's place is unbiased"),
    "torch.nuclear_norm": ({"keepdim"}, "nuclear_norm(x, True): a bool in dim's place is keepdim, as PyTorch's "
                                        "overload"),
    "torch.std_mean": ({"unbiased"}, "a bool in dim's place is unbiased"),
    "torch.var_mean": ({"unbiased"}, "a bool in dim's place is unbiased"),
    "Tensor.std": ({"unbiased"}, "a bool in dim's place is unbiased"),
    "Tensor.var": ({"unbiased"}, "a bool in dim's place is unbiased"),
    "torch.norm": ({"dtype"}, "dtype is keyword-only here (PyTorch's sits after out=, never passed by position)"),
    "Tensor.norm": ({"dtype"}, "dtype is keyword-only here"),
    "torch.randint_like": ({"high"}, "randint_like(x, high): one bound is the high one, as randint's"),
    "Tensor.random_": ({"to"}, "random_(to): one bound is the upper one"),
    "torch.result_type": ({"scalar", "scalar1", "scalar2", "tensor"},
                          "one function takes tensors and numbers in both places (torch's overloads rename them)"),
    "torch.isin": ({"element", "test_element"},
                   "one function takes tensors and numbers in both places (torch's overloads rename them)"),
    "torch.searchsorted": ({"self"}, "the number overload's name for input: one parameter input takes both"),
    "torch.tensor": ({"dtype", "device", "requires_grad", "pin_memory"},
                     "the stub lists them positionally; torch.tensor([1], torch.float64) is a TypeError in torch"),
    "Tensor.new_tensor": ({"dtype", "device", "requires_grad", "pin_memory"},
                          "keyword-only in torch too (the stub lists them positionally)"),
    "Tensor.cpu": ({"memory_format"}, "keyword-only in torch too (x.cpu(fmt) is a TypeError there)"),
    "Tensor.requires_grad_": ({"mode"}, "torch's parser calls it requires_grad (mode= is a TypeError there)"),
    "torch.where": ({"self"}, "torch's where(condition, input, other): the stub's self= is a TypeError there"),
    "torch.scatter": ({"value"}, "one positional slot, a src tensor or a number value (value= by keyword)"),
    "Tensor.scatter": ({"value"}, "one positional slot, src or value (value= by keyword)"),
    "Tensor.scatter_": ({"value"}, "one positional slot, src or value (value= by keyword)"),
    "torch.repeat_interleave": ({"repeats"}, "repeat_interleave(counts) alone: one positional tensor, as torch's"),
    **{f"{owner}.{name}": ({"indices", "sections", "tensor_indices_or_sections"},
                           "one positional slot, indices_or_sections (torch's overloads rename it)")
       for owner in ("torch", "Tensor") for name in ("tensor_split", "hsplit", "vsplit", "dsplit")},
    "Tensor.view": ({"dtype"}, "view(dtype) reinterprets bits: refused with a NotImplementedError naming .to()"),
    "Tensor.new": ({"other", "size", "storage"}, "the legacy constructor's overloads share one *args slot: sizes, a "
                   "Size, data or a tensor (no storage objects here)"),
    "torch.view_copy": ({"dtype"}, "view_copy(input, dtype) reinterprets bits, as view(dtype): refused"),
    "torch.einsum": ({"args"}, "torch's einsum(*args) is (equation, *operands) here, its documented form"),
    "F.max_pool2d": ({"args"}, "torch's is a *args dispatcher; return_indices is not supported (porting.md)"),
    "F.scaled_dot_product_attention": ({"scale", "enable_gqa"}, "keyword-only, as torch's at run time (its docstring shows them positional)"),
    "torch.compile": ({"name", "recompile_limit", "isolate_recompiles", "shapes_spec"},
                      "torch 2.13's new compile options: webgrad.compile is another session's work"),
}


def _opaque(sigs):
    """A torch signature that says nothing: ``(*args, **kwargs)``."""
    return all(s and all(p.kind in ("varpos", "varkw") for p in s) for s in sigs)


def _pairs(prefix, tmod, wmod, method=False):
    out = []
    for name in sorted(n for n in dir(wmod) if not n.startswith("_")):
        w, t = getattr(wmod, name), getattr(tmod, name, None)
        if t is None or isinstance(w, (types.ModuleType, property)) or not callable(w):
            continue
        out.append((f"{prefix}.{name}", w, t, name, method))
    return out


def _all_pairs():
    import torch.nn.functional as TF
    import torch.optim.lr_scheduler as TL
    import torch.utils.data as TD
    return (_pairs("torch", torch, wg) + _pairs("F", TF, wg.nn.functional) + _pairs("Tensor", torch.Tensor, wg.Tensor,
                                                                                      method=True)
            + _pairs("nn", torch.nn, wg.nn) + _pairs("optim", torch.optim, wg.optim)
            + _pairs("lr_scheduler", TL, wg.optim.lr_scheduler) + _pairs("utils.data", TD, wg.utils.data)
            + _pairs("nn.init", torch.nn.init, wg.nn.init) + _pairs("nn.utils", torch.nn.utils, wg.nn.utils)
            + _pairs("nn.utils.rnn", torch.nn.utils.rnn, wg.nn.utils.rnn)
            + _pairs("autograd", torch.autograd, wg.autograd) + _pairs("amp", torch.amp, wg.amp)
            + _pairs("cuda", torch.cuda, wg.cuda) + _pairs("random", torch.random, wg.random)
            + _pairs("accelerator", torch.accelerator, wg.accelerator) + _pairs("func", torch.func, wg.func)
            + _pairs("autograd.functional", torch.autograd.functional, wg.autograd.functional)
            + _pairs("linalg", torch.linalg, wg.linalg)
            + _pairs("special", torch.special, wg.special) + _pairs("fft", torch.fft, wg.fft))


PAIRS = _all_pairs()


def _signatures(key, w, t, name, method):
    if isinstance(w, type):
        if not isinstance(t, type):
            return None, None
        try:
            return python_params(w.__init__, drop_self=True), [python_params(t.__init__, drop_self=True)]
        except (TypeError, ValueError):
            return None, None
    try:
        ours = python_params(w, drop_self=method and not isinstance(inspect.getattr_static(wg.Tensor, name, None),
                                                                     staticmethod))
    except (TypeError, ValueError):
        return None, None
    if key.startswith("linalg.") and not inspect.isfunction(t):   # a built-in: its docstring holds its signature
        return ours, [doc_params(t)] if doc_params(t) else []
    return ours, torch_signatures(t, name, method)


def _comparable(pair):
    ours, theirs = _signatures(*pair)
    return ours is not None and bool(theirs) and not _opaque(theirs)


CHECKED = [p for p in PAIRS if _comparable(p)]


def test_most_names_are_compared():
    """The signature reader keeps working: nearly every shared name has a readable signature on both sides."""
    assert len(CHECKED) > 0.9 * len(PAIRS) and len(CHECKED) > 600, (len(CHECKED), len(PAIRS))


@pytest.mark.parametrize("key,w,t,name,method", CHECKED, ids=[p[0] for p in CHECKED])
def test_takes_pytorchs_parameters(key, w, t, name, method):
    ours, theirs = _signatures(key, w, t, name, method)
    exempt = {OUT} | EXEMPT.get(key, (set(), ""))[0]
    problems = sorted({p for sig in theirs for p in mismatches(sig, ours, exempt)})
    assert not problems, f"{key} lacks PyTorch's {problems}"


def test_exemptions_are_still_needed():
    """An exemption whose gap has closed is removed (so the table stays the list of real differences)."""
    by_key = {p[0]: p for p in PAIRS}
    for key, (names, why) in EXEMPT.items():
        assert key in by_key, f"EXEMPT names {key}, which is not a pair of webgrad and torch callables"
        ours, theirs = _signatures(*by_key[key])
        problems = {p for sig in theirs for p in mismatches(sig, ours, {OUT})}
        assert problems, f"{key}: nothing differs any more ({why}); drop it from EXEMPT"


def test_the_signature_reader_sees_pytorchs_parameters():
    """The reader is right about calls torch itself accepts and refuses."""
    sigs = torch_signatures(torch.matmul, "matmul")
    assert [[p.name for p in s] for s in sigs] == [["input", "other", "out"]]
    (split,) = torch_signatures(torch.Tensor.split, "split", method=True)
    assert [p.name for p in split] == ["split_size", "dim"]
    assert mismatches(sigs[0], python_params(lambda input, other: None), {"out"}) == []
    assert mismatches(sigs[0], python_params(lambda a, b: None), {"out"}) == [
        "input at position 0 (webgrad has a)", "other at position 1 (webgrad has b)"]


# ---------------------------------------------------------------- keyword calls, against torch


def _both(backend, data):
    return torch.tensor(data), wg.tensor(data, device=backend)


KEYWORD_CALLS = {
    "matmul": lambda m, a, b: m.matmul(input=a, other=b),
    "sum": lambda m, a, b: m.sum(input=a, dim=1, keepdim=True),
    "mean": lambda m, a, b: m.mean(a, dim=(0, 1)),
    "max_other": lambda m, a, b: m.max(a, other=b),
    "gather": lambda m, a, b: m.gather(input=a, dim=1, index=m.tensor([[0, 1], [1, 0]])),
    "where": lambda m, a, b: m.where(a > 0, input=a, other=b),
    "clamp": lambda m, a, b: m.clamp(input=a, min=b),
    "transpose": lambda m, a, b: a.transpose(dim0=0, dim1=1),
    "swapaxes": lambda m, a, b: a.swapaxes(axis0=0, axis1=1),
    "view": lambda m, a, b: a.view(size=(4,)),
    "reshape": lambda m, a, b: a.reshape(shape=(1, 4)),
    "permute": lambda m, a, b: a.permute(dims=(1, 0)),
    "expand": lambda m, a, b: a[:1].expand(size=(3, 2)),
    "repeat": lambda m, a, b: a.repeat(repeats=(2, 1)),
    "flip": lambda m, a, b: a.flip(0, 1),
    "tile": lambda m, a, b: a.tile(2, 1),
    "squeeze": lambda m, a, b: a.reshape(1, 2, 1, 2).squeeze(0, 2),
    "split": lambda m, a, b: a.split(split_size=1, dim=0)[1],
    "type_as": lambda m, a, b: a.type_as(other=b),
    "copy_": lambda m, a, b: a.clone().copy_(other=b),
    "std": lambda m, a, b: m.std(a, True),
    "arange": lambda m, a, b: m.arange(end=3),
    "mse_weight": lambda m, a, b: m.nn.functional.mse_loss(a, b, weight=m.ones(2, 2) * 2),
    "addmm": lambda m, a, b: m.addmm(input=a, mat1=a, mat2=b, beta=0.5, alpha=2),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_CALLS))
def test_keyword_forms_give_pytorchs_results(name, backend):
    ta, wa = _both(backend, [[1.0, -2.0], [3.0, 4.0]])
    tb, wb = _both(backend, [[0.5, 0.5], [-1.0, 2.0]])
    want = KEYWORD_CALLS[name](torch, ta, tb)
    got = KEYWORD_CALLS[name](wg, wa, wb)
    assert got.device.type == wg.device(backend).type
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_legacy_loss_reductions_warn_and_reduce_as_pytorch(backend):
    ta, wa = _both(backend, [[1.0, -2.0], [3.0, 4.0]])
    tb, wb = _both(backend, [[0.5, 0.5], [-1.0, 2.0]])
    for size_average, reduce in ((False, None), (None, False), (True, True)):
        with pytest.warns(UserWarning, match="size_average and reduce"):
            got = wg.nn.functional.l1_loss(wa, wb, size_average, reduce)
        with pytest.warns(UserWarning, match="size_average and reduce"):
            want = torch.nn.functional.l1_loss(ta, tb, size_average, reduce)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        module = wg.nn.CrossEntropyLoss(size_average=False)
    assert module.reduction == "sum" and "size_average" not in module.extra_repr()
