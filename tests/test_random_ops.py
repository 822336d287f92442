"""Random ops on every backend: their distributions (seeded statistical checks with bounds a wrong
distribution would break: chi-square at the 1e-6 level, means and variances within 5 standard
errors), their argument forms and dtypes, and PyTorch's errors for bad arguments."""
import math

import pytest
import torch

import webgrad as wg


def chi2_bound(df, z=4.75):
    """The chi-square value exceeded with probability ~1e-6 (Wilson-Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def assert_fits(values, probs, what=""):
    """Pearson's chi-square of the observed ``values`` against category ``probs`` (a dict) stays under
    the 1e-6 bound, and no value falls outside the categories with positive probability."""
    n = len(values)
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    unexpected = {v for v in counts if probs.get(v, 0) == 0}
    assert not unexpected, f"{what}: drew values of probability 0: {sorted(unexpected)[:5]}"
    cells = [(counts.get(v, 0), n * p) for v, p in probs.items() if p > 0]
    stat = sum((c - e) ** 2 / e for c, e in cells)
    assert stat < chi2_bound(len(cells) - 1), f"{what}: chi-square {stat:.1f} over {len(cells) - 1} df"


def assert_moments(values, mean, var, what=""):
    n = len(values)
    m = sum(values) / n
    v = sum((x - m) ** 2 for x in values) / (n - 1)
    assert abs(m - mean) < 5 * math.sqrt(var / n), f"{what}: mean {m} vs {mean}"
    assert abs(v - var) < 5 * var * math.sqrt(2 / (n - 1)) * 1.5, f"{what}: variance {v} vs {var}"


def binned(values, edges):
    """The bin of each value between consecutive ``edges``."""
    import bisect
    return [bisect.bisect_right(edges, x) for x in values]


def normal_cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


N = 40000


def test_rand_is_uniform(backend):
    x = wg.rand(N, generator=wg.Generator().manual_seed(0)).tolist()
    assert 0 <= min(x) and max(x) < 1
    assert_moments(x, 0.5, 1 / 12, "rand")
    assert_fits(binned(x, [i / 20 for i in range(1, 20)]), {i: 1 / 20 for i in range(20)}, "rand")


def test_randn_is_standard_normal(backend):
    x = wg.randn(N, generator=wg.Generator().manual_seed(1)).tolist()
    assert_moments(x, 0.0, 1.0, "randn")
    edges = [-2.5, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2.5]
    cdf = [0] + [normal_cdf(e) for e in edges] + [1]
    assert_fits(binned(x, edges), {i: cdf[i + 1] - cdf[i] for i in range(len(cdf) - 1)}, "randn")


@pytest.mark.float64
def test_float64_draws(backend):
    g = wg.Generator().manual_seed(2)
    for op in (wg.rand, wg.randn):
        x = op(N, dtype=wg.float64, generator=g)
        assert x.dtype == wg.float64
        assert len(set(x.tolist())) == N          # 53-bit values: no repeats expected


def test_randint_is_uniform_over_its_range(backend):
    g = wg.Generator().manual_seed(3)
    x = wg.randint(-3, 7, (N,), generator=g)
    assert x.dtype == wg.long
    assert_fits(x.tolist(), {v: 0.1 for v in range(-3, 7)}, "randint")
    big = wg.randint(2 ** 31 - 1, (N,), generator=g).tolist()    # the widest range the kernel takes
    assert_moments([v / 2 ** 31 for v in big], 0.5, 1 / 12, "randint wide")


def test_randperm_is_a_uniform_permutation(backend):
    g = wg.Generator().manual_seed(4)
    perms = wg.stack([wg.randperm(4, generator=g) for _ in range(1200)]).tolist()
    assert all(sorted(p) == [0, 1, 2, 3] for p in perms)
    import itertools
    assert_fits([tuple(p) for p in perms], {p: 1 / 24 for p in itertools.permutations(range(4))}, "randperm")
    big = wg.randperm(1000, generator=g)
    assert big.dtype == wg.long and sorted(big.tolist()) == list(range(1000))
    assert wg.randperm(0).shape == (0,) and wg.randperm(5, dtype=wg.float32).dtype == wg.float32


def test_multinomial_with_replacement(backend):
    g = wg.Generator().manual_seed(5)
    weights = [[0.1, 0.2, 0.0, 0.3, 0.4], [5.0, 0.0, 0.0, 0.0, 15.0]]     # rows need not sum to 1
    x = wg.multinomial(wg.tensor(weights), 20000, replacement=True, generator=g)
    assert x.shape == (2, 20000) and x.dtype == wg.long
    rows = x.tolist()
    for row, w in zip(rows, weights):
        assert_fits(row, {i: wi / sum(w) for i, wi in enumerate(w)}, f"multinomial {w}")
    one = wg.multinomial(wg.tensor([0.0, 0.0, 3.0]), 50, True, generator=g).tolist()
    assert one == [2] * 50


def test_multinomial_without_replacement(backend):
    g = wg.Generator().manual_seed(6)
    w = [1.0, 2.0, 3.0, 4.0]
    rows = wg.multinomial(wg.tensor([w] * 6000), 2, generator=g).tolist()
    s = sum(w)
    pairs = {(i, j): w[i] / s * w[j] / (s - w[i]) for i in range(4) for j in range(4) if i != j}
    assert_fits([tuple(r) for r in rows], pairs, "multinomial without replacement")
    full = wg.multinomial(wg.tensor([[0.0, 1.0, 0.0, 2.0]] * 50), 4, generator=g).tolist()
    assert all(sorted(r) == [0, 1, 2, 3] and set(r[:2]) == {1, 3} for r in full)   # zero weights come last
    single = wg.multinomial(wg.tensor(w), 1, generator=g)
    assert single.shape == (1,) and wg.multinomial(wg.ones(0, 3), 2).shape == (0, 2)
    assert wg.tensor(w).multinomial(3, generator=g).shape == (3,)


def test_bernoulli(backend):
    g = wg.Generator().manual_seed(7)
    p = wg.tensor([0.0, 0.2, 0.7, 1.0]).expand(10000, 4)
    x = wg.bernoulli(p, generator=g)
    assert x.dtype == wg.float32 and x.shape == (10000, 4)
    means = x.mean(0).tolist()
    assert means[0] == 0.0 and means[3] == 1.0
    for m, q in zip(means[1:3], (0.2, 0.7)):
        assert abs(m - q) < 5 * math.sqrt(q * (1 - q) / 10000)
    assert abs(wg.bernoulli(wg.zeros(N), 0.3, generator=g).mean().item() - 0.3) < 5 * math.sqrt(0.21 / N)
    assert abs(wg.zeros(N).bernoulli(generator=g).sum().item()) == 0
    filled = wg.zeros(N).bernoulli_(0.4, generator=g)
    assert abs(filled.mean().item() - 0.4) < 5 * math.sqrt(0.24 / N)
    into_int = wg.zeros(8, dtype=wg.int32).bernoulli_(wg.tensor([0.0, 1.0]).repeat(4), generator=g)
    assert into_int.dtype == wg.int32 and into_int.tolist() == [0, 1] * 4


def test_normal_forms(backend):
    g = wg.Generator().manual_seed(8)
    mean, std = wg.tensor([[-2.0], [3.0]]), wg.tensor([0.5, 2.0, 1.0])
    x = wg.normal(mean.expand(2, 3).repeat(1, 4000), std.repeat(8000).reshape(2, 12000), generator=g)
    assert x.shape == (2, 12000)
    cols = x.tolist()
    for r, m in enumerate((-2.0, 3.0)):
        for c, s in enumerate((0.5, 2.0, 1.0)):
            assert_moments(cols[r][c::3], m, s * s, f"normal({m}, {s})")
    assert wg.normal(mean, std, generator=g).shape == (2, 3)                    # broadcast
    assert_moments(wg.normal(wg.full((N,), 4.0), 3.0, generator=g).tolist(), 4.0, 9.0, "normal(t, 3)")
    assert_moments(wg.normal(-1.0, wg.full((N,), 0.5), generator=g).tolist(), -1.0, 0.25, "normal(-1, t)")
    y = wg.normal(2.0, 0.1, (N,), generator=g)
    assert y.shape == (N,) and y.dtype == wg.float32
    assert_moments(y.tolist(), 2.0, 0.01, "normal(2, 0.1, size)")
    m = wg.zeros(3, requires_grad=True)
    assert not wg.normal(m, 1.0).requires_grad        # not differentiable in mean/std (PyTorch's gradient is 0)


def test_inplace_fills(backend):
    g = wg.Generator().manual_seed(9)
    u = wg.empty(N).uniform_(-2, 6, generator=g).tolist()
    assert -2 <= min(u) and max(u) < 6
    assert_moments(u, 2.0, 64 / 12, "uniform_")
    assert_moments(wg.empty(N).normal_(1.5, 2.0, generator=g).tolist(), 1.5, 4.0, "normal_")
    e = wg.empty(N).exponential_(4.0, generator=g).tolist()
    assert min(e) >= 0
    assert_moments(e, 0.25, 1 / 16, "exponential_")
    assert_fits(binned(e, [0.1, 0.25, 0.5]), {i: p for i, p in enumerate(
        [1 - math.exp(-0.4), math.exp(-0.4) - math.exp(-1), math.exp(-1) - math.exp(-2), math.exp(-2)])},
        "exponential_")
    k = wg.empty(N).geometric_(0.3, generator=g).tolist()
    probs = {v: 0.7 ** (v - 1) * 0.3 for v in range(1, 15)}
    assert_fits([min(v, 15) for v in k], {**probs, 15: 0.7 ** 14}, "geometric_")
    r = wg.empty(N).random_(3, 8, generator=g).tolist()
    assert_fits(r, {float(v): 0.2 for v in range(3, 8)}, "random_(3, 8)")
    assert set(wg.empty(100).random_(4, generator=g).tolist()) <= {0.0, 1.0, 2.0, 3.0}


def test_random_without_bounds(backend):
    g = wg.Generator().manual_seed(10)
    f = wg.empty(N).random_(generator=g).tolist()
    assert min(f) >= 0 and max(f) <= 2 ** 24 and all(v == int(v) for v in f)
    assert_moments([v / 2 ** 24 for v in f], 0.5, 1 / 12, "float32 random_()")
    i = wg.zeros(N, dtype=wg.int32).random_(generator=g).tolist()
    assert min(i) >= 0 and max(i) <= 2 ** 31 - 1
    assert_moments([v / 2 ** 31 for v in i], 0.5, 1 / 12, "int32 random_()")
    assert_fits([v % 7 for v in i], {v: 1 / 7 for v in range(7)}, "int32 random_() mod 7")  # low bits mix too
    b = (wg.zeros(1000) > 1).random_(generator=g)
    assert b.dtype == wg.bool and 400 < b.float().sum().item() < 600
    wide = wg.zeros(N, dtype=wg.int64)
    try:
        wg.tensor([2 ** 40], dtype=wg.int64)
    except OverflowError:          # a backend holding int64 in 32 bits cannot take [0, 2**63 - 1]
        with pytest.raises(OverflowError, match="32 bits"):
            wide.random_(generator=g)
        assert wide.tolist() == [0] * N
        return
    w = wide.random_(generator=g).tolist()
    assert min(w) >= 0 and max(w) <= 2 ** 63 - 1 and max(w) > 2 ** 62
    assert_moments([v / 2 ** 63 for v in w], 0.5, 1 / 12, "int64 random_()")


def test_like_ops_keep_shape_dtype_and_backend(backend):
    g = wg.Generator().manual_seed(11)
    x = wg.zeros(2, 3)
    for t in (wg.rand_like(x, generator=g), wg.randn_like(x, generator=g), wg.randint_like(x, 5, generator=g),
              wg.randint_like(x, 2, 5, generator=g)):
        assert t.shape == (2, 3) and t.dtype == wg.float32 and t.device == x.device
    assert set(wg.randint_like(wg.zeros(500, dtype=wg.int32), 2, 5).tolist()) == {2, 3, 4}
    assert wg.rand_like(x, requires_grad=True).requires_grad


@pytest.mark.parametrize("args, kwargs, low, high", [
    ((10, (3,)), {}, 0, 10), ((2, 5, (3,)), {}, 2, 5), ((5,), {"size": (2,)}, 0, 5),
    ((2, 5), {"size": (2, 2)}, 2, 5), ((), {"low": 2, "high": 5, "size": (2,)}, 2, 5),
    ((), {"high": 5, "size": (4,)}, 0, 5), ((2,), {"high": 5, "size": (2,)}, 2, 5),
    ((3, (2,)), {"dtype": "float32"}, 0, 3),
])
def test_randint_forms_as_pytorch(backend, args, kwargs, low, high):
    expected = torch.randint(*args, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()})
    got = wg.randint(*args, **kwargs)
    assert got.shape == tuple(expected.shape)
    assert got.dtype == (wg.float32 if expected.dtype == torch.float32 else wg.long)
    wg.manual_seed(0)
    values = wg.cat([wg.randint(*args, **kwargs).reshape(-1) for _ in range(150)]).tolist()
    assert min(values) == low and max(values) == high - 1


@pytest.mark.parametrize("call", [
    lambda m: m.rand(2, 3), lambda m: m.rand((2, 3)), lambda m: m.rand([2, 3]), lambda m: m.rand(size=(2, 3)),
    lambda m: m.randn(()), lambda m: m.randn(0, 4),
])
def test_size_forms_as_pytorch(backend, call):
    assert call(wg).shape == tuple(call(torch).shape)


ERRORS = [   # each call in PyTorch's spelling: webgrad raises the error type PyTorch raises
    lambda m: m.multinomial(m.tensor([1.0, 2.0, 3.0]), 4),
    lambda m: m.multinomial(m.tensor([1.0, -2.0, 3.0]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("inf"), 3.0]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("nan"), 3.0]), 1, True),
    lambda m: m.multinomial(m.tensor([[0.0, 1.0], [0.0, 0.0]]), 1),
    lambda m: m.multinomial(m.tensor([1.0, 2.0]), 0),
    lambda m: m.multinomial(m.tensor([1, 2]), 1),
    lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    lambda m: m.bernoulli(m.tensor([0.0, 1.5])),
    lambda m: m.bernoulli(m.tensor([0, 1])),
    lambda m: m.zeros(2).bernoulli_(1.5),
    lambda m: m.normal(m.zeros(3), -1.0),
    lambda m: m.normal(m.zeros(3), m.tensor([1.0, -1.0, 1.0])),
    lambda m: m.normal(0.0, 1.0),
    lambda m: m.normal(m.zeros(3), 1.0, size=(3,)),
    lambda m: m.normal(0.0, -1.0, (2,)),
    lambda m: m.zeros(2).uniform_(2, 1),
    lambda m: m.zeros(2, dtype=m.int32).uniform_(),
    lambda m: m.zeros(2).normal_(0, -1),
    lambda m: m.zeros(2, dtype=m.int32).normal_(),
    lambda m: m.zeros(2).exponential_(0),
    lambda m: m.zeros(2, dtype=m.int32).exponential_(),
    lambda m: m.zeros(2).geometric_(0),
    lambda m: m.zeros(2).geometric_(1),
    lambda m: m.zeros(2).random_(5, 2),
    lambda m: m.zeros(2, requires_grad=True).uniform_(),
    lambda m: m.randint(5, 5, (3,)),
    lambda m: m.randint(10, 3),
    lambda m: m.randint(5, (2,), requires_grad=True),
    lambda m: m.randint(-5, (2,)),
    lambda m: m.rand(2, dtype=m.int32),
    lambda m: m.randn(2, dtype=m.int32),
    lambda m: m.rand(),
    lambda m: m.randperm(-1),
    lambda m: m.randperm(2.0),
    lambda m: m.randperm(3, requires_grad=True),
    lambda m: m.rand(2, generator=None, bogus=1),
]


@pytest.mark.parametrize("call", ERRORS, ids=range(len(ERRORS)))
def test_errors_as_pytorch(backend, call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type):
        call(wg)


def test_errors_name_the_op_and_change_nothing(backend):
    g = wg.Generator().manual_seed(0)
    before = g.get_state().tolist()
    with pytest.raises(RuntimeError, match="multinomial.*n_sample > prob_dist"):
        wg.multinomial(wg.ones(3), 4, generator=g)
    with pytest.raises(RuntimeError, match="randint.*low < high"):
        wg.randint(5, 5, (2,), generator=g)
    x = wg.ones(3)
    with pytest.raises(RuntimeError, match="uniform_"):
        x.uniform_(2, 1, generator=g)
    assert g.get_state().tolist() == before and x.tolist() == [1.0, 1.0, 1.0]


def test_random_methods_exist_as_pytorch():
    for name in ("uniform_", "normal_", "bernoulli_", "exponential_", "geometric_", "random_", "bernoulli",
                 "multinomial"):
        assert hasattr(torch.Tensor, name) and hasattr(wg.Tensor, name), name
    for name in ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "multinomial",
                 "bernoulli", "normal", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                 "Generator", "default_generator"):
        assert hasattr(torch, name) and hasattr(wg, name), name
