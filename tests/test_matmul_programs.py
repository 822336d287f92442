"""MatMul's GPU programs, each forced in turn (the tiled one a hardware GPU gets, the register-blocked
one a software adapter gets: ``backends/gpu/linalg.py``'s ``PROGRAM_BY_ADAPTER``), against torch on
every backend: each way an operand is read (scalar, vec4 along K, vec4 along the output's rows or
columns), odd sizes, K = 1, K not a multiple of 4, tiny and empty dims, batch broadcast, the long-K
chunks, int32 and float16, and a layer's gradients. On cpu the program table governs nothing: the
cases run there as the reference kernel's own check."""
import numpy as np
import pytest
import torch

import webgrad as wg
from webgrad import kernel_names as K
from webgrad.engine import run_kernel

RNG = np.random.default_rng(19)

# (A's shape, B's shape, transpose_a, transpose_b): the shapes as stored, before the transposes
PRODUCTS = [
    ((5, 7), (7, 3), False, False),           # all scalar, nothing a multiple of 4
    ((8, 12), (12, 16), False, False),        # A vec4 along K, B and the output vec4 along N
    ((12, 8), (12, 16), True, False),         # A transposed: vec4 along M
    ((9, 12), (9, 20), True, False),          # A along M, B along N, K = 9: a tail of 1 after two vec4 steps
    ((12, 9), (20, 9), False, True),          # B transposed, K = 9: both scalar
    ((16, 16), (12, 16), False, True),        # B transposed: vec4 along K
    ((16, 9), (10, 16), True, True),          # A scalar (M = 9), B along K, output scalar (N = 10)
    ((1, 1), (1, 1), False, False),
    ((3, 1), (1, 5), False, False),           # K = 1
    ((1, 6), (1, 8), True, False),            # K = 1, A transposed
    ((2, 5), (5, 1), False, False),           # N = 1
    ((65, 33), (33, 70), False, False),       # many blocks, ragged edges
    ((128, 256), (10, 256), False, True),     # the MLP's second layer, forward
    ((128, 10), (128, 256), True, False),     # its weight's gradient
    ((2, 1, 9, 6), (3, 6, 7), False, False),  # batch broadcast on both sides
    ((3, 6, 8), (6, 5), True, False),         # batched A, transposed, against a matrix
    ((4, 12), (2, 3, 8, 12), False, True),    # a matrix against a batched, transposed B
    ((0, 4), (4, 3), False, False),           # empty rows
    ((3, 0), (0, 2), False, False),           # empty K: zeros
    ((2, 3), (3, 0), False, False),           # empty columns
    ((0, 2, 3), (3, 4), False, False),        # empty batch
]


@pytest.fixture(params=["tiled", "blocked"])
def program(request, monkeypatch):
    """The MatMul program every GPU adapter gets during the test."""
    from webgrad.backends.gpu import linalg
    monkeypatch.setattr(linalg, "PROGRAM_BY_ADAPTER", {False: request.param, True: request.param})
    return request.param


def _operand(shape, dtype):
    if dtype is wg.int32:
        return RNG.integers(-4, 5, size=shape).astype(np.int32)
    return RNG.standard_normal(shape).astype(np.float32)


def _torch_product(a, b, ta, tb):
    ta_, tb_ = torch.from_numpy(a).double(), torch.from_numpy(b).double()
    return torch.matmul(ta_.transpose(-1, -2) if ta else ta_, tb_.transpose(-1, -2) if tb else tb_).numpy()


@pytest.mark.parametrize("sa,sb,ta,tb", PRODUCTS, ids=str)
def test_matmul_programs_match_torch(backend, program, sa, sb, ta, tb):
    a, b = _operand(sa, wg.float32), _operand(sb, wg.float32)
    got = run_kernel(K.MATMUL, wg.tensor(a), wg.tensor(b), transpose_a=ta, transpose_b=tb).numpy()
    want = _torch_product(a, b, ta, tb)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [wg.int32, wg.float16], ids=str)
@pytest.mark.parametrize("sa,sb,ta,tb", [((5, 7), (7, 3), False, False), ((12, 9), (12, 20), True, False),
                                         ((16, 16), (12, 16), False, True)], ids=str)
def test_matmul_programs_other_dtypes(backend, program, dtype, sa, sb, ta, tb):
    a, b = _operand(sa, dtype), _operand(sb, dtype)
    x, y = wg.tensor(a).to(dtype), wg.tensor(b).to(dtype)
    got = run_kernel(K.MATMUL, x, y, transpose_a=ta, transpose_b=tb)
    assert got.dtype is dtype
    want = _torch_product(x.to(wg.float32).numpy(), y.to(wg.float32).numpy(), ta, tb)
    if dtype is wg.int32:
        np.testing.assert_array_equal(got.numpy(), want.astype(np.int32))
    else:      # float32 accumulation rounded once to float16
        np.testing.assert_allclose(got.to(wg.float32).numpy(), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("sa,sb,ta,tb", [((16_388, 8), (16_388, 12), True, False),     # A along M, chunked K
                                         ((5, 16_390), (3, 16_390), False, True)], ids=str)   # scalar, K tail
def test_matmul_programs_long_k(backend, program, sa, sb, ta, tb):
    a, b = RNG.random(sa, dtype=np.float32), RNG.random(sb, dtype=np.float32)
    got = run_kernel(K.MATMUL, wg.tensor(a), wg.tensor(b), transpose_a=ta, transpose_b=tb).numpy()
    np.testing.assert_allclose(got, _torch_product(a, b, ta, tb), rtol=1e-4)   # a lost chunk is >= 25% off


def test_matmul_programs_linear_gradients(backend, program):
    """A Linear layer's forward and both gradients (three programs: B transposed, plain, A transposed)."""
    x0, w0, b0 = RNG.standard_normal((33, 20)), RNG.standard_normal((9, 20)), RNG.standard_normal(9)
    x, w, b = (wg.tensor(v.astype(np.float32), requires_grad=True) for v in (x0, w0, b0))
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x0, w0, b0))
    (wg.nn.functional.linear(x, w, b).relu() ** 2).sum().backward()
    (torch.nn.functional.linear(tx, tw, tb).relu() ** 2).sum().backward()
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_block_program_reads_each_operand_its_cheapest_way():
    """The register-blocked program's choice of loads, by the operand's (output dimension, K) strides."""
    from webgrad.backends.gpu.linalg import operand_mode
    assert operand_mode((784, 1), 784, 128, "m") == "k"        # x of x @ W.T: contiguous along K
    assert operand_mode((784, 1), 784, 256, "n") == "k"        # W of x @ W.T: along K too
    assert operand_mode((1, 256), 10, 256, "n") == "n"         # W of g @ W: along the output's columns
    assert operand_mode((1, 12), 9, 12, "m") == "m"            # a transposed A, K = 9
    assert operand_mode((1, 10), 3, 10, "n") == "s"            # nothing a multiple of 4
