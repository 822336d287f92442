"""Whole objects in checkpoints, as ``torch.save(model, f)`` stores them: a module is its class's name
and its ``__dict__``, loaded only with its classes allowed (``serialization.safe_globals`` /
``add_safe_globals``), as PyTorch's weights-only loading does, or imported with ``weights_only=False``."""
import io
import pickle

import numpy as np
import pytest
import torch
import torch.serialization

import webgrad as wg
import webgrad.serialization

from nn_compare import load_torch_weights


class Tagger:
    """A plain class of the test's own, saved inside a checkpoint."""

    def __init__(self, name):
        self.name, self.sizes = name, {3, 5}


def scale(x):
    return 2 * x


def model(lib):
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), layer)


def allowed(lib):
    m = lib.nn.modules
    return [m.container.Sequential, m.linear.Linear, m.activation.Tanh, m.transformer.TransformerEncoderLayer,
            m.activation.MultiheadAttention, m.linear.NonDynamicallyQuantizableLinear, m.dropout.Dropout,
            m.normalization.LayerNorm, lib.nn.functional.relu]


def saved(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("lib", [torch, wg], ids=["torch", "webgrad"])
def test_a_whole_model_loads_only_with_its_classes_allowed(lib):
    data = saved(lib, model(lib))
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        lib.load(io.BytesIO(data))
    with lib.serialization.safe_globals(allowed(lib)[:-1]):       # relu (the layer's activation) not allowed
        with pytest.raises(pickle.UnpicklingError, match="relu"):
            lib.load(io.BytesIO(data))
    with lib.serialization.safe_globals(allowed(lib)):
        back = lib.load(io.BytesIO(data))
    assert type(back) is lib.nn.Sequential and isinstance(back[2].self_attn.out_proj, lib.nn.Linear)
    with pytest.raises(pickle.UnpicklingError):                   # the block's allowance has ended
        lib.load(io.BytesIO(data))


def test_a_loaded_model_computes_what_it_did(backend):
    theirs, ours = model(torch), model(wg).to(backend)
    load_torch_weights(theirs, ours)
    ours.eval()
    with wg.serialization.safe_globals(allowed(wg)):
        back = wg.load(io.BytesIO(saved(wg, ours)))
    assert back.training is False and all(not m.training for m in back.modules())
    assert [n for n, _ in back.named_parameters()] == [n for n, _ in ours.named_parameters()]
    assert all(isinstance(p, wg.nn.Parameter) and p.requires_grad and p.device == ours[0].weight.device
               for p in back.parameters())
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    want = theirs.eval()(torch.tensor(x)).detach().numpy()
    got = back(wg.tensor(x, device=backend))
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    back(wg.tensor(x, device=backend)).sum().backward()           # trains: the parameters are leaves
    assert back[0].weight.grad is not None and ours[0].weight.grad is None


def test_shared_objects_and_tied_weights_stay_shared():
    lin = wg.nn.Linear(2, 2)
    net = wg.nn.Sequential(lin, wg.nn.ReLU(), lin)
    head = wg.nn.Linear(2, 2)
    head.weight = net[0].weight
    tag = Tagger("run")
    with wg.serialization.safe_globals([wg.nn.Sequential, wg.nn.Linear, wg.nn.ReLU, Tagger]):
        back = wg.load(io.BytesIO(saved(wg, {"net": net, "head": head, "tags": [tag, tag]})))
    assert back["net"][0] is back["net"][2]
    assert back["head"].weight is back["net"][0].weight
    assert back["tags"][0] is back["tags"][1] and back["tags"][0].sizes == {3, 5}


def test_add_safe_globals_and_named_entries():
    data = saved(wg, {"tag": Tagger("a"), "fn": scale, "mean": np.mean, "where": wg.device("cpu")})
    wg.serialization.clear_safe_globals()
    try:
        entries = [Tagger, (scale, f"{__name__}.scale"), np.mean]
        wg.serialization.add_safe_globals(entries)
        assert wg.serialization.get_safe_globals() == entries
        back = wg.load(io.BytesIO(data))
        assert back["tag"].name == "a" and back["fn"] is scale and back["mean"] is np.mean
        assert back["where"] == wg.device("cpu")
    finally:
        wg.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match="test_serialization_modules.Tagger.*add_safe_globals"):
        wg.load(io.BytesIO(data))


def test_weights_only_false_imports_what_the_file_names():
    back = wg.load(io.BytesIO(saved(wg, {"tag": Tagger("b"), "net": wg.nn.Linear(2, 1)})), weights_only=False)
    assert type(back["tag"]) is Tagger and back["tag"].name == "b" and back["net"].weight.shape == (1, 2)


def test_what_cannot_be_named_is_refused():
    class Local:
        pass
    for obj, what in [(Local(), "Local"), ({"f": lambda: 1}, "function"), ({"o": object()}, "object")]:
        with pytest.raises(TypeError, match=f"cannot store a {what}"):
            wg.save(obj, io.BytesIO())


@pytest.mark.parametrize("structure, message", [
    ('{"__object__": 3, "state": null}', "bad field '__object__'"),
    ('{"__object__": "x.Y"}', "has no state"),
    ('{"__ref__": 0}', "reference to object 0, of 0"),
    ('{"__global__": ["a"]}', "bad field '__global__'"),
    ('{"__set__": 1}', "bad field '__set__'"),
])
def test_malformed_object_nodes_are_refused(structure, message):
    from webgrad.checkpoint_tree import decode
    from webgrad.safetensors_format import CheckpointError
    with pytest.raises(CheckpointError, match=message):
        decode(structure, None, lambda name: Tagger)


def test_a_named_function_that_is_not_a_class_cannot_be_instantiated():
    from webgrad.checkpoint_tree import decode
    from webgrad.safetensors_format import CheckpointError
    with pytest.raises(CheckpointError, match="is not a class"):
        decode('{"__object__": "numpy.mean", "state": {}}', None, lambda name: np.mean)
