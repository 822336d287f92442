"""The named tuples ops return print as torch.return_types do (one field a line), under webgrad's
name, and behave as tuples with fields, on every backend."""
import doctest
import importlib

import pytest
import torch

import webgrad as wg

X = [[1.0, 2.0, 0.5], [3.0, 5.0, 4.0]]
CALLS = ["max(1)", "min(0)", "max(1, keepdim=True)", "sort()", "sort(0, descending=True)", "topk(2)", "median(1)",
         "kthvalue(2, 1)", "aminmax()", "nanmedian(0)"]


@pytest.mark.parametrize("call", CALLS)
def test_repr_as_torch(call, backend):
    want = eval(f"torch.tensor(X).{call}")   # noqa: S307
    got = eval(f"wg.tensor(X, device=backend).{call}")   # noqa: S307
    if backend == "cpu":
        assert repr(got) == repr(want).replace("torch.return_types.", "webgrad.return_types.")
    else:   # the tensors' reprs name their device; the layout is torch's
        lines = [f"{f}={getattr(got, f)!r}" for f in got._fields]
        assert repr(got) == f"webgrad.return_types.{type(want).__name__}(\n" + ",\n".join(lines) + ")"
    assert str(got) == repr(got) and type(got).__name__ == type(want).__name__
    assert len(got) == len(want) == 2 and all(getattr(got, f).tolist() == getattr(want, f).tolist() for f in got._fields)


def test_docstrings():
    result = doctest.testmod(importlib.import_module("webgrad.return_types"))
    assert result.attempted > 0 and result.failed == 0
