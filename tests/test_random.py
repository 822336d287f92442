"""Generators (``wg.Generator``, the default generator, ``wg.random``) and their contracts:
reproducibility with one seed on each backend, independent streams, ``generator=`` leaving the
default stream alone, states that restore, and PyTorch's API and error types.
The distributions of the random ops are checked in test_random_ops.py."""
import math

import pytest
import torch

import webgrad as wg


def draws(generator=None, n=6):
    """A few draws of each kind, on the current backend, as lists."""
    return [wg.rand(n, generator=generator).tolist(), wg.randn(n, generator=generator).tolist(),
            wg.randint(0, 1000, (n,), generator=generator).tolist(), wg.randperm(n, generator=generator).tolist(),
            wg.multinomial(wg.ones(n), 2, generator=generator).tolist(),
            wg.bernoulli(wg.full((n,), 0.5), generator=generator).tolist()]


def test_generator_api_as_pytorch():
    g = wg.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert g.device == "cpu" and wg.Generator(device="wgpu").device == "wgpu"
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    for seed in (-1, -2 ** 63, 2 ** 64 - 1):      # negative seeds wrap as PyTorch's
        assert g.manual_seed(seed).initial_seed() == torch.Generator().manual_seed(seed).initial_seed()
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s and 0 <= s < 2 ** 64
    assert g.seed() != s                                  # non-deterministic
    assert isinstance(wg.default_generator, wg.Generator)
    assert wg.manual_seed(5) is wg.default_generator and wg.initial_seed() == 5
    assert wg.manual_seed("7") is wg.default_generator and wg.initial_seed() == 7   # int(seed), as torch
    s = wg.seed()
    assert wg.initial_seed() == s
    assert wg.random.manual_seed is wg.manual_seed and wg.random.default_generator is wg.default_generator


@pytest.mark.parametrize("bad", [1.5, "3", None, True, 2 ** 64, -2 ** 63 - 1])
def test_manual_seed_errors_as_pytorch(bad):
    with pytest.raises(Exception) as expected:
        torch.Generator().manual_seed(bad)
    with pytest.raises(expected.type, match="manual_seed"):
        wg.Generator().manual_seed(bad)


def test_one_seed_repeats_on_each_backend(backend):
    g = wg.Generator()
    a = draws(g.manual_seed(11))
    assert draws(g.manual_seed(11)) == a
    assert draws(g.manual_seed(12)) != a
    wg.manual_seed(11)
    assert draws() == a                       # the default generator draws the same stream
    assert draws() != a                       # and moves on


def test_generator_keyword_leaves_the_default_stream_alone(backend):
    wg.manual_seed(0)
    expected = draws() + draws()
    wg.manual_seed(0)
    first = draws()
    other = wg.Generator().manual_seed(0)
    draws(other)
    wg.nn.init.normal_(wg.empty(3, 4), generator=other)
    wg.empty(5).uniform_(generator=other).normal_(generator=other).bernoulli_(0.5, generator=other)
    assert first + draws() == expected


def test_two_generators_are_independent(backend):
    a, b = wg.Generator().manual_seed(1), wg.Generator().manual_seed(2)
    alone_a = [draws(a) for _ in range(2)]
    alone_b = [draws(b) for _ in range(2)]
    a.manual_seed(1), b.manual_seed(2)
    interleaved = [(draws(a), draws(b)) for _ in range(2)]
    assert [x for x, _ in interleaved] == alone_a and [y for _, y in interleaved] == alone_b
    # streams of different seeds are uncorrelated: |r| of 20000 pairs stays within 5 standard errors
    x = wg.randn(20000, generator=a.manual_seed(1)).tolist()
    y = wg.randn(20000, generator=b.manual_seed(2)).tolist()
    r = sum(u * v for u, v in zip(x, y)) / math.sqrt(sum(u * u for u in x) * sum(v * v for v in y))
    assert abs(r) < 5 / math.sqrt(20000)
    # and so are consecutive draws of one generator
    x, y = wg.randn(20000, generator=a).tolist(), wg.randn(20000, generator=a).tolist()
    assert abs(sum(u * v for u, v in zip(x, y)) / 20000) < 5 / math.sqrt(20000)


def test_states_restore(backend):
    g = wg.Generator().manual_seed(4)
    draws(g)
    state = g.get_state()
    assert state.dtype == wg.int64 and state.shape == (5056,)     # PyTorch's 5056 bytes, as byte values
    a = draws(g)
    assert g.set_state(state) is g and draws(g) == a
    assert g.initial_seed() == 4
    fresh = wg.Generator().set_state(state)          # a state carries the whole generator
    assert draws(fresh) == a
    wg.manual_seed(9)
    state = wg.get_rng_state()
    a = draws()
    assert wg.set_rng_state(state) is None and draws() == a


def test_set_state_refuses_other_tensors():
    g = wg.Generator()
    with pytest.raises(TypeError, match="set_state"):
        g.set_state(wg.zeros(5))
    with pytest.raises(TypeError, match="set_state"):
        g.set_state([1, 2, 3, 4, 5])
    with pytest.raises(TypeError, match="set_state"):
        g.set_state(wg.zeros(5, dtype=wg.int32))
    with pytest.raises(RuntimeError, match="not a generator state"):
        g.set_state(wg.zeros(5056, dtype=wg.int32))
    with pytest.raises(RuntimeError, match="not a generator state"):
        g.set_state(wg.full((5056,), 300))
    assert g.initial_seed() == 67280421310721         # nothing half-updated


def test_fork_rng(backend):
    wg.manual_seed(3)
    with wg.random.fork_rng():
        inside = draws()
    assert draws() == inside
    wg.manual_seed(3)
    with wg.random.fork_rng(enabled=False):
        draws()
    assert draws() != inside


def test_random_ops_refuse_a_non_generator():
    for call in (lambda: wg.rand(2, generator=0), lambda: wg.randperm(3, generator=torch.Generator()),
                 lambda: wg.empty(2).normal_(generator="g")):
        with pytest.raises(TypeError, match="generator must be a webgrad.Generator"):
            call()


def test_init_functions_take_a_generator(backend):
    g = wg.Generator()
    for init in (wg.nn.init.uniform_, wg.nn.init.normal_, wg.nn.init.xavier_uniform_, wg.nn.init.xavier_normal_,
                 wg.nn.init.kaiming_uniform_, wg.nn.init.kaiming_normal_):
        w = wg.empty(4, 6, requires_grad=True)
        first = init(w, generator=g.manual_seed(0)).tolist()
        assert init(w, generator=g.manual_seed(0)).tolist() == first, init.__name__
        assert init(w, generator=g).tolist() != first, init.__name__
        assert w.requires_grad and w.is_leaf


def test_dropout_draws_from_the_default_generator(backend):
    x = wg.ones(100)
    wg.manual_seed(2)
    a = wg.nn.functional.dropout(x, 0.5).tolist()
    wg.manual_seed(2)
    assert wg.nn.functional.dropout(x, 0.5).tolist() == a
