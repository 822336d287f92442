"""Tensor printing is PyTorch's: the same text for the same values, summarised above the threshold,
under the same ``set_printoptions``; ``format()`` of a tensor as PyTorch's."""
import math
import re

import pytest
import torch
import torch._tensor_str as torch_str

import webgrad as wg
from webgrad import printing

DTYPES = {torch.float32: wg.float32, torch.float64: wg.float64, torch.float16: wg.float16,
          torch.bfloat16: wg.bfloat16, torch.int32: wg.int32, torch.int64: wg.int64, torch.bool: wg.bool}
NAN, INF = math.nan, math.inf


def _seeded(fn, *shape, dtype=torch.float32):
    return fn(*shape, generator=torch.Generator().manual_seed(sum(shape) + 1)).to(dtype)


def mixed(*shape):
    """Values of mixed sign whose magnitudes run from ~1e-3 to ~1e5 across the last dimension."""
    scales = torch.tensor([1e-3, 1.0, 250.0, 1e5]).repeat(shape[-1])[:shape[-1]]
    return _seeded(torch.randn, *shape) * scales


# (name, a torch tensor) pairs: each prints identically in webgrad
CASES = [
    ("ints", lambda: torch.tensor([1, 2, 3])),
    ("ints 2-d widths", lambda: torch.tensor([[1, -20], [300, 4]])),
    ("int32", lambda: torch.tensor([[7, -8], [9, 1000]], dtype=torch.int32)),
    ("bools", lambda: torch.tensor([[True, False], [False, True]])),
    ("whole floats", lambda: torch.tensor([1.0, 10.0, -100.0])),
    ("decimals", lambda: torch.tensor([0.1, 0.25, 123.5])),
    ("range 1000x: scientific", lambda: torch.tensor([0.5, 1000.5])),
    ("tiny", lambda: torch.tensor([1e-5, 1.0])),
    ("huge whole", lambda: torch.tensor([1e9, 1.0])),
    ("huge decimal", lambda: torch.tensor([1.5e9, 2.25])),
    ("negative zeros", lambda: torch.tensor([-0.0, 0.0, -0.0])),
    ("negative zero and decimals", lambda: torch.tensor([-0.0, 1.5, -2.25])),
    ("all zeros", lambda: torch.zeros(2, 3)),
    ("nan and inf", lambda: torch.tensor([NAN, 1.0, INF, -INF])),
    ("nan with decimals", lambda: torch.tensor([[NAN, 1.5], [-INF, 2.0]])),
    ("only nan", lambda: torch.tensor([NAN, NAN])),
    ("nan in scientific", lambda: torch.tensor([1e-7, NAN, 3.0])),
    ("0-d float", lambda: torch.tensor(3.5)),
    ("0-d whole", lambda: torch.tensor(-2.0)),
    ("0-d negative zero", lambda: torch.tensor(-0.0)),
    ("0-d nan", lambda: torch.tensor(NAN)),
    ("0-d int", lambda: torch.tensor(7)),
    ("0-d bool", lambda: torch.tensor(True)),
    ("empty", lambda: torch.zeros(0)),
    ("empty 2-d", lambda: torch.zeros(0, 3)),
    ("empty 3-d", lambda: torch.zeros(2, 0, 4)),
    ("empty int64", lambda: torch.zeros(0, dtype=torch.int64)),
    ("empty bool", lambda: torch.zeros(0, 2, dtype=torch.bool)),
    ("1-d randn", lambda: _seeded(torch.randn, 5)),
    ("2-d randn", lambda: _seeded(torch.randn, 3, 4)),
    ("3-d randn", lambda: _seeded(torch.randn, 2, 3, 4)),
    ("4-d randn", lambda: _seeded(torch.randn, 2, 2, 3, 2)),
    ("mixed magnitudes 2-d", lambda: mixed(4, 4)),
    ("long row wraps", lambda: _seeded(torch.randn, 30)),
    ("long int row wraps", lambda: torch.arange(-40, 40) * 37),
    ("wide 2-d wraps", lambda: _seeded(torch.randn, 3, 25)),
    ("large 300x300", lambda: _seeded(torch.randn, 300, 300)),
    ("large 1-d", lambda: torch.arange(2000)),
    ("large 3-d", lambda: _seeded(torch.rand, 20, 20, 20)),
    ("large 4-d", lambda: _seeded(torch.randn, 6, 6, 6, 6)),
    ("large, one short dim", lambda: _seeded(torch.randn, 2, 700)),
    ("large mixed", lambda: mixed(40, 40)),
    ("large bool", lambda: _seeded(torch.rand, 40, 40) > 0.5),
    ("large int32", lambda: (torch.arange(1200, dtype=torch.int32) - 600).reshape(30, 40)),
    ("float64", lambda: torch.tensor([1.0, 2.5], dtype=torch.float64)),
    ("float64 large", lambda: _seeded(torch.randn, 50, 30, dtype=torch.float64)),
    ("float64 scientific", lambda: torch.tensor([1e-10, 123.0], dtype=torch.float64)),
    ("float16", lambda: torch.tensor([0.1, 2.0, 65504.0], dtype=torch.float16)),
    ("float16 randn", lambda: _seeded(torch.randn, 3, 5, dtype=torch.float16)),
    ("bfloat16", lambda: torch.tensor([0.1, 3.0, -1e5], dtype=torch.bfloat16)),
    ("bfloat16 randn 3-d", lambda: _seeded(torch.randn, 2, 3, 3, dtype=torch.bfloat16)),
    ("bfloat16 large", lambda: _seeded(torch.randn, 40, 40, dtype=torch.bfloat16)),
    ("float16 0-d", lambda: torch.tensor(1.5, dtype=torch.float16)),
]
GPU_DTYPES = {torch.float32, torch.int32, torch.int64, torch.bool}   # what every backend holds


def webgrad_twin(t: torch.Tensor, backend=None) -> wg.Tensor:
    """The same values, shape and dtype in webgrad (through Python numbers: exact for every dtype)."""
    flat = wg.tensor(t.reshape(-1).tolist(), dtype=DTYPES[t.dtype], backend=backend)
    return flat.reshape(tuple(t.shape))


def torch_text(t: torch.Tensor) -> str:
    """PyTorch's repr of ``t`` with its dtype names given webgrad's module name, laid out by PyTorch's
    own code (a longer name may move a suffix to the next line)."""
    body = "tensor(" + torch_str._tensor_str(t.detach(), 7)
    text = repr(t)
    assert text.startswith(body), text
    suffixes = re.split(r",\s+(?=[a-z_]+=)", text[len(body):-1])[1:]
    return torch_str._add_suffixes(body, [s.replace("torch.", "webgrad.") for s in suffixes], 7, False)


def grad_fn_names_aligned(text: str) -> str:
    """PyTorch numbers its backward classes (``MulBackward0``); webgrad does not."""
    return re.sub(r"grad_fn=<(\w+?)\d*>", r"grad_fn=<\1>", text)


@pytest.fixture
def options():
    """Set print options on both libraries at once; both are back to their defaults afterwards."""
    def both(**kw):
        torch.set_printoptions(**kw)
        wg.set_printoptions(**kw)
    yield both
    torch.set_printoptions(profile="default")
    wg.set_printoptions(profile="default")


def test_default_options_are_torchs():
    assert printing.get_printoptions() == torch_str.get_printoptions()


@pytest.mark.parametrize("name, make", [c for c in CASES if c[1]().dtype in GPU_DTYPES], ids=lambda c: c)
def test_repr_matches_torch_on_every_backend(name, make, backend):
    t = make()
    ours = webgrad_twin(t, backend)
    assert torch_str._tensor_str(t, 7) == printing.tensor_text(ours, 7), name
    if backend == "cpu":
        assert repr(ours) == torch_text(t), name
        assert str(ours) == repr(ours)


@pytest.mark.parametrize("name, make", [c for c in CASES if c[1]().dtype not in GPU_DTYPES], ids=lambda c: c)
def test_repr_matches_torch_for_cpu_only_dtypes(name, make):
    t = make()
    assert repr(webgrad_twin(t, "cpu")) == torch_text(t), name


def test_gpu_tensors_name_their_device(backend):
    if backend == "cpu":
        assert "device=" not in repr(wg.ones(2))
        return
    x = wg.tensor([1.0, 2.0], device=backend)
    assert repr(x) == f"tensor([1., 2.], device='{x.device}')" == f"tensor([1., 2.], device='{backend}')"
    i = wg.tensor([1, 2], dtype=wg.int32, device=backend, requires_grad=False)
    assert repr(i) == f"tensor([1, 2], device='{backend}', dtype=webgrad.int32)"   # device first, as PyTorch


def test_a_backend_names_itself(backend):
    """``repr`` of a backend object says which backend it is and what computes for it."""
    be = wg.backend(backend)
    text = repr(be)
    assert text.startswith(f"<webgrad backend '{backend}': ") and text.endswith(">"), text
    if backend == "cpu":
        import numpy
        assert f"numpy {numpy.__version__}" in text
    else:
        assert be.device.info["device"] in text, text


@pytest.mark.parametrize("kw", [dict(precision=2), dict(precision=8), dict(threshold=5), dict(threshold=5, edgeitems=1),
                                dict(edgeitems=0, threshold=10), dict(linewidth=40), dict(linewidth=200),
                                dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"),
                                dict(profile="full"), dict(profile="short", precision=6)], ids=str)
def test_options_match_torch(kw, options):
    options(**kw)
    assert printing.get_printoptions() == torch_str.get_printoptions()
    for name, make in CASES:
        if name.startswith("large") and kw.get("profile") == "full":
            continue        # 90,000 numbers: correct, but slow to compare 12 times over
        t = make()
        assert repr(webgrad_twin(t, "cpu")) == torch_text(t), (name, kw)


def test_requires_grad_and_grad_fn_suffixes():
    for t in (torch.tensor([1.5, 2.0], requires_grad=True), torch.tensor(2.5, requires_grad=True),
              torch.zeros(0, 2, requires_grad=True), torch.ones(3, 4, dtype=torch.float64, requires_grad=True)):
        ours = webgrad_twin(t.detach()).requires_grad_()
        assert repr(ours) == torch_text(t)
        for f in (lambda x: x * 2, lambda x: x.sum(), lambda x: x.exp()):
            assert grad_fn_names_aligned(repr(f(ours))) == grad_fn_names_aligned(torch_text(f(t)))


def test_long_suffixes_wrap_as_torchs(options):
    options(linewidth=30)
    t = torch.tensor([[1.5, -2.0], [3.25, 4.0]], dtype=torch.float64, requires_grad=True)
    ours = webgrad_twin(t.detach()).requires_grad_()
    assert repr(ours) == torch_text(t) and "\n" in repr(ours).split("]]")[1]


def test_summary_reads_back_only_the_shown_values():
    big = wg.zeros(300, 300)
    assert printing.summarised(big).shape == (6, 6)
    assert printing.summarised(wg.zeros(2, 700)).shape == (2, 6)
    assert len(repr(wg.randn(300, 300))) < 1000          # not the 1.2 million characters of every value


def test_printing_records_no_graph():
    x = wg.randn(40, 40, requires_grad=True)
    y = x * 2
    before = y.grad_fn
    repr(y)
    assert y.grad_fn is before and x.grad is None


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="profile 'loud'"):
        wg.set_printoptions(profile="loud")
    with pytest.raises(TypeError, match="colour"):
        wg.set_printoptions(colour=True)


def test_printoptions_context_restores():
    values = [0.25, 1.5, 2.0, 4.0]
    with printing.printoptions(precision=1, threshold=3), torch_str.printoptions(precision=1, threshold=3):
        assert repr(wg.tensor(values)) == repr(torch.tensor(values)) == "tensor([0.2, 1.5, 2.0, 4.0])"
        assert repr(wg.arange(10.0)) == repr(torch.arange(10.0))
        assert printing.get_printoptions()["precision"] == 1
    assert printing.get_printoptions() == torch_str.get_printoptions()


@pytest.mark.parametrize("value", [1.23456, -0.0, NAN, 7, True])
def test_format_of_a_0d_tensor_formats_its_value(value, backend):
    t, ref = wg.tensor(value), torch.tensor(value)
    assert f"{t}" == f"{ref}"
    if not isinstance(value, bool):
        assert f"{t:.3f}" == f"{ref:.3f}" == f"{float(value):.3f}"
        assert f"{t:>10}" == f"{ref:>10}"


def test_format_of_other_tensors_is_str_or_type_error(backend):
    for value in ([1.5], [[1.0, 2.0]], []):
        t, ref = wg.tensor(value), torch.tensor(value)
        assert f"{t}" == str(t)
        assert f"{t.cpu()}" == torch_text(ref)
        with pytest.raises(TypeError):
            f"{t:.2f}"
        with pytest.raises(TypeError):
            f"{ref:.2f}"
    loss = wg.tensor([0.5, 0.25]).mean()
    assert f"loss {loss:.4f}" == "loss 0.3750"
