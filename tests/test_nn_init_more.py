"""nn.init's eye_, dirac_, sparse_ (PyTorch's draws after manual_seed) and the deprecated names
without the underscore, against torch."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

DEPRECATED = {"uniform": (), "normal": (), "constant": (0.3,), "xavier_uniform": (), "xavier_normal": (),
              "kaiming_uniform": (), "kaiming_normal": (), "eye": (), "sparse": (0.5,)}


def test_eye_and_dirac_match_torch(backend):
    assert wg.nn.init.eye_(wg.empty(3, 5)).tolist() == torch.nn.init.eye_(torch.empty(3, 5)).tolist()
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 3, 1, 2, 3), 3), ((2, 5, 3, 3), 1)):
        assert wg.nn.init.dirac_(wg.empty(*shape), groups).tolist() == \
            torch.nn.init.dirac_(torch.empty(*shape), groups).tolist()
    with pytest.raises(ValueError, match="2 dimensions"):
        wg.nn.init.eye_(wg.empty(2, 2, 2))
    with pytest.raises(ValueError, match="3, 4, or 5"):
        wg.nn.init.dirac_(wg.empty(2, 2))
    with pytest.raises(ValueError, match="divisible by groups"):
        wg.nn.init.dirac_(wg.empty(3, 2, 3), groups=2)
    p = wg.nn.Parameter(wg.empty(2, 2))
    assert wg.nn.init.eye_(p) is p and p.is_leaf and p.requires_grad


def test_sparse_draws_as_torch(backend):
    wg.manual_seed(3); torch.manual_seed(3)
    w, t = wg.nn.init.sparse_(wg.empty(6, 4), 0.3, std=0.5), torch.nn.init.sparse_(torch.empty(6, 4), 0.3, std=0.5)
    np.testing.assert_allclose(np.asarray(w.tolist()), t.numpy(), atol=1e-6)
    assert int((w == 0).sum()) == 4 * 2
    with pytest.raises(ValueError, match="2 dimensions"):
        wg.nn.init.sparse_(wg.empty(2), 0.1)


@pytest.mark.parametrize("name", sorted(DEPRECATED))
def test_deprecated_names_warn_and_fill_as_torch(name):
    shape = (3, 4)
    wg.manual_seed(5); torch.manual_seed(5)
    with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"):
        w = getattr(wg.nn.init, name)(wg.empty(*shape), *DEPRECATED[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = getattr(torch.nn.init, name)(torch.empty(*shape), *DEPRECATED[name])
    np.testing.assert_allclose(np.asarray(w.tolist()), t.numpy(), atol=1e-6)


def test_deprecated_dirac_warns():
    with pytest.warns(FutureWarning, match="nn.init.dirac_"):
        w = wg.nn.init.dirac(wg.empty(2, 2, 3))
    assert w.tolist() == torch.nn.init.dirac_(torch.empty(2, 2, 3)).tolist()
