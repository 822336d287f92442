"""Seeded programs draw PyTorch's numbers: after ``torch.manual_seed(s)`` and ``wg.manual_seed(s)``
each random op gives PyTorch's values (bitwise), leaves the generator where PyTorch's is (the next
draws agree too), on every backend; modules start from PyTorch's weights; loaders shuffle as
PyTorch's. Exceptions (see webgrad.random): multinomial with replacement on backends without float64
compares in float32."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

SEEDS = (0, 1, 1337, 2 ** 40 + 3)
SIZES = (1, 5, 15, 16, 17, 33, 1000)


def values(t) -> np.ndarray:
    """A tensor of either library as a numpy array (webgrad's in its own dtype)."""
    return t.detach().numpy()


def same(torch_op, wg_op, seed, *, aligned=True):
    """Run each op after its library's manual_seed(seed); assert bitwise-equal values and dtypes, and
    that the next draws agree (the generators stayed aligned)."""
    torch.manual_seed(seed)
    expected = values(torch_op())
    wg.manual_seed(seed)
    got = values(wg_op())
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)
    if aligned:
        assert wg.rand(3).tolist() == torch.rand(3).tolist(), "the generators drifted apart"


def ramp(L, low, high, n):
    """PyTorch's linspace(low, high, n) as a tensor of library L (webgrad's linspace rounds differently)."""
    return L.tensor(torch.linspace(low, high, n).tolist())


def both(make, *args, **kwargs):
    """(torch's call, webgrad's call) of the same expression over the library ``L``."""
    return (lambda: make(torch, *args, **kwargs)), (lambda: make(wg, *args, **kwargs))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_rand_randn_randint_randperm(backend, seed, n):
    same(*both(lambda L: L.rand(n)), seed)
    same(*both(lambda L: L.randn(n)), seed)
    same(*both(lambda L: L.randn(2, n)), seed)
    same(*both(lambda L: L.randint(-5, 7, (n,))), seed)
    same(*both(lambda L: L.randint(3, (n, 2), dtype=L.int32)), seed)
    same(*both(lambda L: L.randint(0, 2 ** 30, (n,))), seed)            # ranges from 2**28 take 64-bit draws
    same(*both(lambda L: L.randperm(n)), seed)


@pytest.mark.float64
@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("n", SIZES)
def test_float64_draws(backend, seed, n):
    same(*both(lambda L: L.rand(n, dtype=L.float64)), seed)
    same(*both(lambda L: L.randn(n, dtype=L.float64)), seed)
    same(*both(lambda L: L.empty(n, dtype=L.float64).uniform_(-0.25, 3.5)), seed)
    same(*both(lambda L: L.empty(n, dtype=L.float64).normal_(0.5, 0.02)), seed)
    same(*both(lambda L: L.empty(n, dtype=L.float64).exponential_(2.5)), seed)
    same(*both(lambda L: L.randint(0, 2 ** 40, (n,))), seed)
    same(*both(lambda L: L.empty(n, dtype=L.int64).random_()), seed)


@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("n", (3, 16, 37))
def test_in_place_fills(backend, seed, n):
    same(*both(lambda L: L.empty(n).uniform_(-0.3, 0.7)), seed)
    same(*both(lambda L: L.empty(n, 2).normal_(0.1, 0.02)), seed)
    same(*both(lambda L: L.empty(n).exponential_(1.7)), seed)
    same(*both(lambda L: L.empty(n).geometric_(0.3)), seed)
    same(*both(lambda L: L.empty(n).random_(3, 11)), seed)
    same(*both(lambda L: L.empty(n).random_(9)), seed)
    same(*both(lambda L: L.empty(n).random_()), seed)
    same(*both(lambda L: L.empty(n, dtype=L.int32).random_()), seed)
    same(*both(lambda L: L.empty(n).bernoulli_(0.3)), seed)
    same(*both(lambda L: L.empty(n).bernoulli_(ramp(L, 0, 1, n))), seed)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_like_and_normal_forms(backend, seed):
    same(*both(lambda L: L.rand_like(L.zeros(4, 5))), seed)
    same(*both(lambda L: L.randn_like(L.zeros(3, 7))), seed)
    same(*both(lambda L: L.randint_like(L.zeros(9), 2, 6)), seed)
    same(*both(lambda L: L.normal(2.0, 3.0, size=(20,))), seed)
    same(*both(lambda L: L.normal(L.arange(20.0), 0.5)), seed)
    same(*both(lambda L: L.normal(L.arange(5.0), ramp(L, 0.1, 1, 5))), seed)
    same(*both(lambda L: L.normal(1.5, ramp(L, 0.1, 1, 18))), seed)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_bernoulli_and_multinomial(backend, seed):
    p = torch.rand(2, 9, generator=torch.Generator().manual_seed(5))
    wp = wg.tensor(p.tolist())
    same(lambda: torch.bernoulli(p), lambda: wg.bernoulli(wp), seed)
    same(lambda: torch.bernoulli(p, 0.25), lambda: wg.bernoulli(wp, 0.25), seed)
    same(lambda: torch.multinomial(p, 1), lambda: wg.multinomial(wp, 1), seed)
    same(lambda: torch.multinomial(p[0], 4), lambda: wg.multinomial(wp[0], 4), seed)
    same(lambda: torch.multinomial(p, 9), lambda: wg.multinomial(wp, 9), seed)
    eighths = torch.tensor([1.0, 0.0, 3.0, 2.0, 2.0])          # bounds exact in float32: any backend agrees
    same(lambda: torch.multinomial(eighths, 40, True), lambda: wg.multinomial(wg.tensor(eighths.tolist()), 40, True),
         seed)


@pytest.mark.float64
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_multinomial_with_replacement_of_any_weights(backend, seed):
    p = torch.rand(3, 11, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    same(lambda: torch.multinomial(p, 25, True), lambda: wg.multinomial(wg.tensor(p.tolist(), dtype=wg.float64), 25,
                                                                         True), seed)
    p32 = p.float()          # float32 weights: compared in float64 where the backend holds it
    same(lambda: torch.multinomial(p32, 25, True), lambda: wg.multinomial(wg.tensor(p32.tolist()), 25, True), seed)


@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("op, shape", [("dropout", (37, 5)), ("dropout1d", (4, 6, 5)), ("dropout2d", (4, 6, 3, 3)),
                                       ("dropout3d", (2, 6, 2, 3, 3)), ("alpha_dropout", (50,)),
                                       ("feature_alpha_dropout", (3, 4, 5))])
def test_dropout_drops_what_pytorch_drops(backend, seed, op, shape):
    def run(L):
        x = L.randn(*shape)
        return getattr(L.nn.functional, op)(x, 0.3, True)
    same(*both(run), seed)
    same(*both(lambda L: L.nn.Dropout(0.5)(L.ones(40, requires_grad=True))), seed)


def test_a_mixed_program_stays_aligned(backend):
    def program(L):
        out = [L.randn(3), L.rand(20), L.randn(5), L.randint(0, 9, (7,)), L.randperm(12),
               L.randn(17, dtype=L.float32), L.empty(4).bernoulli_(0.5), L.multinomial(L.ones(6), 3),
               L.nn.functional.dropout(L.ones(30), 0.2), L.randn(1), L.randn(1)]
        return L.cat([t.float().reshape(-1) for t in out])
    for seed in SEEDS:
        same(*both(program), seed)


def test_the_cached_normal_sample_carries_across_ops_and_states(backend):
    torch.manual_seed(3)
    wg.manual_seed(3)
    assert wg.randn(3).tolist() == torch.randn(3).tolist()   # leaves one normal sample cached
    state, torch_state = wg.get_rng_state(), torch.get_rng_state()
    assert bytes(state.tolist()) == bytes(torch_state.tolist())   # PyTorch's layout, the cache included
    assert wg.randn(1).tolist() == torch.randn(1).tolist()
    wg.set_rng_state(state)
    torch.set_rng_state(torch_state)
    assert wg.randn(4).tolist() == torch.randn(4).tolist()
    wg.set_rng_state(wg.tensor(torch_state.tolist()))       # a state saved by PyTorch restores here
    torch.set_rng_state(torch_state)
    assert wg.randn(2).tolist() == torch.randn(2).tolist()


def test_generators_and_states_as_pytorch():
    g, tg = wg.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    assert bytes(g.get_state().tolist()) == bytes(tg.get_state().tolist())   # never drawn
    assert wg.rand(5, generator=g).tolist() == torch.rand(5, generator=tg).tolist()
    for _ in range(130):                                                       # past a twist of the state
        wg.randn(5, generator=g), torch.randn(5, generator=tg)
    assert bytes(g.get_state().tolist()) == bytes(tg.get_state().tolist())
    fresh = wg.Generator().set_state(wg.tensor(tg.get_state().tolist()))
    assert fresh.initial_seed() == 7
    assert wg.randn(9, generator=fresh).tolist() == torch.randn(9, generator=tg).tolist()
    wg.manual_seed(4)
    torch.manual_seed(4)
    with wg.random.fork_rng():
        wg.randn(3)
    with torch.random.fork_rng():
        torch.randn(3)
    assert wg.randn(3).tolist() == torch.randn(3).tolist()


INITS = {
    "uniform_": lambda i, t: i.uniform_(t, -0.3, 0.7), "normal_": lambda i, t: i.normal_(t, 0.1, 0.02),
    "xavier_uniform_": lambda i, t: i.xavier_uniform_(t, gain=i.calculate_gain("relu")),
    "xavier_normal_": lambda i, t: i.xavier_normal_(t), "kaiming_uniform_": lambda i, t: i.kaiming_uniform_(t),
    "kaiming_uniform_fan_out": lambda i, t: i.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
    "kaiming_uniform_a": lambda i, t: i.kaiming_uniform_(t, a=5 ** 0.5),
    "kaiming_normal_": lambda i, t: i.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"),
}


@pytest.mark.parametrize("name", sorted(INITS))
@pytest.mark.parametrize("shape", [(5, 3), (17, 33), (64, 128), (8, 3, 3, 3)])
def test_init_functions_draw_pytorchs_values(backend, name, shape):
    for seed in SEEDS[:2]:
        same(lambda: INITS[name](torch.nn.init, torch.empty(shape)), lambda: INITS[name](wg.nn.init, wg.empty(*shape)),
             seed)


MODULES = {
    "Linear": lambda nn: nn.Linear(7, 5), "Bilinear": lambda nn: nn.Bilinear(3, 4, 5),
    "Conv1d": lambda nn: nn.Conv1d(3, 4, 3), "Conv2d": lambda nn: nn.Conv2d(4, 8, 3, groups=2),
    "Conv3d": lambda nn: nn.Conv3d(2, 3, 2), "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(3, 4, 3),
    "Embedding": lambda nn: nn.Embedding(20, 6, padding_idx=3), "EmbeddingBag": lambda nn: nn.EmbeddingBag(20, 6),
    "LayerNorm": lambda nn: nn.LayerNorm(6), "BatchNorm1d": lambda nn: nn.BatchNorm1d(6),
    "PReLU": lambda nn: nn.PReLU(),
    "RNN": lambda nn: nn.RNN(4, 5, num_layers=2), "LSTM": lambda nn: nn.LSTM(4, 5, bidirectional=True),
    "LSTM_proj": lambda nn: nn.LSTM(4, 6, proj_size=3), "GRU": lambda nn: nn.GRU(4, 5, batch_first=True),
    "GRUCell": lambda nn: nn.GRUCell(4, 5), "LSTMCell": lambda nn: nn.LSTMCell(4, 5),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(8, 2, kdim=6, vdim=5),
    "MultiheadAttention_bias_kv": lambda nn: nn.MultiheadAttention(8, 2, add_bias_kv=True),
    "TransformerEncoder": lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2,
                                                           enable_nested_tensor=False),
    "TransformerDecoderLayer": lambda nn: nn.TransformerDecoderLayer(8, 2, 16),
    "Transformer": lambda nn: nn.Transformer(8, 2, 1, 1, 16),
    "MLP": lambda nn: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_start_from_pytorchs_weights(backend, name):
    for seed in SEEDS[:2]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(seed)
            expected = {k: values(p) for k, p in MODULES[name](torch.nn).named_parameters()}
            wg.manual_seed(seed)
            got = {k: values(p) for k, p in MODULES[name](wg.nn).named_parameters()}
        assert sorted(got) == sorted(expected)
        for k in expected:
            np.testing.assert_array_equal(got[k], expected[k], err_msg=f"{name}.{k}")
        assert wg.rand(2).tolist() == torch.rand(2).tolist()


def test_a_seeded_training_step_prints_pytorchs_loss(backend):
    def step(L):
        model = L.nn.Sequential(L.nn.Linear(6, 16), L.nn.Tanh(), L.nn.Linear(16, 3))
        x, y = L.randn(32, 6), L.randint(0, 3, (32,))
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            loss = L.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    torch.manual_seed(1337)
    expected = step(torch)
    wg.manual_seed(1337)
    got = step(wg)
    assert got == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert got[0] == pytest.approx(expected[0], rel=1e-6)


class Numbers:
    """A map-style dataset of ints (both libraries' loaders take it as it is)."""

    def __len__(self):
        return 23

    def __getitem__(self, i):
        return i


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_loaders_and_samplers_shuffle_as_pytorch(backend, seed):
    def epochs(L, **kw):
        loader = L.utils.data.DataLoader(Numbers(), batch_size=5, **kw)
        return [[b.tolist() for b in loader] for _ in range(2)] + [L.rand(2).tolist()]
    for kw in ({"shuffle": True}, {"shuffle": False}):
        torch.manual_seed(seed)
        expected = epochs(torch, **kw)
        wg.manual_seed(seed)
        assert epochs(wg, **kw) == expected
    torch.manual_seed(seed)
    expected = epochs(torch, shuffle=True, generator=torch.Generator().manual_seed(seed + 1))
    wg.manual_seed(seed)
    assert epochs(wg, shuffle=True, generator=wg.Generator().manual_seed(seed + 1)) == expected

    cases = [lambda L: list(L.utils.data.RandomSampler(range(10), num_samples=25)),
             lambda L: list(L.utils.data.RandomSampler(range(10), replacement=True, num_samples=70)),
             lambda L: list(L.utils.data.SubsetRandomSampler([4, 8, 15, 16, 23, 42])),
             lambda L: list(L.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 12)),
             lambda L: list(L.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 3, replacement=False)),
             lambda L: [list(s) for s in L.utils.data.random_split(range(12), [5, 7])]]
    for case in cases:
        torch.manual_seed(seed)
        expected = case(torch) + [torch.rand(1).tolist()]
        wg.manual_seed(seed)
        assert case(wg) + [wg.rand(1).tolist()] == expected


def test_compiled_steps_draw_what_eager_pytorch_draws(backend):
    def step(L):
        def run(x):
            noisy = x + L.randn_like(x) * 0.1
            return L.nn.functional.dropout(noisy, 0.25) * L.rand(x.shape[0], 1), L.randperm(6)
        return run
    x = [[float(i - j) for j in range(20)] for i in range(4)]
    torch.manual_seed(11)
    expected = [[values(t).tolist() for t in step(torch)(torch.tensor(x))] for _ in range(4)]
    wg.manual_seed(11)
    compiled = wg.compile(step(wg))
    wx = wg.tensor(x)
    got = [[values(t).tolist() for t in compiled(wx)] for _ in range(4)]   # a trace, then replays drawing afresh
    assert got == expected
    assert wg.rand(3).tolist() == torch.rand(3).tolist()
    assert "RandomValues" in compiled.explain() and "3 replay(s)" in compiled.explain()


@pytest.mark.float64
def test_init_bounds_round_as_pytorchs_for_every_fan(backend):
    """kaiming/xavier bounds computed with PyTorch's steps (sqrt(3) * std), not an equal formula that
    rounds otherwise (in float64 for about 40% of fans): the weights agree for every fan."""
    for fan in range(1, 60):
        for init in (lambda i, t: i.kaiming_uniform_(t, a=5 ** 0.5), lambda i, t: i.xavier_uniform_(t)):
            torch.manual_seed(fan)
            expected = init(torch.nn.init, torch.empty(3, fan, dtype=torch.float64)).numpy()
            wg.manual_seed(fan)
            got = init(wg.nn.init, wg.empty(3, fan, dtype=wg.float64)).numpy()
            np.testing.assert_array_equal(got, expected, err_msg=str(fan))


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_rrelu_draws_a_slope_per_non_positive_element_as_pytorch(backend, seed):
    same(*both(lambda L: L.nn.functional.rrelu(L.randn(41), training=True)), seed)
    same(*both(lambda L: L.nn.RReLU(0.1, 0.3)(L.randn(5, 8))), seed)


def test_the_plain_python_stream_draws_what_the_numpy_one_does():
    """Without numpy (the browser), backends/torch_random_pure.py draws the same stream: equal values
    (float32 normals from 16 up within 1e-5 absolute) and the same state afterwards."""
    from webgrad.backends import torch_random as R
    from webgrad.backends import torch_random_pure as P
    calls = [("uniform", ("float32", -0.3, 0.7)), ("integers", (-3, 2 ** 40)), ("integers", (0, 9)), ("randperm", ()),
             ("bernoulli_scalar", (0.3,)), ("exponential", (1.5,)), ("full_range", ("int64",)),
             ("full_range", ("float32",))]
    for seed in SEEDS:
        for n in SIZES:
            a, b = R.Stream(seed), P.Stream(seed)
            for fn, args in calls:
                x = getattr(R, fn)(a, n, *args)
                np.testing.assert_array_equal(np.asarray(getattr(P, fn)(b, n, *args)).astype(x.dtype), x)
            for dtype in ("float32", "float64"):
                x, cache = R.normal(a, n, dtype, 0.5, 2.0, True, None)
                y, cache_pure = P.normal(b, n, dtype, 0.5, 2.0, True, None)
                np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-5)
                assert cache_pure == cache
            key, pos = a.get()
            assert b.get() == (key.tolist(), pos)
