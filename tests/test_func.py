"""webgrad.func (PyTorch's torch.func) and webgrad.autograd.functional against torch, on every
backend: values, gradients through the transforms, return structures (tuples vs tensors,
argnums, has_aux, trees), vmap's in_dims/out_dims, per-sample gradients, ensembles, MAML's
second-order step, and the errors PyTorch raises. Finite differences (float64, cpu) check the
derivative paths the transforms add (the double-backward trick, gradients through vmap,
functional_call and grad)."""
import numpy as np
import pytest
import torch
import torch.func as TF
import torch.autograd.functional as TAF

import webgrad as wg
import webgrad.autograd.functional as WAF
import webgrad.func as WF
from opinfo import gradcheck

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def to_np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def assert_same(got, want, rtol=1e-4, atol=1e-5, where="out"):
    """Two results agree: the same nesting (tuple/list/dict) and close tensors."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, wg.Tensor), f"{where}: got {type(got).__name__}, want a tensor"
        assert tuple(got.shape) == tuple(want.shape), f"{where}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys {list(got)} vs {list(want)}"
        for k in want:
            assert_same(got[k], want[k], rtol, atol, f"{where}[{k!r}]")
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), f"{where}: {type(got)} {len(got)} vs {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} vs {want!r}"


def both(case, *arrays, rtol=1e-4, atol=1e-5):
    """Run ``case(lib, func_module, functional_module, *tensors)`` under torch and webgrad (on the
    fixture's backend) and compare."""
    want = case(torch, TF, TAF, *[torch.tensor(a) for a in arrays])
    got = case(wg, WF, WAF, *[wg.tensor(a) for a in arrays])
    assert_same(got, want, rtol, atol)
    return got


def same_error(case, *arrays):
    """torch and webgrad raise the same exception type for ``case``."""
    with pytest.raises(Exception) as want:
        case(torch, TF, TAF, *[torch.tensor(a) for a in arrays])
    with pytest.raises(want.type):
        case(wg, WF, WAF, *[wg.tensor(a) for a in arrays])


# ---------------------------------------------------------------- grad, grad_and_value

GRAD_CASES = {
    "elementwise": lambda m, F, A, x, w: F.grad(lambda x: (x.sin() * x).sum())(x),
    "matmul_argnums_tuple": lambda m, F, A, x, w: F.grad(lambda x, w: (x @ w).tanh().sum(), argnums=(0, 1))(x, w),
    "negative_argnum": lambda m, F, A, x, w: F.grad(lambda x, w: (x @ w).pow(2).mean(), argnums=-1)(x, w),
    "reduction_max_softmax": lambda m, F, A, x, w: F.grad(lambda x: x.softmax(-1).max() + x.amax())(x),
    "dict_argument": lambda m, F, A, x, w: F.grad(lambda p, x: (x @ p["w"]).exp().sum() + p["b"].sum())(
        {"w": w, "b": x[0]}, x),
    "has_aux": lambda m, F, A, x, w: F.grad(lambda x: ((x * 2).sum(), {"aux": x.cos()}), has_aux=True)(x),
    "value": lambda m, F, A, x, w: F.grad_and_value(lambda x, w: (x @ w).sum(), argnums=1)(x, w),
    "value_aux": lambda m, F, A, x, w: F.grad_and_value(lambda x: (x.sum() ** 2, (x.mean(), [x])), has_aux=True)(x),
    "unused_argument_zeros": lambda m, F, A, x, w: F.grad(lambda x, w: x.sum(), argnums=1)(x, w),
    "grad_of_grad": lambda m, F, A, x, w: F.grad(lambda x: F.grad(lambda y: (y ** 3).sum())(x).sin().sum())(x),
    "kwargs_pass_through": lambda m, F, A, x, w: F.grad(lambda x, scale=1.0: (x * scale).sum())(x, scale=3.0),
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_grad_matches_torch(name, backend):
    both(GRAD_CASES[name], arr(2, 3), arr(3, 4))


def test_grad_of_a_module_through_functional_call(backend):
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    model = wg.nn.Sequential(wg.nn.Linear(3, 5), wg.nn.Tanh(), wg.nn.Linear(5, 2))
    model.load_state_dict({k: wg.tensor(to_np(v)) for k, v in tmodel.state_dict().items()})
    x = arr(4, 3)

    def run(lib, F, net):
        params = {k: v.detach() for k, v in net.named_parameters()}
        loss = lambda p, x: (F.functional_call(net, p, (x,)) ** 2).mean()
        return F.grad_and_value(loss)(params, lib.tensor(x))
    assert_same(run(wg, WF, model), run(torch, TF, tmodel))
    assert all(p.grad is None for p in model.parameters())


# ---------------------------------------------------------------- vjp, jvp, linearize, Jacobians

VECTOR_CASES = {
    "vjp": lambda m, F, A, x, w: (lambda o, fn: (o, fn(m.ones_like(o))))(*F.vjp(lambda x: (x @ w).sin(), x)),
    "vjp_tree": lambda m, F, A, x, w: (lambda o, fn: fn({"a": m.ones_like(o["a"]), "b": o["b"] * 2}))(
        *F.vjp(lambda x, w: {"a": x.exp(), "b": (x @ w).sum(0)}, x, w)),
    "vjp_aux": lambda m, F, A, x, w: (lambda o, fn, aux: (fn(o), aux))(*F.vjp(lambda x: (x * x, x.sum()), x,
                                                                            has_aux=True)),
    "vjp_twice": lambda m, F, A, x, w: (lambda o, fn: (fn(o), fn(o * 3)))(*F.vjp(lambda x: x.tanh(), x)),
    "jvp": lambda m, F, A, x, w: F.jvp(lambda x, w: (x @ w).relu() * 2, (x, w), (x.cos(), w * 0.5)),
    "jvp_tuple_out_aux": lambda m, F, A, x, w: F.jvp(lambda x: ((x.exp(), x.sum()), x.mean()), (x,), (m.ones_like(x),),
                                                       has_aux=True),
    "jvp_constant_output": lambda m, F, A, x, w: F.jvp(lambda x: w * 2, (x,), (x,)),
    "linearize": lambda m, F, A, x, w: (lambda o, fn: (o, fn(x.cos()), fn(m.ones_like(x))))(
        *F.linearize(lambda x: (x ** 3).sum(1), x)),
    "jacrev": lambda m, F, A, x, w: F.jacrev(lambda x: (x @ w).sigmoid())(x),
    "jacrev_argnums_tuple_outputs": lambda m, F, A, x, w: F.jacrev(lambda x, w: (x @ w, x.sum()), argnums=(0, 1))(x, w),
    "jacrev_aux": lambda m, F, A, x, w: F.jacrev(lambda x: (x.exp(), x * 2), has_aux=True, chunk_size=2)(x),
    "jacfwd": lambda m, F, A, x, w: F.jacfwd(lambda x, w: (x @ w).log_softmax(-1), argnums=1)(x, w),
    "jacfwd_dict": lambda m, F, A, x, w: F.jacfwd(lambda p: {"y": p["x"] * p["w"][0, :3]}, argnums=0)({"x": x, "w": w}),
    "hessian": lambda m, F, A, x, w: F.hessian(lambda x: (x.sin() * x ** 2).sum())(x),
    "hessian_argnums": lambda m, F, A, x, w: F.hessian(lambda x, w: (x @ w).tanh().sum(), argnums=(0, 1))(x, w),
    "jacrev_of_jacrev": lambda m, F, A, x, w: F.jacrev(F.jacrev(lambda x: x.exp().prod()))(x[0]),
}


@pytest.mark.parametrize("name", VECTOR_CASES)
def test_vector_transforms_match_torch(name, backend):
    both(VECTOR_CASES[name], arr(2, 3), arr(3, 4))


# ---------------------------------------------------------------- torch.autograd.functional

FUNCTIONAL_CASES = {
    "vjp": lambda m, F, A, x, w: A.vjp(lambda x: (x @ w).sin(), x, m.ones(2, 4)),
    "vjp_tuples": lambda m, F, A, x, w: A.vjp(lambda x, w: (x @ w, x.exp()), (x, w), (m.ones(2, 4), x)),
    "vjp_unused_zeros": lambda m, F, A, x, w: A.vjp(lambda x, w: x.sum(), (x, w)),
    "jvp": lambda m, F, A, x, w: A.jvp(lambda x: x.tanh() * 3, x, x.cos()),
    "jvp_tuples": lambda m, F, A, x, w: A.jvp(lambda x, w: ((x @ w).relu(), x.sum()), (x, w), (x, w)),
    "jacobian": lambda m, F, A, x, w: A.jacobian(lambda x: (x @ w).sigmoid(), x),
    "jacobian_tuples": lambda m, F, A, x, w: A.jacobian(lambda x, w: (x @ w, x.exp()), (x, w)),
    "jacobian_vectorize": lambda m, F, A, x, w: A.jacobian(lambda x: x.exp() * 2, x, vectorize=True),
    "jacobian_forward_mode": lambda m, F, A, x, w: A.jacobian(lambda x, w: x @ w, (x, w), vectorize=True,
                                                              strategy="forward-mode"),
    "hessian": lambda m, F, A, x, w: A.hessian(lambda x: (x.sin() * x).sum(), x),
    "hessian_tuples": lambda m, F, A, x, w: A.hessian(lambda x, w: (x @ w).tanh().sum(), (x, w)),
    "hessian_vectorize_forward": lambda m, F, A, x, w: A.hessian(lambda x: (x ** 3).sum(), x, vectorize=True,
                                                                 outer_jacobian_strategy="forward-mode"),
    "hvp": lambda m, F, A, x, w: A.hvp(lambda x: (x.sin() * x ** 2).sum(), x, x.cos()),
    "vhp_tuples": lambda m, F, A, x, w: A.vhp(lambda x, w: (x @ w).tanh().sum(), (x, w), (x, w)),
    "hvp_linear_zero": lambda m, F, A, x, w: A.hvp(lambda x: (x * 2).sum(), x, x),
}


@pytest.mark.parametrize("name", FUNCTIONAL_CASES)
def test_autograd_functional_matches_torch(name, backend):
    both(FUNCTIONAL_CASES[name], arr(2, 3), arr(3, 4))


@pytest.mark.parametrize("fn", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_autograd_functional_create_graph(fn, create_graph, backend):
    """With create_graph the results keep their graph to inputs that require grad (and only then)."""
    f = {"hessian": lambda x: (x ** 3).sum(), "hvp": lambda x: (x ** 3).sum(), "vhp": lambda x: (x ** 3).sum()}.get(
        fn, lambda x: x ** 3)
    x_np = arr(3)

    def run(lib, A):
        x = lib.tensor(x_np, requires_grad=True)
        args = (f, x) if fn in ("jacobian", "hessian") else (f, x, lib.ones(3))
        res = getattr(A, fn)(*args, create_graph=create_graph)
        res = res if isinstance(res, tuple) else (res,)
        assert all(r.requires_grad == create_graph for r in res), [r.requires_grad for r in res]
        if not create_graph:
            return res
        return res + lib.autograd.grad(res[-1].sum(), x)
    assert_same(run(wg, WAF), run(torch, TAF))


FUNCTIONAL_ERRORS = {
    "not_a_tensor": lambda m, F, A, x, w: A.vjp(lambda x: x, (x, 3)),
    "output_not_a_tensor": lambda m, F, A, x, w: A.jacobian(lambda x: 3.0, x),
    "v_none_not_scalar": lambda m, F, A, x, w: A.vjp(lambda x: x * 2, x),
    "v_wrong_size": lambda m, F, A, x, w: A.jvp(lambda x: x * 2, x, w),
    "v_wrong_length": lambda m, F, A, x, w: A.vjp(lambda x, w: (x, w), (x, w), (x,)),
    "strict_unused": lambda m, F, A, x, w: A.vjp(lambda x, w: x.sum(), (x, w), strict=True),
    "strict_output_constant": lambda m, F, A, x, w: A.jacobian(lambda x: w * 1, x, strict=True),
    "strict_linear_hessian": lambda m, F, A, x, w: A.hessian(lambda x: x.sum(), x, strict=True),
    "strategy_unknown": lambda m, F, A, x, w: A.jacobian(lambda x: x, x, strategy="sideways"),
    "forward_mode_needs_vectorize": lambda m, F, A, x, w: A.jacobian(lambda x: x, x, strategy="forward-mode"),
    "forward_mode_create_graph": lambda m, F, A, x, w: A.jacobian(lambda x: x, x, create_graph=True,
                                                                  strategy="forward-mode", vectorize=True),
    "forward_mode_strict": lambda m, F, A, x, w: A.jacobian(lambda x: x, x, strict=True, strategy="forward-mode",
                                                            vectorize=True),
    "vectorize_strict": lambda m, F, A, x, w: A.jacobian(lambda x: x, x, strict=True, vectorize=True),
    "hessian_not_scalar": lambda m, F, A, x, w: A.hessian(lambda x: x * 2, x),
    "hvp_tuple_output": lambda m, F, A, x, w: A.hvp(lambda x: (x.sum(), x.sum()), x, x),
    "hessian_forward_without_vectorize": lambda m, F, A, x, w: A.hessian(lambda x: x.sum(), x,
                                                                         outer_jacobian_strategy="forward-mode"),
}


@pytest.mark.parametrize("name", FUNCTIONAL_ERRORS)
def test_autograd_functional_errors_match_torch(name):
    same_error(FUNCTIONAL_ERRORS[name], arr(2, 3), arr(3, 4))


# ---------------------------------------------------------------- vmap

VMAP_CASES = {
    "row_dot": lambda m, F, A, x, w, v: F.vmap(lambda r: r.dot(r))(x),
    "in_dims_none": lambda m, F, A, x, w, v: F.vmap(lambda r, w: r @ w, in_dims=(0, None))(x, w),
    "in_dim_1": lambda m, F, A, x, w, v: F.vmap(lambda c: c * c.sum(), in_dims=1)(x),
    "negative_in_dim": lambda m, F, A, x, w, v: F.vmap(lambda c: c.exp(), in_dims=-1)(w),
    "out_dims_1": lambda m, F, A, x, w, v: F.vmap(lambda r, w: r @ w, in_dims=(0, None), out_dims=1)(x, w),
    "negative_out_dim": lambda m, F, A, x, w, v: F.vmap(lambda r: r.outer(r), out_dims=-1)(x),
    "tuple_out_dims_with_none": lambda m, F, A, x, w, v: F.vmap(lambda r, w: (r @ w, w.sum(), r.max()),
                                                                in_dims=(0, None), out_dims=(1, None, 0))(x, w),
    "nested_in_dims_dict": lambda m, F, A, x, w, v: F.vmap(lambda d, s: d["a"] * d["b"][0] + s,
                                                           in_dims=({"a": 0, "b": (1,)}, None))(
        {"a": x, "b": (x.T.contiguous(),)}, v[0]),
    "list_input_and_dict_output": lambda m, F, A, x, w, v: F.vmap(lambda l: {"s": l[0] + l[1], "p": [l[0] * 2]})(
        [x, x.cos()]),
    "unbatched_output_expands": lambda m, F, A, x, w, v: F.vmap(lambda r: w.sum(0))(x),
    "kwargs_unmapped": lambda m, F, A, x, w, v: F.vmap(lambda r, scale=None: r * scale)(x, scale=v[:3]),
    "nested_vmap": lambda m, F, A, x, w, v: F.vmap(F.vmap(lambda a, b: a * b, in_dims=(0, None)),
                                                   in_dims=(None, 0))(x[0], w.T.contiguous()),
    "vmap_of_jacrev": lambda m, F, A, x, w, v: F.vmap(F.jacrev(lambda r: (r @ w).tanh()))(x),
    "vmap_of_hessian": lambda m, F, A, x, w, v: F.vmap(F.hessian(lambda r: (r ** 3).sum()))(x),
    "vmap_of_vjp": lambda m, F, A, x, w, v: F.vmap(lambda r: F.vjp(lambda r: r.exp(), r)[1](r)[0])(x),
    "vmap_of_jvp": lambda m, F, A, x, w, v: F.vmap(lambda r: F.jvp(lambda r: r.sin(), (r,), (r,))[1])(x),
    "zero_batch": lambda m, F, A, x, w, v: F.vmap(lambda r: r * 2, out_dims=1)(x[:0]),
    "chunk_size": lambda m, F, A, x, w, v: F.vmap(lambda r: r.sum(), chunk_size=1)(x),
    "torch_vmap_alias": lambda m, F, A, x, w, v: m.vmap(lambda r: r.norm())(x),
}


@pytest.mark.parametrize("name", VMAP_CASES)
def test_vmap_matches_torch(name, backend):
    both(VMAP_CASES[name], arr(2, 3), arr(3, 4), arr(4))


def test_gradients_flow_through_vmap(backend):
    def case(m, F, A, x, w, v):
        x, w = x.requires_grad_(), w.requires_grad_()
        out = F.vmap(lambda r, w: (r @ w).sin(), in_dims=(0, None), out_dims=1)(x, w)
        return m.autograd.grad((out * out).sum(), (x, w))
    both(case, arr(2, 3), arr(3, 4), arr(4))


VMAP_ERRORS = {
    "sizes_differ": lambda m, F, A, x, w, v: F.vmap(lambda a, b: a)(x, w),
    "in_dims_list": lambda m, F, A, x, w, v: F.vmap(lambda a: a, in_dims=[0])(x),
    "in_dims_none": lambda m, F, A, x, w, v: F.vmap(lambda a: a, in_dims=None)(x),
    "in_dims_length": lambda m, F, A, x, w, v: F.vmap(lambda a, b: a, in_dims=(0,))(x, x),
    "in_dim_float": lambda m, F, A, x, w, v: F.vmap(lambda a: a, in_dims=(0.5,))(x),
    "in_dim_out_of_range": lambda m, F, A, x, w, v: F.vmap(lambda a: a, in_dims=2)(x),
    "batched_number": lambda m, F, A, x, w, v: F.vmap(lambda a, s: a * s)(x, 2.0),
    "dict_keys_differ": lambda m, F, A, x, w, v: F.vmap(lambda d: d["a"], in_dims=({"b": 0},))({"a": x}),
    "no_inputs": lambda m, F, A, x, w, v: F.vmap(lambda: x)(),
    "returns_number": lambda m, F, A, x, w, v: F.vmap(lambda a: 3)(x),
    "out_dim_out_of_range": lambda m, F, A, x, w, v: F.vmap(lambda a: a, out_dims=3)(x),
    "out_dims_structure": lambda m, F, A, x, w, v: F.vmap(lambda a: (a, a), out_dims=(0, 1, 2))(x),
    "randomness_unknown": lambda m, F, A, x, w, v: F.vmap(lambda a: a, randomness="sometimes")(x),
    "chunk_size_zero": lambda m, F, A, x, w, v: F.vmap(lambda a: a, chunk_size=0)(x),
    "random_in_error_mode": lambda m, F, A, x, w, v: F.vmap(lambda a: a * m.rand(3))(x),
    "dropout_in_error_mode": lambda m, F, A, x, w, v: F.vmap(lambda a: m.nn.functional.dropout(a, 0.5))(x),
    "jacfwd_random": lambda m, F, A, x, w, v: F.jacfwd(lambda a: a * m.randn(3))(x[0]),
    "jacfwd_randomness_unknown": lambda m, F, A, x, w, v: F.jacfwd(lambda a: a, randomness="x")(x[0]),
}


@pytest.mark.parametrize("name", VMAP_ERRORS)
def test_vmap_errors_match_torch(name):
    same_error(VMAP_ERRORS[name], arr(2, 3), arr(3, 4), arr(4))


def test_randomness_error_leaves_the_generator_as_it_was():
    wg.manual_seed(3)
    state = wg.get_rng_state().tolist()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        wg.vmap(lambda a: a + wg.rand(2))(wg.ones(4, 2))
    assert wg.get_rng_state().tolist() == state


def test_randomness_same_and_different(backend):
    x = wg.zeros(5, 3)
    same = wg.vmap(lambda a: a + wg.rand(3), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[:1])          # one draw for every element
    different = wg.vmap(lambda a: a + wg.rand(3), randomness="different")(x)
    rows = {tuple(r) for r in different.numpy().round(6).tolist()}
    assert len(rows) == 5                                        # each element its own draw
    state = wg.get_rng_state()                                   # 'same' advanced it as one element would
    wg.vmap(lambda a: wg.rand(3), randomness="same")(x)
    after_same = wg.get_rng_state().tolist()
    wg.set_rng_state(state)
    wg.rand(3)
    assert wg.get_rng_state().tolist() == after_same


# ---------------------------------------------------------------- purity and grad mode


def test_transforms_leave_grad_unset_and_work_under_no_grad(backend):
    model = wg.nn.Linear(3, 2)
    x = wg.randn(4, 3)
    loss = lambda x: model(x).pow(2).sum()          # the parameters are closed over and require grad
    g = WF.grad(loss)(x)
    assert all(p.grad is None for p in model.parameters()) and x.grad is None
    assert g.requires_grad                          # as torch: joined to the parameters' graph
    with wg.no_grad():
        g2 = WF.grad(loss)(x)
        j = WF.jacrev(lambda x: model(x))(x[0])
        per = WF.vmap(WF.grad(loss))(x)
    assert not g2.requires_grad and not j.requires_grad and not per.requires_grad
    assert np.allclose(g2.numpy(), g.detach().numpy(), atol=1e-5)
    assert all(p.grad is None for p in model.parameters())


def test_result_requires_grad_as_torch(backend):
    def flags(lib, F):
        x = lib.tensor(arr(3))
        xr = lib.tensor(arr(3), requires_grad=True)
        f = lambda x: (x ** 3).sum()
        out = [F.grad(f)(x).requires_grad, F.grad(f)(xr).requires_grad, F.jacrev(lambda x: x.exp())(xr).requires_grad,
               F.vjp(lambda x: x * 2, x)[0].requires_grad, F.jvp(lambda x: x * x, (xr,), (x,))[1].requires_grad,
               F.grad_and_value(f)(x)[1].requires_grad, F.vmap(lambda r: r * 2)(xr).requires_grad]
        with lib.no_grad():
            out.append(F.grad(f)(xr).requires_grad)
        return out
    assert flags(wg, WF) == flags(torch, TF)


def test_grad_composes_with_backward(backend):
    """torch.func.grad's result keeps the graph to an input that requires grad outside: d/dx of grad."""
    def case(m, F, A, x, w):
        x = x.requires_grad_()
        g = F.grad(lambda x: (x.sin() * x).sum())(x)
        return m.autograd.grad((g * g).sum(), x)
    both(case, arr(5), arr(1))


# ---------------------------------------------------------------- models: per-sample grads, ensembles, MAML


def _mlp_pair(seed=0):
    torch.manual_seed(seed)
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    model = wg.nn.Sequential(wg.nn.Linear(4, 8), wg.nn.ReLU(), wg.nn.Linear(8, 3))
    model.load_state_dict({k: wg.tensor(to_np(v)) for k, v in tmodel.state_dict().items()})
    return tmodel, model


def test_per_sample_gradients_of_an_mlp(backend):
    tmodel, model = _mlp_pair()
    x, y = arr(6, 4), RNG.integers(0, 3, 6)

    def per_sample(lib, F, net):
        params = {k: v.detach() for k, v in net.named_parameters()}
        buffers = {k: v.detach() for k, v in net.named_buffers()}

        def loss(params, buffers, sample, target):
            out = F.functional_call(net, (params, buffers), (sample.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
        return F.vmap(F.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, lib.tensor(x), lib.tensor(y))
    got = per_sample(wg, WF, model)
    assert_same(got, per_sample(torch, TF, tmodel))
    # the mean of the per-sample gradients is the batch gradient
    wg.nn.functional.cross_entropy(model(wg.tensor(x)), wg.tensor(y)).backward()
    for k, p in model.named_parameters():
        np.testing.assert_allclose(got[k].numpy().mean(0), p.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_model_ensemble_with_stack_module_state(backend):
    pairs = [_mlp_pair(seed) for seed in range(3)]
    x = arr(5, 4)

    def ensemble(lib, F, models, minibatches):
        params, buffers = F.stack_module_state(models)
        base = models[0]
        fmodel = lambda p, b, x: F.functional_call(base, (p, b), (x,))
        shared = F.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, lib.tensor(x))
        each = F.vmap(fmodel)(params, buffers, lib.tensor(np.stack([x, x * 2, -x])))
        assert all(p.requires_grad and p.is_leaf for p in params.values())
        return shared, each, lib.autograd.grad(shared.sum(), params["0.weight"])
    assert_same(ensemble(wg, WF, [m for _, m in pairs], None), ensemble(torch, TF, [t for t, _ in pairs], None))


def test_maml_second_order_gradient(backend):
    """MAML: adapt with grad(create_graph) through functional_call, differentiate the query loss
    w.r.t. the initial parameters (second order) -- torch.func's numbers."""
    tmodel, model = _mlp_pair(1)
    xs, ys, xq, yq = arr(5, 4), arr(5, 3), arr(5, 4), arr(5, 3)

    def meta_grads(lib, F, net):
        params = dict(net.named_parameters())
        loss = lambda p, x, y: ((F.functional_call(net, p, (x,)) - y) ** 2).mean()
        adapted = params
        for _ in range(2):
            grads = F.grad(loss)(adapted, lib.tensor(xs), lib.tensor(ys))
            adapted = {k: adapted[k] - 0.1 * grads[k] for k in adapted}
        query = loss(adapted, lib.tensor(xq), lib.tensor(yq))
        return query, dict(zip(params, lib.autograd.grad(query, list(params.values()))))
    assert_same(meta_grads(wg, WF, model), meta_grads(torch, TF, tmodel))
    assert all(p.grad is None for p in model.parameters())


def test_vmap_over_batch_norm_after_replace(backend):
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    net = wg.nn.Sequential(wg.nn.Linear(3, 4), wg.nn.BatchNorm1d(4))
    net.load_state_dict({k: wg.tensor(to_np(v)) for k, v in tnet.state_dict().items()})
    x = arr(2, 5, 3)

    def run(F, m, lib):
        F.replace_all_batch_norm_modules_(m)
        assert m[1].running_mean is None and not m[1].track_running_stats
        return F.vmap(m)(lib.tensor(x))
    assert_same(run(WF, net, wg), run(TF, tnet, torch))


# ---------------------------------------------------------------- functional_call


class Tied(wg.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = wg.nn.Linear(2, 2, bias=False)
        self.b = wg.nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight
        self.register_buffer("scale", wg.ones(1))

    def forward(self, x):
        return self.b(self.a(x)) * self.scale


def test_functional_call_swaps_and_restores(backend):
    lin = wg.nn.Linear(2, 2)
    original = lin.weight
    w = wg.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    out = WF.functional_call(lin, {"weight": w}, wg.tensor([[1.0, 1.0]]))   # a lone argument, not a tuple
    assert lin.weight is original and lin.bias is not None
    np.testing.assert_allclose(out.detach().numpy(), (np.array([[1.0, 2.0]]) + lin.bias.detach().numpy()), rtol=1e-6)
    (gw,) = wg.autograd.grad(out.sum(), w)
    np.testing.assert_allclose(gw.numpy(), [[1.0, 1.0], [1.0, 1.0]])
    assert original.grad is None

    def boom(module, args):
        raise ValueError("boom")
    lin.register_forward_pre_hook(boom)
    with pytest.raises(ValueError, match="boom"):
        WF.functional_call(lin, {"weight": w, "extra": wg.ones(1)}, (wg.ones(1, 2),))
    assert lin.weight is original and not hasattr(lin, "extra")     # put back after the error


def test_functional_call_tied_weights_and_strict():
    net = Tied()
    x = wg.tensor([[1.0, 2.0]])
    w = wg.tensor([[2.0, 0.0], [0.0, 2.0]])
    tied = WF.functional_call(net, {"a.weight": w}, (x,))
    untied = WF.functional_call(net, {"a.weight": w}, (x,), tie_weights=False)
    a = net.a.weight.detach().numpy()
    np.testing.assert_allclose(tied.numpy(), x.numpy() @ (w.numpy() @ w.numpy()).T, rtol=1e-6)
    np.testing.assert_allclose(untied.detach().numpy(), x.numpy() @ w.numpy().T @ a.T, rtol=1e-5)
    with pytest.raises(ValueError, match="tied"):
        WF.functional_call(net, {"a.weight": w, "b.weight": w * 1}, (x,))
    with pytest.raises(RuntimeError, match="Missing key"):
        WF.functional_call(net, {"a.weight": w}, (x,), strict=True, tie_weights=False)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        WF.functional_call(net, {"a.weight": w, "b.weight": w, "scale": wg.ones(1), "c": w}, (x,), strict=True)
    out = WF.functional_call(net, ({"a.weight": w}, {"scale": wg.tensor([3.0])}), (x,))
    np.testing.assert_allclose(out.numpy(), tied.numpy() * 3, rtol=1e-6)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        WF.functional_call(net, ({"scale": w}, {"scale": w}), (x,))
    with pytest.raises(ValueError, match="dict"):
        WF.functional_call(net, 3, (x,))


FUNCTIONAL_CALL_ERRORS = {
    "strict_missing_bias": lambda m, F, lin: F.functional_call(lin, {"weight": m.ones(2, 2)}, (m.ones(1, 2),),
                                                               strict=True),
    "not_all_dicts": lambda m, F, lin: F.functional_call(lin, [{"weight": m.ones(2, 2)}, 3], (m.ones(1, 2),)),
    "value_not_a_tensor": lambda m, F, lin: F.functional_call(lin, {"weight": 3.0}, (m.ones(1, 2),)),
    "no_models": lambda m, F, lin: F.stack_module_state([]),
    "modes_differ": lambda m, F, lin: F.stack_module_state([lin, m.nn.Linear(2, 2).eval()]),
    "classes_differ": lambda m, F, lin: F.stack_module_state([lin, m.nn.Bilinear(2, 2, 2)]),
    "requires_grad_differs": lambda m, F, lin: F.stack_module_state([lin, m.nn.Linear(2, 2).requires_grad_(False)]),
}


@pytest.mark.parametrize("name", FUNCTIONAL_CALL_ERRORS)
def test_functional_call_errors_match_torch(name):
    case = FUNCTIONAL_CALL_ERRORS[name]
    with pytest.raises(Exception) as want:
        case(torch, TF, torch.nn.Linear(2, 2))
    with pytest.raises(want.type):
        case(wg, WF, wg.nn.Linear(2, 2))


def test_functional_call_writes_back_buffers_the_module_replaced(backend):
    """A module that assigns a buffer during the call (batch norm's num_batches_tracked) leaves
    the new value in the given dict, not in the module, as PyTorch's functional_call does."""
    x = arr(4, 2)

    def run(lib, F):
        bn = lib.nn.BatchNorm1d(2)
        state = {k: v.clone() for k, v in bn.state_dict().items()}
        F.functional_call(bn, state, (lib.tensor(x),))
        return state["num_batches_tracked"], state["running_mean"], bn.num_batches_tracked, bn.running_mean
    assert_same(run(wg, WF), run(torch, TF))


# ---------------------------------------------------------------- functionalize, debug_unwrap


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize_aliasing_as_torch(remove, backend):
    def observe(lib, F):
        seen = []
        for f in (lambda a: a, lambda a: a.view(2, 2), lambda a: a[1:], lambda a: a.add_(1), lambda a: a.add_(1).view(2, 2),
                  lambda a: a * 2):
            x = lib.zeros(4)
            y = F.functionalize(f, remove=remove)(x)
            y.add_(10)
            seen.append(x.tolist())
        return seen
    assert observe(wg, WF) == observe(torch, TF)
    same_error(lambda m, F, A: F.functionalize(lambda a: a, remove="everything"))
    x = wg.ones(2)
    assert WF.debug_unwrap(x) is x


# ---------------------------------------------------------------- errors of the transforms

TRANSFORM_ERRORS = {
    "argnum_out_of_range": lambda m, F, A, x: F.grad(lambda x: x.sum(), argnums=2)(x),
    "argnums_empty": lambda m, F, A, x: F.grad(lambda x: x.sum(), argnums=())(x),
    "argnums_repeated": lambda m, F, A, x: F.grad(lambda a, b: (a * b).sum(), argnums=(0, 0))(x, x),
    "argnums_float": lambda m, F, A, x: F.grad(lambda x: x.sum(), argnums=0.0)(x),
    "no_positional_input": lambda m, F, A, x: F.grad(lambda: x.sum())(),
    "not_scalar": lambda m, F, A, x: F.grad(lambda x: x * 2)(x),
    "not_a_tensor": lambda m, F, A, x: F.grad(lambda x: 3.0)(x),
    "integer_input": lambda m, F, A, x: F.grad(lambda x: x.float().sum())(m.tensor([1, 2])),
    "number_input": lambda m, F, A, x: F.grad(lambda x: m.tensor(1.0))(3.0),
    "has_aux_not_pair": lambda m, F, A, x: F.grad(lambda x: x.sum(), has_aux=True)(x),
    "vjp_cotangent_structure": lambda m, F, A, x: F.vjp(lambda x: x * 2, x)[1]((x,)),
    "vjp_cotangent_shape": lambda m, F, A, x: F.vjp(lambda x: x * 2, x)[1](x[:1]),
    "vjp_output_number": lambda m, F, A, x: F.vjp(lambda x: 3, x),
    "vjp_has_aux_not_pair": lambda m, F, A, x: F.vjp(lambda x: x * 2, x, has_aux=True),
    "jvp_primals_not_tuple": lambda m, F, A, x: F.jvp(lambda x: x, x, x),
    "jvp_primals_list": lambda m, F, A, x: F.jvp(lambda x: x, [x], [x]),
    "jvp_structures_differ": lambda m, F, A, x: F.jvp(lambda x: x, (x,), (x, x)),
    "jvp_no_primals": lambda m, F, A, x: F.jvp(lambda: x, (), ()),
    "jvp_output_number": lambda m, F, A, x: F.jvp(lambda x: 3, (x,), (x,)),
    "jacrev_chunk_size": lambda m, F, A, x: F.jacrev(lambda x: x, chunk_size=0)(x),
    "jacrev_output_number": lambda m, F, A, x: F.jacrev(lambda x: 3)(x),
    "linearize_tangent_shape": lambda m, F, A, x: F.linearize(lambda x: x.sin(), x)[1](x[:1]),
    "linearize_tangent_structure": lambda m, F, A, x: F.linearize(lambda x: x.sin(), x)[1](x, x),
}


@pytest.mark.parametrize("name", TRANSFORM_ERRORS)
def test_transform_errors_match_torch(name):
    same_error(TRANSFORM_ERRORS[name], arr(3))


# ---------------------------------------------------------------- finite differences (float64, cpu)


def _fd_jvp(f, x, v, eps=1e-6):
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


def test_jvp_and_hvp_by_the_double_backward_trick_match_finite_differences():
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)
    f = lambda t: (t.sin() * t ** 2).cumsum(0)
    fn = lambda a: f(wg.tensor(a, dtype=wg.float64, device="cpu")).numpy()
    tx, tv = wg.tensor(x, dtype=wg.float64, device="cpu"), wg.tensor(v, dtype=wg.float64, device="cpu")
    np.testing.assert_allclose(WF.jvp(f, (tx,), (tv,))[1].numpy(), _fd_jvp(fn, x, v), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(WAF.jvp(f, tx, tv)[1].numpy(), _fd_jvp(fn, x, v), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(WF.linearize(f, tx)[1](tv).numpy(), _fd_jvp(fn, x, v), rtol=1e-6, atol=1e-8)
    s = lambda t: (t.sin() * t ** 2).sum()
    gs = lambda a: WF.grad(s)(wg.tensor(a, dtype=wg.float64, device="cpu")).numpy()
    np.testing.assert_allclose(WAF.hvp(s, tx, tv)[1].numpy(), _fd_jvp(gs, x, v), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(WF.jacfwd(f)(tx).numpy() @ v, _fd_jvp(fn, x, v), rtol=1e-6, atol=1e-8)


def test_gradients_through_the_transforms_match_finite_differences():
    """gradcheck makes float64 cpu tensors; the module is made on cpu too."""
    gradcheck(lambda x, w: WF.vmap(lambda r, w: (r @ w).tanh(), in_dims=(0, None))(x, w),
              RNG.standard_normal((3, 2)), RNG.standard_normal((2, 4)), what="vmap")
    lin = wg.nn.Linear(2, 3, device="cpu").double()
    gradcheck(lambda w, b, x: WF.functional_call(lin, {"weight": w, "bias": b}, (x,)).sin(),
              RNG.standard_normal((3, 2)), RNG.standard_normal(3), RNG.standard_normal((4, 2)), what="functional_call")
    gradcheck(lambda x: WF.grad(lambda t: (t.sin() * t ** 2).sum())(x), RNG.standard_normal(4), what="grad")
    gradcheck(lambda x, t: WF.jvp(lambda a: a.exp() * a, (x,), (t,))[1], RNG.standard_normal(3),
              RNG.standard_normal(3), what="jvp")
    gradcheck(lambda x: WF.vmap(WF.grad(lambda r: (r ** 3).prod()))(x), RNG.standard_normal((3, 2)),
              what="vmap(grad)")
