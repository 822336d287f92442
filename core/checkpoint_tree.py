"""A checkpoint's structure as JSON data, never as code: what ``save`` writes beside the tensors
(dicts, lists, tuples, numbers, strings, None, dtypes) and ``load`` reads back, checking every node.

A node is a JSON value: null, booleans, numbers and strings stand for themselves, a JSON list for a
list, and an object whose first key names what it holds for everything else::

    {"__tensor__": name, "device": "cpu", "requires_grad": true, "parameter": true}
    {"__tuple__": [node, ...]}    {"__dict__": [[key, node], ...]}    {"__odict__": [[key, node], ...]}
    {"__dtype__": "float32"}

A key is a str, int, float, bool or None, or a ``{"__tuple__": [key, ...]}``. A tensor met twice
(tied weights) is stored once and comes back as one tensor.
"""
from __future__ import annotations

import json
from collections import OrderedDict

from .dtypes import DType, to_dtype
from .nn.parameter import Parameter
from .safetensors_format import METADATA, CheckpointError, JsonObject, brief
from .tensor import Tensor

_PLAIN = (type(None), bool, int, float, str)
STORABLE = ("tensors, dtypes, int, float, str, bool, None, and dicts, lists and tuples of them "
            "(dict keys: str, int, float, bool, None or tuples of them)")


# ------------------------------------------------------------------ encoding
class Encoder:
    """Encodes one object: ``node(obj)`` gives its JSON-able tree; ``tensors`` maps the names
    given in that tree to the tensors, in the order met.

    >>> import webgrad as wg
    >>> enc = Encoder(); enc.node({"w": wg.ones(1, device="cpu"), "step": 3}, "")
    {'__dict__': [['w', {'__tensor__': 'w', 'device': 'cpu'}], ['step', 3]]}
    """

    def __init__(self):
        self.tensors, self._names, self._open = {}, {}, set()

    def node(self, obj, path: str):
        if type(obj) in _PLAIN:
            return obj
        if isinstance(obj, Tensor):
            return self._tensor(obj, path)
        encode = _ENCODERS.get(type(obj))
        if encode is None:
            raise TypeError(f"save: cannot store a {type(obj).__name__} (at {path or 'the top level'}); "
                            f"checkpoints hold {STORABLE}")
        if id(obj) in self._open:
            raise ValueError(f"save: the object contains itself (at {path}); checkpoints hold trees")
        self._open.add(id(obj))
        try:
            return encode(self, obj, path)
        finally:
            self._open.discard(id(obj))

    def _tensor(self, t: Tensor, path: str) -> dict:
        name = self._names.get(id(t))
        if name is None:
            name = self._names[id(t)] = self._free_name(path or "tensor")
            self.tensors[name] = t
        node = {"__tensor__": name, "device": t._backend.name}
        if t.requires_grad:
            node["requires_grad"] = True
        if isinstance(t, Parameter):
            node["parameter"] = True
        return node

    def _free_name(self, name: str) -> str:
        taken, k, free = self.tensors.keys() | {METADATA}, 2, name
        while free in taken:
            free, k = f"{name}~{k}", k + 1
        return free

    def _items(self, pairs, path: str) -> list:
        return [[_key(k, path), self.node(v, _join(path, k))] for k, v in pairs]


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _key(k, path: str):
    if type(k) in _PLAIN:
        return k
    if type(k) is tuple:
        return {"__tuple__": [_key(v, path) for v in k]}
    raise TypeError(f"save: cannot store a dict key of type {type(k).__name__} (at {path or 'the top level'}); "
                    f"keys are str, int, float, bool, None or tuples of them")


_ENCODERS = {
    list: lambda enc, obj, path: [enc.node(v, _join(path, i)) for i, v in enumerate(obj)],
    tuple: lambda enc, obj, path: {"__tuple__": [enc.node(v, _join(path, i)) for i, v in enumerate(obj)]},
    dict: lambda enc, obj, path: {"__dict__": enc._items(obj.items(), path)},
    OrderedDict: lambda enc, obj, path: {"__odict__": enc._items(obj.items(), path)},
    DType: lambda enc, obj, path: {"__dtype__": obj.name},
}


# ------------------------------------------------------------------ decoding
STRUCTURE = "webgrad.structure"


def malformed(detail: str) -> CheckpointError:
    return CheckpointError(f"load: the checkpoint's structure ({METADATA}[{STRUCTURE!r}]) is malformed: {detail}")


def decode(text: str, tensor_of):
    """The object the structure ``text`` describes, its tensors made by
    ``tensor_of(name, device, requires_grad, parameter)`` (once per name)."""
    try:
        tree = json.loads(text, object_pairs_hook=JsonObject.of_pairs)
    except (ValueError, RecursionError) as e:
        raise malformed(f"not JSON ({e})") from None
    try:
        return Decoder(tensor_of).node(tree)
    except RecursionError:
        raise malformed("nested too deeply") from None


class Decoder:
    """Builds the object a tree describes, checking each node."""

    def __init__(self, tensor_of):
        self.tensor_of, self.made = tensor_of, {}

    def node(self, x):
        if type(x) in _PLAIN:
            return x
        if type(x) is list:
            return [self.node(v) for v in x]
        kind = next(iter(x), None)
        if kind not in _DECODERS:
            raise malformed(f"unknown node {brief(x)}")
        if x.duplicates:
            raise malformed(f"a node has {x.duplicates[0]!r} twice")
        return _DECODERS[kind](self, x)

    def tensor(self, x) -> Tensor:
        _fields(x, {"__tensor__": str, "device": str, "requires_grad": bool, "parameter": bool})
        name = x["__tensor__"]
        if name not in self.made:
            self.made[name] = self.tensor_of(name, x.get("device"), x.get("requires_grad", False),
                                             x.get("parameter", False))
        return self.made[name]

    def pairs(self, x, field: str) -> list:
        _fields(x, {field: list})
        if not all(type(p) is list and len(p) == 2 for p in x[field]):
            raise malformed(f"{field} must hold [key, value] pairs, got {brief(x[field])}")
        pairs = [(_decode_key(k), self.node(v)) for k, v in x[field]]
        if len({k for k, _ in pairs}) < len(pairs):
            raise malformed(f"{field} holds a key twice")
        return pairs


def _fields(x, types: dict) -> None:
    for field, value in x.items():
        if field not in types or type(value) is not types[field]:
            raise malformed(f"node {brief(x)} has a bad field {field!r}")


def _decode_key(k):
    if type(k) in _PLAIN:
        return k
    if type(k) is JsonObject and list(k) == ["__tuple__"] and type(k["__tuple__"]) is list:
        return tuple(_decode_key(v) for v in k["__tuple__"])
    if type(k) is JsonObject and list(k) == ["__int__"] and type(k["__int__"]) is int:
        return k["__int__"]         # checkpoints written before tuple keys marked int keys so
    raise malformed(f"a dict key is {brief(k)}, not a str, int, float, bool, None or tuple")


def _dtype(dec, x) -> DType:
    _fields(x, {"__dtype__": str})
    try:
        return to_dtype(x["__dtype__"])
    except TypeError:
        raise malformed(f"unknown dtype {x['__dtype__']!r}") from None


def _tuple(dec, x) -> tuple:
    _fields(x, {"__tuple__": list})
    return tuple(dec.node(v) for v in x["__tuple__"])


_DECODERS = {
    "__tensor__": Decoder.tensor,
    "__tuple__": _tuple,
    "__dict__": lambda dec, x: dict(dec.pairs(x, "__dict__")),
    "__odict__": lambda dec, x: OrderedDict(dec.pairs(x, "__odict__")),
    "__dtype__": _dtype,
}
