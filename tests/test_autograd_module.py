"""``webgrad.autograd``'s PyTorch names beyond backward/grad, against torch: ``gradcheck`` and
``gradgradcheck`` (same verdicts and messages), anomaly detection (``detect_anomaly``,
``set_detect_anomaly``: the NaN error naming the node), the ``grad_mode``, ``function``
(``once_differentiable``) and ``variable`` submodules."""
import warnings

import pytest
import torch

import webgrad as wg
from webgrad.autograd.gradcheck import GradcheckError

LIBS = (torch, wg)


def _leaf(lib, values, dtype="float64"):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


class WrongCube:
    """A custom Function whose backward is off by a factor: gradcheck must catch it."""

    @staticmethod
    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, dy):
                (x,) = ctx.saved_tensors
                return dy * 2 * x ** 2          # should be 3 x^2
        return Cube


FUNCTIONS = {   # name -> (function of (lib, *inputs), inputs as lists)
    "tanh times exp": (lambda lib, x: x.tanh() * x.exp(), ([0.3, -1.2, 2.0],)),
    "matmul and sum": (lambda lib, a, b: ((a @ b) ** 2).sum(), ([[1.0, 2.0], [3.0, -1.0]], [[0.5], [-2.0]])),
    "two outputs": (lambda lib, x: (x.sin(), x.sum() * 3), ([0.1, 0.2],)),
    "detach: wrong": (lambda lib, x: x.detach() * 2 + x, ([1.0, 2.0],)),
    "wrong custom backward": (lambda lib, x: WrongCube.make(lib).apply(x), ([1.0, -2.0],)),
    "softmax": (lambda lib, x: lib.softmax(x, dim=-1), ([[0.1, 0.5, -0.3], [1.0, 2.0, 0.0]],)),
    "int output only": (lambda lib, x: x.long(), ([1.0, 2.0],)),
    "constant with a float output": (lambda lib, x: x.detach() * 2, ([1.0, 2.0],)),
    "non-tensor argument": (lambda lib, x, n: x * n, ([1.0, 2.0], 3)),
}


def _run(lib, check, name, **kwargs):
    fn, data = FUNCTIONS[name]
    inputs = tuple(_leaf(lib, d) if isinstance(d, list) else d for d in data)
    try:
        return getattr(lib.autograd, check)(lambda *xs: fn(lib, *xs), inputs, **kwargs), None
    except Exception as e:   # noqa: BLE001  (the kind and text are compared with torch's below)
        return type(e).__name__, str(e).replace("torch.", "webgrad.")


NO_GRADIENTS = ("int output only", "constant with a float output")   # gradgradcheck has no gradient to check
CASES = [("gradcheck", n) for n in FUNCTIONS] + [("gradgradcheck", n) for n in FUNCTIONS if n not in NO_GRADIENTS]


@pytest.mark.parametrize("check, name", CASES)
def test_verdicts_and_messages_match_torch(check, name):
    theirs, ours = _run(torch, check, name), _run(wg, check, name)
    assert ours == theirs
    assert _run(wg, check, name, raise_exception=False)[0] == _run(torch, check, name, raise_exception=False)[0]


def test_gradcheck_errors_and_warnings_as_torch():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
            lib.autograd.gradcheck(lambda t: t * 2, (x,))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = lib.autograd.gradcheck(lambda t: t * 2, (lib.ones(2, requires_grad=True),), raise_exception=False)
        assert ok is False and "Input #0 requires gradient and is not a double precision" in str(caught[0].message)
    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(NotImplementedError, match="forward-mode"):   # torch checks forward AD; webgrad has none
        wg.autograd.gradcheck(lambda t: t * 2, (_leaf(wg, [1.0]),), check_forward_ad=True)


def test_gradcheck_on_every_backend(backend):
    x = wg.tensor([0.5, 1.5], requires_grad=True)   # float32: a looser eps and tolerance, as float32 needs
    assert wg.autograd.gradcheck(lambda t: (t * t).exp(), (x,), eps=1e-2, atol=1e-2, rtol=1e-2)
    assert not wg.autograd.gradcheck(lambda t: t.detach() * t, (x,), eps=1e-2, atol=1e-2, rtol=1e-2,
                                     raise_exception=False)


def _nan_error(lib, create_graph=False):
    x = lib.zeros(2, requires_grad=True)
    with lib.autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError) as err:
            y = (x / x).sum()
            lib.autograd.grad(y, x, create_graph=True) if create_graph else y.backward()
    return str(err.value)


@pytest.mark.parametrize("create_graph", [False, True])
def test_anomaly_detection_names_the_node_as_torch(create_graph):
    theirs = _nan_error(torch, create_graph)
    assert _nan_error(wg, create_graph) == theirs


def test_anomaly_modes_as_torch(backend):
    for lib in LIBS:
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            with lib.autograd.detect_anomaly():
                assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        assert not lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.autograd.set_detect_anomaly(True)   # a call sets it (as set_grad_enabled)
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
    x = wg.zeros(2, requires_grad=True)
    with wg.autograd.set_detect_anomaly(True, check_nan=False):
        (x / x).sum().backward()   # not checked: NaN gradients arrive
    assert x.grad.isnan().all().item()


def test_anomaly_mode_runs_compiled_functions_eagerly():
    x = wg.zeros(2, requires_grad=True)

    def step(t):
        return (t / t).sum()
    compiled = wg.compile(step)
    compiled(x).backward(), compiled(x).backward()     # traced, then replayed
    with wg.autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="returned nan values"):
            compiled(x).backward()


def test_grad_mode_function_and_variable_modules():
    gm = wg.autograd.grad_mode
    assert (gm.no_grad, gm.enable_grad, gm.set_grad_enabled, gm.inference_mode) == (
        wg.no_grad, wg.enable_grad, wg.set_grad_enabled, wg.inference_mode)
    assert (wg.autograd.enable_grad, wg.autograd.inference_mode) == (wg.enable_grad, wg.inference_mode)
    assert wg.autograd.function.Function is wg.autograd.Function is wg.Function
    assert wg.autograd.variable.Variable is wg.autograd.Variable
    assert gm.is_multithreading_enabled() is torch.autograd.grad_mode.torch.is_grad_enabled() is True


def _once(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            return 2 * x * dy
    x = lib.tensor([3.0, -1.0], requires_grad=True)
    v = lib.ones(2, requires_grad=True)   # an output gradient that requires grad: the pass must mark its result
    (g,) = lib.autograd.grad(Square.apply(x), x, v, create_graph=True)
    first = g.tolist()
    with pytest.raises(RuntimeError) as err:
        g.sum().backward()
    y = lib.tensor([2.0], requires_grad=True)
    Square.apply(y).backward()
    return first, str(err.value), y.grad.tolist()


def test_once_differentiable_as_torch():
    assert _once(wg) == _once(torch)


def _ctx_features(lib):
    """mark_non_differentiable, PyTorch 2's setup_context form, a non-tensor output, set_materialize_grads."""
    class SortF(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            g = lib.zeros_like(gv)
            g[i] = gv
            return g

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k, k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, g, gk):
            return g * ctx.k, None
    x = lib.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = SortF.apply(x)
    seen = [v.requires_grad, i.requires_grad, i.grad_fn is None]
    (v * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    seen.append(x.grad.tolist())
    y, k = Scale.apply(x, 3.0)
    y.sum().backward()
    return seen + [k, y.requires_grad, x.grad.tolist()]


def test_function_ctx_as_torch(backend):
    assert _ctx_features(wg) == _ctx_features(torch)
