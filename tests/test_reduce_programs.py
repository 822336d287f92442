"""The GPU reductions' two ways, each forced in turn: a workgroup tree per output (a hardware GPU's choice
from runs of 64, a software adapter's from 1024: ``backends/gpu/reduce.py``'s ``WG_THRESHOLD``) and a
serial loop per output, against torch on every backend, at run lengths around both thresholds, over
the first and the last axis (strided and contiguous runs), for sums, extrema, arg-reductions and any."""
import numpy as np
import pytest
import torch

import webgrad as wg

RNG = np.random.default_rng(17)


@pytest.fixture(params=[64, 1024], ids=["from-64", "from-1024"])
def threshold(request, monkeypatch):
    """The run length from which every GPU adapter reduces with a workgroup tree during the test."""
    from webgrad.backends.gpu import reduce
    monkeypatch.setattr(reduce, "WG_THRESHOLD", {False: request.param, True: request.param})
    return request.param


REDUCTIONS = [  # (webgrad method, torch function)
    ("sum", lambda t, d: t.sum(d)), ("amax", lambda t, d: t.amax(d)),
    ("argmin", lambda t, d: t.argmin(d)), ("any", lambda t, d: (t > 2.5).any(d)),
]


@pytest.mark.parametrize("name,ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("rows", [63, 64, 200, 1023, 1024, 3000])
@pytest.mark.parametrize("dim", [0, 1])
def test_reductions_either_way_match_torch(backend, threshold, name, ref, rows, dim):
    x = RNG.standard_normal((rows, 7) if dim == 0 else (7, rows)).astype(np.float32)
    t = wg.tensor(x)
    got = (t > 2.5).any(dim) if name == "any" else getattr(t, name)(dim)
    want = ref(torch.from_numpy(x), dim)
    assert tuple(got.shape) == tuple(want.shape)
    if name == "sum":
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
