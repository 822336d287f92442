"""A Module's state dict as PyTorch builds and loads it: the module tree walked (shared children under
every name), the overridable _save_to_state_dict/_load_from_state_dict, extra state, the hooks,
assign=True; and the lookups by dotted path (get_parameter, get_buffer, set_submodule). Each case is
written once and run on webgrad and torch, and the outcomes compared."""
import numpy as np
import pytest
import torch

import webgrad as wg


def _shared(lib):
    shared = lib.nn.Linear(2, 2)
    return lib.nn.ModuleDict({"a": shared, "b": shared})


def _with_extra_state(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.seen = lib.nn.Linear(1, 1), 3

        def get_extra_state(self):
            return {"seen": self.seen}

        def set_extra_state(self, state):
            self.seen = state["seen"]
    return Counter()


def _renamed_on_save(lib):
    class Renamed(lib.nn.Linear):
        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "w"] = destination.pop(prefix + "weight")

        def _load_from_state_dict(self, state_dict, prefix, *args):
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, *args)
    return lib.nn.Sequential(Renamed(2, 1))


def keys_of(make):
    return lambda lib: list(make(lib).state_dict())


def _extra_round_trip(lib):
    a, b = _with_extra_state(lib), _with_extra_state(lib)
    a.seen = 7
    b.load_state_dict(a.state_dict())
    return b.seen


def _renamed_round_trip(lib):
    lib.manual_seed(0)
    a = _renamed_on_save(lib)
    b = _renamed_on_save(lib)
    b.load_state_dict(a.state_dict())
    return b[0].weight.tolist() == a[0].weight.tolist()


def _hooks(lib):
    m, calls = lib.nn.Linear(1, 1), []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", sorted(sd))))
    sd = m.state_dict()

    def rename(mod, state_dict, prefix, *rest):
        state_dict[prefix + "bias"] = state_dict.pop(prefix + "b")
    m.register_load_state_dict_pre_hook(rename)
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(("loaded", list(keys.missing_keys))))
    sd["b"] = sd.pop("bias")
    m.load_state_dict(sd)
    return calls


def _post_hook_clears_missing(lib):
    m = lib.nn.Linear(1, 1)
    m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
    return tuple(map(list, m.load_state_dict({"weight": lib.ones(1, 1)})))


def _assign(lib):
    m, w = lib.nn.Linear(2, 1), lib.ones(1, 2)
    m.load_state_dict({"weight": w, "bias": lib.zeros(1)}, assign=True)
    return type(m.weight).__name__, m.weight.requires_grad, m.weight.tolist()


def _copy_keeps_identity(lib):
    m = lib.nn.Linear(2, 1)
    before = m.weight
    m.load_state_dict({"weight": lib.ones(1, 2), "bias": lib.zeros(1)})
    return m.weight is before


def _metadata(lib):
    return sorted(lib.nn.Sequential(lib.nn.Linear(1, 1)).state_dict()._metadata)


CASES = {
    "a shared child under both names": keys_of(_shared),
    "extra state saved": keys_of(_with_extra_state),
    "extra state loaded": _extra_round_trip,
    "an overridden _save_to_state_dict": keys_of(_renamed_on_save),
    "an overridden _load_from_state_dict": _renamed_round_trip,
    "the four hooks": _hooks,
    "a post hook clearing missing keys": _post_hook_clears_missing,
    "assign=True": _assign,
    "copying keeps the parameter": _copy_keeps_identity,
    "metadata by module": _metadata,
    "missing and unexpected, not strict": lambda lib: tuple(map(list, lib.nn.Linear(1, 1).load_state_dict(
        {"weight": lib.ones(1, 1), "extra": lib.ones(1)}, strict=False))),
    "strict refuses": lambda lib: lib.nn.Linear(1, 1).load_state_dict({"weight": lib.ones(1, 1)}),
    "a size mismatch": lambda lib: lib.nn.Linear(1, 1).load_state_dict({"weight": lib.ones(2, 1),
                                                                         "bias": lib.ones(1)}),
    "not a mapping": lambda lib: lib.nn.Linear(1, 1).load_state_dict([1, 2]),
    "a 1-element entry for a 0-d buffer": lambda lib: _zero_d_buffer(lib),
    "get_parameter": lambda lib: tuple(lib.nn.Sequential(lib.nn.Linear(2, 3)).get_parameter("0.weight").shape),
    "get_parameter of a buffer": lambda lib: _batch_norm(lib).get_parameter("0.running_mean"),
    "get_buffer": lambda lib: _batch_norm(lib).get_buffer("0.running_var").tolist(),
    "get_buffer of a parameter": lambda lib: _batch_norm(lib).get_buffer("0.weight"),
    "get_parameter of nothing": lambda lib: _batch_norm(lib).get_parameter("1.weight"),
    "set_submodule": lambda lib: _set_submodule(lib, "0", strict=False),
    "set_submodule, a new name": lambda lib: _set_submodule(lib, "new", strict=False),
    "set_submodule, strict, a new name": lambda lib: _set_submodule(lib, "new", strict=True),
    "set_submodule of no name": lambda lib: _set_submodule(lib, "", strict=False),
    "type()": lambda lib: [t.dtype == lib.float64 for t in _batch_norm(lib).type(lib.float64).state_dict().values()],
    "share_memory": lambda lib: (lambda m: m.share_memory() is m)(lib.nn.Linear(1, 1)),
}


def _zero_d_buffer(lib):
    m = lib.nn.Module()
    m.register_buffer("count", lib.tensor(0.0))
    m.load_state_dict({"count": lib.tensor([5.0])})
    return m.count.tolist()


def _batch_norm(lib):
    return lib.nn.Sequential(lib.nn.BatchNorm1d(2))


def _set_submodule(lib, target, strict):
    m = lib.nn.Sequential(lib.nn.Linear(1, 1))
    m.set_submodule(target, lib.nn.ReLU(), strict=strict)
    return [name for name, _ in m.named_children()], type(m[0]).__name__


def _outcome(case, lib):
    try:
        return "ok", case(lib)
    except Exception as e:   # the error's type is what is compared
        return "raises", type(e).__name__


@pytest.mark.parametrize("name", CASES)
def test_state_dict_and_lookups_as_torch(name):
    ours, theirs = _outcome(CASES[name], wg), _outcome(CASES[name], torch)
    assert ours == theirs


def test_shared_child_loads_from_either_name():
    """A checkpoint of a model with a shared child holds it twice; loading one into the other is strict-clean."""
    a, b = _shared(wg), _shared(wg)
    sd = a.state_dict()
    assert b.load_state_dict(sd) == ([], []) and np.array_equal(b["b"].weight.numpy(force=True),
                                                                a["a"].weight.numpy(force=True))
