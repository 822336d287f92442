"""nn modules against PyTorch (same weights and input -> same output, input gradient and
parameter gradients), plus Module mechanics: registration, traversal, modes, state dicts, hooks, to()."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn as nn

torch = pytest.importorskip("torch")


def to_wg(t, dtype=None):
    return wg.tensor(t.detach().numpy(), dtype=dtype)


def copy_weights(src, dst):
    """Load a torch module's state dict into a webgrad module."""
    dst.load_state_dict({k: to_wg(v) for k, v in src.state_dict().items()})


def compare(tm, wm, *inputs, int_inputs=(), atol=1e-5, rtol=1e-4, kwargs=None):
    """Run both modules on the same inputs; compare outputs, input grads and parameter grads."""
    kwargs = kwargs or {}
    copy_weights(tm, wm)
    t_in = [torch.tensor(a, requires_grad=i not in int_inputs) for i, a in enumerate(inputs)]
    w_in = [wg.tensor(a, requires_grad=i not in int_inputs) for i, a in enumerate(inputs)]
    t_out, w_out = tm(*t_in, **kwargs), wm(*w_in, **kwargs)
    t_out, w_out = (t_out[0], w_out[0]) if isinstance(t_out, tuple) else (t_out, w_out)
    np.testing.assert_allclose(w_out.detach().numpy(), t_out.detach().numpy(), atol=atol, rtol=rtol)
    weight = np.random.default_rng(0).standard_normal(tuple(t_out.shape)).astype(np.float32)
    (t_out * torch.tensor(weight)).sum().backward()
    (w_out * wg.tensor(weight)).sum().backward()
    for i, (a, b) in enumerate(zip(t_in, w_in)):
        if i not in int_inputs:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=atol, rtol=rtol, err_msg=f"input {i}")
    w_params = dict(wm.named_parameters())
    for name, p in tm.named_parameters():
        assert name in w_params, name
        if p.grad is not None:
            np.testing.assert_allclose(w_params[name].grad.numpy(), p.grad.numpy(), atol=atol, rtol=rtol,
                                       err_msg=name)
    return w_out


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


LAYERS = [
    ("linear", lambda m: m.Linear(5, 3), [rand(4, 5)]),
    ("linear_nobias_3d", lambda m: m.Linear(5, 3, bias=False), [rand(2, 4, 5)]),
    ("bilinear", lambda m: m.Bilinear(3, 4, 2), [rand(5, 3), rand(5, 4, seed=1)]),
    ("conv1d", lambda m: m.Conv1d(2, 3, 3, stride=2, padding=1), [rand(2, 2, 9)]),
    ("conv2d", lambda m: m.Conv2d(2, 4, 3, padding=1, stride=(1, 2)), [rand(2, 2, 6, 7)]),
    ("conv2d_groups_dilation", lambda m: m.Conv2d(4, 4, 3, groups=2, dilation=2), [rand(1, 4, 7, 7)]),
    ("conv_transpose2d", lambda m: m.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
     [rand(2, 3, 4, 4)]),
    ("maxpool2d", lambda m: m.MaxPool2d(2), [rand(2, 3, 6, 6)]),
    ("avgpool2d", lambda m: m.AvgPool2d(3, stride=2, padding=1), [rand(2, 3, 7, 7)]),
    ("adaptive_avgpool2d", lambda m: m.AdaptiveAvgPool2d((2, 3)), [rand(2, 3, 6, 7)]),
    ("batchnorm1d", lambda m: m.BatchNorm1d(4), [rand(8, 4)]),
    ("batchnorm2d", lambda m: m.BatchNorm2d(3), [rand(4, 3, 5, 5)]),
    ("layernorm", lambda m: m.LayerNorm((3, 4)), [rand(2, 3, 4)]),
    ("groupnorm", lambda m: m.GroupNorm(2, 4), [rand(3, 4, 5)]),
    ("flatten", lambda m: m.Flatten(), [rand(2, 3, 4)]),
    ("unflatten", lambda m: m.Unflatten(1, (3, 4)), [rand(2, 12)]),
    ("identity", lambda m: m.Identity(), [rand(3)]),
    ("sequential", lambda m: m.Sequential(m.Linear(4, 8), m.Tanh(), m.Linear(8, 2)), [rand(3, 4)]),
]
ACTIVATIONS = [("ReLU", ()), ("LeakyReLU", (0.2,)), ("GELU", ()), ("SiLU", ()), ("Tanh", ()), ("Sigmoid", ()),
               ("Softmax", (1,)), ("LogSoftmax", (-1,)), ("ELU", ()), ("Softplus", ())]


@pytest.mark.parametrize("name,make,inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(name, make, inputs):
    torch.manual_seed(0)
    compare(make(torch.nn), make(nn), *inputs)


@pytest.mark.parametrize("name,args", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_torch(name, args):
    compare(getattr(torch.nn, name)(*args), getattr(nn, name)(*args), rand(3, 5) + 0.01)


def test_batchnorm_running_stats_and_eval():
    torch.manual_seed(0)
    tm, wm = torch.nn.BatchNorm2d(3), nn.BatchNorm2d(3)
    for seed in range(3):
        x = rand(4, 3, 2, 2, seed=seed)
        tm(torch.tensor(x)), wm(wg.tensor(x))
    np.testing.assert_allclose(wm.running_mean.numpy(), tm.running_mean.numpy(), atol=1e-6)
    np.testing.assert_allclose(wm.running_var.numpy(), tm.running_var.numpy(), atol=1e-6)
    assert wm.num_batches_tracked.item() == 3
    tm.eval(), wm.eval()
    x = rand(2, 3, 2, 2, seed=9)
    np.testing.assert_allclose(wm(wg.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5)


def test_embedding_matches_torch():
    torch.manual_seed(0)
    idx = np.array([[1, 0, 3], [3, 2, 1]], dtype=np.int32)
    tm, wm = torch.nn.Embedding(5, 3, padding_idx=1), nn.Embedding(5, 3, padding_idx=1)
    assert wm.weight[1].abs().sum().item() == 0
    copy_weights(tm, wm)
    t_out, w_out = tm(torch.tensor(idx, dtype=torch.long)), wm(wg.tensor(idx))
    np.testing.assert_allclose(w_out.detach().numpy(), t_out.detach().numpy())
    t_out.sum().backward(), w_out.sum().backward()
    np.testing.assert_allclose(wm.weight.grad.numpy(), tm.weight.grad.numpy())


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_matches_torch(batch_first):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    wm = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    x = rand(2, 5, 8) if batch_first else rand(5, 2, 8)
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)
    copy_weights(tm, wm)
    t_out, t_w = tm(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(mask))
    w_out, w_w = wm(*(wg.tensor(x),) * 3, attn_mask=wg.tensor(mask))
    np.testing.assert_allclose(w_out.detach().numpy(), t_out.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(w_w.detach().numpy(), t_w.detach().numpy(), atol=1e-5)
    pad = np.array([[False] * 4 + [True], [False] * 5])
    y = rand(*x.shape, seed=4)
    compare(tm, wm, x, y, y, kwargs=dict(need_weights=False))
    t_out = tm(*(torch.tensor(x),) * 3, key_padding_mask=torch.tensor(pad))[0]
    w_out = wm(*(wg.tensor(x),) * 3, key_padding_mask=wg.tensor(pad))[0]
    np.testing.assert_allclose(w_out.detach().numpy(), t_out.detach().numpy(), atol=1e-5)


def test_sdpa_causal_matches_torch():
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 4, 8, seed=1), rand(2, 3, 4, 6, seed=2)
    want = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), is_causal=True)
    got = nn.functional.scaled_dot_product_attention(*map(wg.tensor, (q, k, v)), is_causal=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5)
    mask = rand(4, 4, seed=3) > 0
    mask[:, 0] = True
    want = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)),
                                                            attn_mask=torch.tensor(mask))
    got = nn.functional.scaled_dot_product_attention(*map(wg.tensor, (q, k, v)), attn_mask=wg.tensor(mask))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_matches_torch(norm_first):
    torch.manual_seed(0)
    kw = dict(dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm_first)
    tm, wm = torch.nn.TransformerEncoderLayer(8, 2, **kw), nn.TransformerEncoderLayer(8, 2, **kw)
    compare(tm, wm, rand(2, 5, 8), atol=1e-4)


@pytest.mark.parametrize("cls,kwargs,target", [
    ("MSELoss", {}, "float"), ("L1Loss", {"reduction": "sum"}, "float"), ("SmoothL1Loss", {"beta": 0.5}, "float"),
    ("HuberLoss", {"delta": 0.7}, "float"), ("CrossEntropyLoss", {"label_smoothing": 0.1}, "class"),
    ("NLLLoss", {}, "class"), ("BCEWithLogitsLoss", {}, "prob"), ("BCELoss", {}, "prob"),
    ("KLDivLoss", {"reduction": "batchmean"}, "prob")])
def test_loss_modules_match_torch(cls, kwargs, target):
    x = rand(4, 5)
    if cls == "BCELoss":
        x = 1 / (1 + np.exp(-x))
    if cls in ("NLLLoss", "KLDivLoss"):
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    y = {"float": rand(4, 5, seed=1), "class": np.array([0, 3, 4, 1]),
         "prob": np.random.default_rng(1).uniform(size=(4, 5)).astype(np.float32)}[target]
    tx, wx = torch.tensor(x, requires_grad=True), wg.tensor(x, requires_grad=True)
    ty = torch.tensor(y, dtype=torch.long) if target == "class" else torch.tensor(y)
    want, got = getattr(torch.nn, cls)(**kwargs)(tx, ty), getattr(nn, cls)(**kwargs)(wx, wg.tensor(y))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5, atol=1e-6)
    want.backward(), got.backward()
    np.testing.assert_allclose(wx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_default_init_bounds_match_torch():
    lin, conv = nn.Linear(50, 20), nn.Conv2d(3, 8, 5)
    for m, fan_in in ((lin, 50), (conv, 75)):
        bound = 1 / fan_in ** 0.5   # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
        w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
        assert np.abs(b).max() <= bound
        assert abs(w.std() - bound / 3 ** 0.5) < 0.2 * bound


def test_init_functions():
    wg.manual_seed(0)
    w = wg.empty(200, 300)
    nn.init.xavier_normal_(w)
    assert abs(w.numpy().std() - (2 / 500) ** 0.5) < 1e-3
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - (2 / 200) ** 0.5) < 2e-3
    nn.init.constant_(w, 0.5)
    assert w.numpy().min() == w.numpy().max() == 0.5
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.2))
    with pytest.raises(ValueError, match="fan in and fan out"):
        nn.init.xavier_uniform_(wg.empty(3))


# ---------------------------------------------------------------- Module mechanics


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
        self.heads = nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 1)])
        self.table = nn.ModuleDict({"emb": nn.Embedding(5, 2)})
        self.scale = nn.Parameter(wg.ones(1))
        self.register_buffer("steps", wg.zeros(1))
        self.register_buffer("scratch", wg.zeros(1), persistent=False)

    def forward(self, x):
        h = self.body(x)
        return self.heads[0](h) * self.scale, self.heads[1](h)


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "body.0.weight", "body.0.bias", "body.1.weight", "body.1.bias", "heads.0.weight",
                     "heads.0.bias", "heads.1.weight", "heads.1.bias", "table.emb.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch", "body.1.running_mean", "body.1.running_var",
                                                    "body.1.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["body", "heads", "table"]
    assert len(list(net.modules())) == 10
    assert "scratch" not in net.state_dict() and "body.1.num_batches_tracked" in net.state_dict()
    assert net.get_submodule("body.0") is net.body[0]
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 2
    net.scale = None
    assert "scale" not in dict(net.named_parameters())
    with pytest.raises(TypeError, match="scale"):
        net.scale = wg.ones(1)


def test_train_eval_and_dropout():
    net = Net()
    assert net.training and net.body[2].training
    net.eval()
    assert not any(m.training for m in net.modules())
    x = wg.randn(4, 3)
    a, b = net(x)[0].tolist(), net(x)[0].tolist()
    assert a == b
    net.train()
    drop = nn.Dropout(0.5)
    y = drop(wg.ones(1000))
    kept = (y.numpy() != 0).mean()
    assert 0.4 < kept < 0.6 and set(np.unique(y.numpy())) <= {0.0, 2.0}


def test_zero_grad():
    lin = nn.Linear(2, 2)
    lin(wg.ones(1, 2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None


def test_state_dict_round_trip_and_strict():
    a, b = Net(), Net()
    a.steps = wg.tensor([7.0])
    b.load_state_dict(a.state_dict())
    for (n, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert x.tolist() == y.tolist(), n
    sd = a.state_dict()
    sd["extra"] = wg.ones(1)
    del sd["scale"]
    with pytest.raises(RuntimeError, match="Missing key.*scale|Unexpected key.*extra"):
        b.load_state_dict(sd)
    missing, unexpected = b.load_state_dict(sd, strict=False)
    assert missing == ["scale"] and unexpected == ["extra"]
    sd = a.state_dict()
    sd["scale"] = wg.ones(3)
    with pytest.raises(RuntimeError, match="size mismatch for scale"):
        b.load_state_dict(sd)
    p = b.heads[0].weight
    b.load_state_dict(a.state_dict())
    assert b.heads[0].weight is p


def test_state_dict_loads_into_torch():
    torch.manual_seed(0)
    wm = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in wm.state_dict().items()})
    x = rand(5, 3)
    np.testing.assert_allclose(wm(wg.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-6)


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    seen = []
    h1 = lin.register_forward_pre_hook(lambda m, args: seen.append("pre"))
    h2 = lin.register_forward_hook(lambda m, args, out: out * 0)
    assert lin(wg.ones(1, 2)).tolist() == [[0.0, 0.0]] and seen == ["pre"]
    h1.remove(), h2.remove()
    assert lin(wg.ones(1, 2)).abs().sum().item() > 0 and seen == ["pre"]


def test_to_dtype_keeps_parameter_identity():
    lin = nn.Linear(2, 3)
    w = lin.weight
    lin.to(wg.float64)
    assert lin.weight is w and w.dtype == wg.float64 and w.requires_grad
    assert lin(wg.ones(1, 2, dtype=wg.float64)).dtype == wg.float64
    bn = nn.BatchNorm1d(2).double()
    assert bn.running_mean.dtype == wg.float64 and bn.num_batches_tracked.dtype == wg.int64


def test_repr():
    text = repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Conv2d(1, 2, 3, padding=1)))
    assert text == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n"
                    "  (2): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n)")
    assert repr(nn.Parameter(wg.zeros(1))).startswith("Parameter containing:\ntensor([0.")


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq.append(nn.Linear(2, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and len(seq[:2]) == 2
    ml = nn.ModuleList([nn.ReLU()])
    ml.insert(0, nn.Tanh())
    assert [type(m).__name__ for m in ml] == ["Tanh", "ReLU"]
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Linear(1, 1)
    assert list(md) == ["a", "b"] and "b" in md and len(list(md.parameters())) == 2
    with pytest.raises(IndexError, match="Sequential"):
        seq[5]


def test_clip_grad_and_vectors():
    a, b = nn.Parameter(wg.tensor([3.0, 0.0])), nn.Parameter(wg.tensor([4.0]))
    ta, tb = torch.tensor([3.0, 0.0], requires_grad=True), torch.tensor([4.0], requires_grad=True)
    for ps, tps, mod in (([a, b], [ta, tb], wg), ):
        (ps[0] ** 2).sum().backward(), (ps[1] ** 2).sum().backward()
        (tps[0] ** 2).sum().backward(), (tps[1] ** 2).sum().backward()
    for norm_type in (2.0, float("inf"), 1.0):
        total = nn.utils.clip_grad_norm_([a, b], 1.0, norm_type)
        want = torch.nn.utils.clip_grad_norm_([ta, tb], 1.0, norm_type)
        assert total.item() == pytest.approx(want.item(), rel=1e-5)
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5)
    a.grad = wg.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    a.grad = wg.tensor([-5.0, 0.5])
    nn.utils.clip_grad_value_([a], 1.0)
    assert a.grad.tolist() == [-1.0, 0.5]
    lin = nn.Linear(2, 2)
    v = nn.utils.parameters_to_vector(lin.parameters())
    assert v.shape == (6,)
    nn.utils.vector_to_parameters(v * 0 + 1, lin.parameters())
    assert lin.bias.tolist() == [1.0, 1.0]
