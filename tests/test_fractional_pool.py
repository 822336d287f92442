"""fractional_max_pool2d/3d (PyTorch's window draws: given samples and seeded runs), their modules,
and max_pool3d with indices, against torch; finite differences (float64, cpu) and backend agreement."""
import numpy as np
import pytest
import torch

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, op_tests, torch_reference

TF = torch.nn.functional
rng = np.random.default_rng(0)
X2, X3 = rng.standard_normal((2, 3, 9, 11)), rng.standard_normal((2, 2, 5, 6, 7))
S2, S3 = rng.uniform(0, 1, (2, 3, 2)), rng.uniform(0, 1, (2, 2, 3))


def _frac2(lib, x, k=(2, 3), o=(4, 5)):
    f, t = (F, wg.tensor) if lib is wg else (TF, torch.tensor)
    return f.fractional_max_pool2d(x, k, output_size=o, _random_samples=t(S2, dtype=x.dtype, device=x.device))


def _frac3(lib, x):
    f, t = (F, wg.tensor) if lib is wg else (TF, torch.tensor)
    return f.fractional_max_pool3d(x, 2, output_size=(3, 4, 5), _random_samples=t(S3, dtype=x.dtype, device=x.device))


CASES = [OpCase("fractional_max_pool2d", lambda x: _frac2(wg, x), torch_reference(lambda x: _frac2(torch, x)), [X2]),
         OpCase("fractional_max_pool2d-k3", lambda x: _frac2(wg, x, 3, (7, 9)),
                torch_reference(lambda x: _frac2(torch, x, 3, (7, 9))), [X2]),
         OpCase("fractional_max_pool3d", lambda x: _frac3(wg, x), torch_reference(lambda x: _frac3(torch, x)), [X3]),
         OpCase("max_pool3d-indices", lambda x: F.max_pool3d(x, 3, 2, 1, return_indices=True)[0],
                torch_reference(lambda x: TF.max_pool3d(x, 3, 2, 1)), [X3]),
         OpCase("max_pool3d-ceil", lambda x: F.max_pool3d_with_indices(x, (2, 3, 2), (1, 2, 2), 0, (2, 1, 1), True)[0],
                torch_reference(lambda x: TF.max_pool3d(x, (2, 3, 2), (1, 2, 2), 0, (2, 1, 1), True)), [X3])]
globals().update(op_tests(CASES))


def test_indices_match_torch(backend):
    x2, x3 = X2.astype("float32"), X3.astype("float32")
    wi = F.fractional_max_pool2d(wg.tensor(x2), (2, 3), (4, 5), return_indices=True,
                                 _random_samples=wg.tensor(S2.astype("float32")))[1]
    ti = TF.fractional_max_pool2d(torch.tensor(x2), (2, 3), (4, 5), return_indices=True,
                                  _random_samples=torch.tensor(S2.astype("float32")))[1]
    assert wi.dtype == wg.long and wi.tolist() == ti.tolist()
    wi = F.fractional_max_pool3d_with_indices(wg.tensor(x3), 2, (3, 4, 5), _random_samples=wg.tensor(S3.astype("float32")))[1]
    ti = TF.fractional_max_pool3d(torch.tensor(x3), 2, (3, 4, 5), return_indices=True,
                                  _random_samples=torch.tensor(S3.astype("float32")))[1]
    assert wi.tolist() == ti.tolist()
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)):
        assert F.max_pool3d(wg.tensor(x3), return_indices=True, **kw)[1].tolist() == \
            TF.max_pool3d(torch.tensor(x3), return_indices=True, **kw)[1].tolist()


def test_seeded_draws_and_modules_match_torch(backend):
    x = X2.astype("float32")
    wg.manual_seed(4); torch.manual_seed(4)
    wm, tm = wg.nn.FractionalMaxPool2d(2, output_ratio=0.5), torch.nn.FractionalMaxPool2d(2, output_ratio=0.5)
    assert repr(wm) == repr(tm) and list(wm.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(np.asarray(wm(wg.tensor(x)).tolist()), tm(torch.tensor(x)).numpy())
    np.testing.assert_allclose(np.asarray(wm(wg.tensor(x[0])).tolist()), tm(torch.tensor(x[0])).numpy())   # unbatched
    wm3 = wg.nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    tm3 = torch.nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    (wy, wi), (ty, ti) = wm3(wg.tensor(X3.astype("float32"))), tm3(torch.tensor(X3.astype("float32")))
    np.testing.assert_allclose(np.asarray(wy.tolist()), ty.numpy())
    assert wi.tolist() == ti.tolist()


def test_errors():
    x = wg.ones(1, 1, 4, 4)
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool2d(x, 3, output_size=3)
    with pytest.raises(ValueError, match="only one of"):
        wg.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        wg.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="half of effective kernel"):
        F.max_pool3d(wg.ones(1, 1, 4, 4, 4), 2, padding=2, return_indices=True)
