"""Long runs through every kernel with a loop: reductions, cumsum, cross-entropy rows, matmul's K,
ScatterAdd and Col2Im (fold), past 65,535 iterations and, for sums, past 2**24 elements.

Some WebGPU implementations stop a shader's loops after 65,535 iterations in all without an
error (Mesa's lavapipe, this suite's ``wgpu``), so the GPU kernels keep every loop far below
that by design and take more workgroups, passes or dispatches instead (the bound of each loop
is written beside it in ``backends/gpu/kernels``; ``test_every_kernel_loop_states_its_bound``
keeps it so). These tests compare with numpy in float64 under tolerances that float32
accumulation justifies, on every backend.
"""
import re
from importlib import resources

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F

EPS32 = float(np.finfo(np.float32).eps)   # 1.19e-7


def _sum_tolerance(n_terms):
    """A float32 sum of non-negative terms is off by at most about n_terms * EPS32 of the exact sum
    (each term is rounded at most once per addition it goes through). The GPU adds a term at most
    STEPS (64) times in a thread, then 2 * log2(256) times per pass in the trees; numpy sums
    pairwise; a plain sequential sum (matmul's K loop, a serial scan) goes through n_terms."""
    return n_terms * EPS32


# ---------------------------------------------------------------- sums past 2**24

def test_sum_of_ones_just_below_2_24(backend):
    """The issue's case: 16,774,657 ones summed to half that on lavapipe."""
    assert wg.ones(16_774_657).sum().item() == 16_774_657.0


def test_sum_past_2_24_elements(backend):
    n = 2**24 + 3
    x = np.random.default_rng(0).random(n, dtype=np.float32)   # non-negative: a lost chunk shows
    want = x.astype(np.float64).sum()
    got = wg.tensor(x).sum().item()
    assert abs(got - want) <= _sum_tolerance(64 + 2 * 8 * 3) * want, (got, want)


@pytest.mark.parametrize("shape,dim", [((3, 70_000), 1), ((70_000, 3), 0), ((2, 300, 300), (1, 2)),
                                       ((300, 2, 300), (0, 2))])
def test_sum_and_mean_long_runs(backend, shape, dim):
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    want = x.astype(np.float64).sum(axis=dim)
    t = wg.tensor(x)
    np.testing.assert_allclose(t.sum(dim).numpy(), want, rtol=_sum_tolerance(64 + 2 * 8 * 2))
    np.testing.assert_allclose(t.mean(dim).numpy(), want / (x.size // want.size), rtol=_sum_tolerance(64 + 2 * 8 * 2))


def test_integer_sum_and_logical_reductions_long(backend):
    x = np.arange(100_000, dtype=np.int32) % 7
    assert wg.tensor(x).sum().item() == int(x.sum())
    b = np.ones(100_000, dtype=bool)
    assert wg.tensor(b).all().item() is True
    b[99_999] = False
    assert wg.tensor(b).all().item() is False and wg.tensor(b).any().item() is True
    assert wg.tensor(np.zeros(100_000, dtype=bool)).any().item() is False


# ---------------------------------------------------------------- extrema and their indices

@pytest.mark.parametrize("n", [70_000, 1_100_000])   # 5 chunks; 68 chunks (a second pass per workgroup)
def test_extrema_and_first_index_in_a_late_chunk(backend, n):
    x = np.zeros((2, n), np.float32)
    x[0, n - 20_000] = x[0, n - 10] = 5.0        # a tie in two late chunks: the first one counts
    x[0, 3] = -7.0
    x[1, n - 5] = -3.0
    x[1, n - 30_000] = x[1, n - 2] = 2.0
    t = wg.tensor(x)
    assert t.argmax(1).tolist() == [n - 20_000, n - 30_000]
    assert t.argmin(1).tolist() == [3, n - 5]
    assert t.amax(1).tolist() == [5.0, 2.0] and t.amin(1).tolist() == [-7.0, -3.0]
    values, indices = t.max(1)
    assert values.tolist() == [5.0, 2.0] and indices.tolist() == [n - 20_000, n - 30_000]
    assert t.argmax().item() == n - 20_000


def test_first_nan_wins_across_chunks(backend):
    n = 70_000
    x = np.zeros(n, np.float32)
    x[5] = np.inf
    x[50_000] = x[60_000] = np.nan
    t = wg.tensor(x)
    assert t.argmax().item() == 50_000 and t.argmin().item() == 50_000
    assert np.isnan(t.amax().item()) and np.isnan(t.amin().item())


def test_three_passes(gpu, monkeypatch):
    """With chunks of 512 elements a run of 300,000 takes three passes (586, then 2 partial results
    an output): the recursion that runs of more than 2**28 elements take with the real chunk size."""
    from webgrad.backends.gpu import reduce as gpu_reduce
    monkeypatch.setattr(gpu_reduce, "CHUNK", 512)
    x = np.random.default_rng(2).random(300_000, dtype=np.float32)
    x[123_457] = 2.0
    x[299_000] = 2.0
    t = wg.tensor(x, device="wgpu")
    assert t.argmax().item() == 123_457 and t.max().item() == 2.0
    assert abs(t.sum().item() - x.astype(np.float64).sum()) <= _sum_tolerance(512 // 256 + 2 * 8 * 3) * x.sum()


# ---------------------------------------------------------------- cumsum

@pytest.mark.parametrize("shape,dim", [((70_000,), 0), ((3, 70_000), 1), ((70_000, 3), 0), ((2, 3000, 3), 1),
                                       ((1025,), 0)])
def test_cumsum_long(backend, shape, dim):
    x = np.random.default_rng(3).random(shape, dtype=np.float32)
    want = np.cumsum(x.astype(np.float64), axis=dim)
    got = wg.tensor(x).cumsum(dim).numpy()
    # a serial scan (numpy's on cpu, the GPU's up to 1024) adds up to n times; a block scan 8 + log2(256)
    # times a level
    tol = _sum_tolerance(shape[dim])
    np.testing.assert_allclose(got, want, rtol=tol)


def test_cumsum_block_scan_levels(gpu, monkeypatch):
    """Lines longer than SERIAL_SCAN take a block scan whose block totals are scanned the same way:
    with SERIAL_SCAN at 4, 70,000 elements take three levels (35 blocks, 1 block, a serial scan)."""
    from webgrad.backends.gpu import reduce as gpu_reduce
    monkeypatch.setattr(gpu_reduce, "SERIAL_SCAN", 4)
    x = np.random.default_rng(11).random((2, 70_000), dtype=np.float32)
    got = wg.tensor(x, device="wgpu").cumsum(1).numpy()
    np.testing.assert_allclose(got, np.cumsum(x.astype(np.float64), axis=1), rtol=_sum_tolerance(8 + 8 * 3))


def test_cumsum_of_ones_is_exact_past_65536(backend):
    assert wg.ones(70_000).cumsum(0).numpy().tolist() == list(range(1, 70_001))


def test_integer_cumsum_long(backend):
    x = np.arange(-35_000, 35_000, dtype=np.int32)
    np.testing.assert_array_equal(wg.tensor(x).cumsum(0).numpy(), np.cumsum(x, dtype=np.int64))


@pytest.mark.slow
def test_cumsum_past_2_24_elements(backend):
    n = 2**24 + 3
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    got = wg.tensor(x).cumsum(0).numpy()
    want = np.cumsum(x.astype(np.float64))
    idx = np.r_[0:5, 65_530:65_540, n - 5:n]
    np.testing.assert_allclose(got[idx], want[idx], rtol=_sum_tolerance(n))   # cpu's is sequential
    if backend != "cpu":   # three levels of block scan: far tighter
        np.testing.assert_allclose(got, want, rtol=_sum_tolerance(3 * 8 + 3))


# ---------------------------------------------------------------- cross-entropy over long rows

@pytest.mark.parametrize("classes", [4096, 4097, 65_535, 70_000])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_cross_entropy_long_rows(backend, classes, reduction):
    rng = np.random.default_rng(5)
    logits = (rng.standard_normal((3, classes)) * 3).astype(np.float32)
    target = np.array([0, classes - 1, classes // 2])
    z = logits.astype(np.float64)
    rows = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1) - z[np.arange(3), target]
    x = wg.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, wg.tensor(target), reduction=reduction)
    want = rows if reduction == "none" else rows.mean()
    np.testing.assert_allclose(loss.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    loss.sum().backward()
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(3), target] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p / (3 if reduction == "mean" else 1), atol=1e-6)


def test_cross_entropy_long_rows_ignore_index_and_nan(backend):
    logits = np.zeros((3, 70_000), np.float32)
    logits[1, 69_999] = np.nan
    loss = F.cross_entropy(wg.tensor(logits), wg.tensor([5, 6, 7]), ignore_index=7, reduction="none").tolist()
    assert loss[0] == pytest.approx(np.log(70_000)) and np.isnan(loss[1]) and loss[2] == 0.0


# ---------------------------------------------------------------- matmul's inner dimension

@pytest.mark.parametrize("m,k,n", [(2, 70_000, 3), (5, 70_001, 7), (64, 32_772, 64), (3, 16_385, 4)])
def test_matmul_long_k(backend, m, k, n):
    rng = np.random.default_rng(6)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = (wg.tensor(a) @ wg.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=_sum_tolerance(k) / 16)   # rounding errors of k terms
    # add up as a random walk: sqrt(k) typical; k / 16 leaves room (a lost K chunk is 20% or more)


def test_matmul_long_k_transposed_and_batched(backend):
    rng = np.random.default_rng(7)
    a, b = rng.random((2, 40_000, 3), dtype=np.float32), rng.random((40_000, 4), dtype=np.float32)
    want = np.swapaxes(a.astype(np.float64), 1, 2) @ b
    got = (wg.tensor(a).transpose(1, 2) @ wg.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=_sum_tolerance(40_000) / 16)


# ---------------------------------------------------------------- ScatterAdd, Col2Im

def test_scatter_add_long_index(backend):
    idx = np.random.default_rng(8).integers(0, 10, 70_000)
    got = wg.zeros(10).scatter_add(0, wg.tensor(idx), wg.ones(70_000)).numpy()
    np.testing.assert_array_equal(got, np.bincount(idx, minlength=10).astype(np.float32))


def test_embedding_gradient_past_65535_tokens(backend):
    tokens = np.random.default_rng(9).integers(0, 5, 70_000)
    w = wg.ones(5, 2, requires_grad=True)
    F.embedding(wg.tensor(tokens), w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.repeat(np.bincount(tokens, minlength=5), 2).reshape(5, 2))


def test_fold_with_a_window_of_more_than_4096_offsets(backend):
    """Col2Im walks a window's offsets in dispatches of 4096: a 1 x 5000 window takes two."""
    cols = np.random.default_rng(10).random((1, 5000, 3), dtype=np.float32)
    got = F.fold(wg.tensor(cols), (1, 5002), (1, 5000)).numpy()
    want = np.zeros((1, 1, 1, 5002))
    for l in range(3):
        want[0, 0, 0, l:l + 5000] += cols[0, :, l]
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ---------------------------------------------------------------- every loop has its bound

_LOOP = re.compile(r"\bfor \(var |\bloop \{|\bwhile \(")
_KNOWN_BOUND = re.compile(r"< \d+u?;|\$\{(RANK|KR|RR|BR)\} - 1; d >= 0|\{rank - 1\}; d >= 0|//.*\btimes\b")


def _wgsl_sources():
    """Every kernel file, and the GPU backend's Python modules (which hold WGSL snippets)."""
    package = resources.files("webgrad.backends.gpu")
    files = list(package.joinpath("kernels").iterdir()) + list(package.iterdir())
    return {f.name: f.read_text() for f in files if f.name.endswith((".wgsl", ".py"))}


def test_every_kernel_loop_states_its_bound():
    """A WGSL loop (for, loop, while) runs over a rank, a constant count, or says how many times it
    runs at most in a comment on its line ('... times'), so no loop's count grows with the data
    unbounded."""
    loops = 0
    for name, text in _wgsl_sources().items():
        for line in text.splitlines():
            if _LOOP.search(line):
                loops += 1
                assert _KNOWN_BOUND.search(line), f"{name}: a loop without a stated bound: {line.strip()}"
    assert loops >= 20, f"found only {loops} loops: the sources were not read"
