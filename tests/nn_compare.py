"""Run a torch module and a webgrad module on the same weights and inputs; compare outputs,
input gradients and every parameter's gradient (test_nn_rnn, test_nn_transformer, test_nn_embedding).

Inputs are given as numpy arrays (nested in tuples where a module takes a tuple, None where it
takes nothing): float arrays become tensors that require grad (``Fixed(array)``: that do not), bool
arrays masks, int arrays long indices. Outputs are walked the same way on both sides (tensors,
tuples, PackedSequences, None).
"""
import numpy as np
import torch

import webgrad as wg

TOLERANCES = {"float32": dict(atol=2e-5, rtol=1e-4), "float64": dict(atol=1e-10, rtol=1e-8)}
TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def rand(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def load_torch_weights(tm, wm):
    """Copy a torch module's state into a webgrad module, after checking the keys and shapes agree."""
    t_state, w_state = tm.state_dict(), wm.state_dict()
    assert list(w_state) == list(t_state)
    assert [tuple(v.shape) for v in w_state.values()] == [tuple(v.shape) for v in t_state.values()]
    wm.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in t_state.items()})


class Fixed:
    """A float input that does not require grad (``Fixed(array)``)."""

    def __init__(self, array):
        self.array = array


def _leaf(a):
    if a.dtype == np.bool_:
        return (torch.tensor(a), wg.tensor(a))
    if a.dtype.kind == "i":
        return (torch.tensor(a, dtype=torch.long), wg.tensor(a, dtype=wg.long))
    return (torch.tensor(a, requires_grad=True), wg.tensor(a, requires_grad=True))


def to_both(tree):
    """(torch tree, webgrad tree, [(torch leaf, webgrad leaf) needing grad]) from a numpy tree."""
    if isinstance(tree, np.ndarray):
        t, w = _leaf(tree)
        return t, w, ([(t, w)] if t.requires_grad else [])
    if isinstance(tree, Fixed):
        return torch.tensor(tree.array), wg.tensor(tree.array), []
    if isinstance(tree, (tuple, list)):
        parts = [to_both(x) for x in tree]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts), [g for p in parts for g in p[2]]
    return tree, tree, []


def tensor_pairs(t_out, w_out, where="output"):
    """The (where, torch tensor, webgrad tensor) pairs of two outputs of the same structure."""
    if isinstance(t_out, torch.Tensor):
        assert isinstance(w_out, wg.Tensor), f"{where}: webgrad gave {type(w_out).__name__}"
        return [(where, t_out, w_out)]
    if isinstance(t_out, tuple):
        assert isinstance(w_out, tuple) and len(w_out) == len(t_out), f"{where}: {type(w_out).__name__}"
        return [p for i, (a, b) in enumerate(zip(t_out, w_out)) for p in tensor_pairs(a, b, f"{where}[{i}]")]
    assert w_out is None and t_out is None, f"{where}: torch {t_out!r}, webgrad {w_out!r}"
    return []


def assert_close(w, t, dtype, what):
    assert tuple(w.shape) == tuple(t.shape), f"{what}: shape {tuple(w.shape)} vs torch {tuple(t.shape)}"
    t_np = t.detach().numpy()
    tol = TOLERANCES[dtype] if t.is_floating_point() else dict(atol=0, rtol=0)
    np.testing.assert_allclose(w.detach().numpy(), t_np, err_msg=what, **tol)


def _call(module, *args, **kwargs):
    return module(*args, **kwargs)


def compare_modules(tm, wm, args, kwargs=None, dtype="float32", backward=True, seed=1, calls=(_call, _call)):
    """Call both modules on the same inputs (through ``calls``, a (torch, webgrad) pair of
    ``call(module, *args, **kwargs)``); check outputs, then (``backward``) the gradients of a
    random weighting of every float output w.r.t. the float inputs and every parameter."""
    t_args, w_args, leaves = to_both(tuple(args))
    kwargs = kwargs or {}
    t_kw, w_kw, kw_leaves = to_both(tuple(kwargs.values()))
    t_out = calls[0](tm, *t_args, **dict(zip(kwargs, t_kw)))
    w_out = calls[1](wm, *w_args, **dict(zip(kwargs, w_kw)))
    pairs = tensor_pairs(t_out, w_out)
    for what, t, w in pairs:
        assert_close(w, t, dtype, what)
    if backward:
        compare_backward(tm, wm, pairs, leaves + kw_leaves, dtype, seed)
    return t_out, w_out


def compare_backward(tm, wm, pairs, leaves, dtype, seed=1):
    rng = np.random.default_rng(seed)
    t_loss, w_loss = 0, 0
    for _, t, w in pairs:
        if t.is_floating_point() and t.requires_grad:
            g = rng.standard_normal(tuple(t.shape)).astype(dtype)
            t_loss = t_loss + (t * torch.tensor(g)).sum()
            w_loss = w_loss + (w * wg.tensor(g)).sum()
    t_loss.backward()
    w_loss.backward()
    w_params = dict(wm.named_parameters())
    named = [(f"input {i}", t, w) for i, (t, w) in enumerate(leaves)]
    for what, t, w in named + [(name, p, w_params[name]) for name, p in tm.named_parameters()]:
        if t.grad is None:                       # unused by torch: unused (or given zeros) here
            assert w.grad is None or not w.grad.abs().sum().item(), f"grad of {what}"
        else:
            assert_close(w.grad, t.grad, dtype, f"grad of {what}")


def same_error(call):
    """``call(lib)`` with lib torch's or webgrad's namespace (``.nn``, ``.tensor``) raises the same
    exception type on both; returns the two exceptions."""
    errors = []
    for lib in (_Lib(torch), _Lib(wg)):
        try:
            call(lib)
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            errors.append(e)
        else:
            errors.append(None)
    t_err, w_err = errors
    assert t_err is not None, "torch raised nothing: the case is wrong"
    assert w_err is not None, f"webgrad raised nothing where torch raised {type(t_err).__name__}: {t_err}"
    assert type(w_err) is type(t_err), \
        f"torch: {type(t_err).__name__}: {t_err}; webgrad: {type(w_err).__name__}: {w_err}"
    return t_err, w_err


class _Lib:
    """A library's ``nn`` and a ``tensor(array)`` that makes int arrays long indices."""

    def __init__(self, module):
        self.nn, self._module = module.nn, module

    def tensor(self, a):
        a = np.asarray(a)
        return self._module.tensor(a, dtype=self._module.long) if a.dtype.kind == "i" else self._module.tensor(a)


def sgd_losses(model, make_loss, steps, lr, optim):
    """Losses of ``steps`` SGD steps of ``make_loss(model)``."""
    opt = optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = make_loss(model)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
