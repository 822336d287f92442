"""A checkpoint's structure as JSON data, never as code: what ``save`` writes beside the tensors
(dicts, lists, tuples, numbers, strings, None, dtypes) and ``load`` reads back, checking every node.

A node is a JSON value: null, booleans, numbers and strings stand for themselves, a JSON list for a
list, and an object whose first key names what it holds for everything else::

    {"__tensor__": name, "device": "cpu", "requires_grad": true, "parameter": true}
    {"__tuple__": [node, ...]}    {"__dict__": [[key, node], ...]}    {"__odict__": [[key, node], ...]}
    {"__dtype__": "float32"}    {"__device__": "cpu"}    {"__set__": [node, ...]}    {"__size__": [2, 3]}
    {"__object__": "pkg.mod.Class", "state": node}    {"__ref__": k}    {"__global__": "pkg.mod.function"}

An object (a whole ``nn.Module``, as ``torch.save(model)`` stores one) is its class's name and its
``__dict__``; ``{"__ref__": k}`` is the k-th object made, met again. Names are data: ``load`` makes
only the classes and functions allowed (``webgrad.serialization.safe_globals``), as PyTorch's
``weights_only`` loading does.

A key is a str, int, float, bool or None, or a ``{"__tuple__": [key, ...]}`` (a ``webgrad.Size`` key is
stored as its tuple, equal to it). A tensor met twice (tied weights) is stored once and comes back as
one tensor.
"""
from __future__ import annotations

import json
import sys
from collections import OrderedDict

from .devices import device
from .dtypes import DType, to_dtype
from .nn.parameter import Parameter
from .safetensors_format import METADATA, CheckpointError, JsonObject, brief
from .size import Size
from .tensor import Tensor

_PLAIN = (type(None), bool, int, float, str)
STORABLE = ("tensors, dtypes, devices, Sizes, int, float, str, bool, None, dicts, lists, tuples and sets of them, "
            "top-level classes and functions, and objects of top-level classes (a whole nn.Module) holding them "
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
        self.tensors, self._names, self._open, self._objects = {}, {}, set(), {}

    def node(self, obj, path: str):
        if type(obj) in _PLAIN:
            return obj
        if isinstance(obj, Tensor):
            return self._tensor(obj, path)
        encode = _ENCODERS.get(type(obj)) or _object_encoder(obj, path)
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

    def _object(self, obj, path: str) -> dict:
        """An instance: its class by name and its state; met again, a reference to the first."""
        index = self._objects.get(id(obj))
        if index is not None:
            return {"__ref__": index[0]}
        self._objects[id(obj)] = (len(self._objects), obj)   # (obj kept alive: its id stays unique)
        state = obj.__getstate__() if hasattr(obj, "__getstate__") else obj.__dict__
        return {"__object__": global_name(type(obj)), "state": self.node(state, path)}

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
    if type(k) is tuple or type(k) is Size:
        return {"__tuple__": [_key(v, path) for v in k]}
    raise TypeError(f"save: cannot store a dict key of type {type(k).__name__} (at {path or 'the top level'}); "
                    f"keys are str, int, float, bool, None or tuples of them")


def global_name(obj) -> str:
    """``module.qualname`` of a class or function defined at a module's top level (what pickle stores)."""
    return f"{obj.__module__}.{obj.__qualname__}"


def _is_global(obj) -> bool:
    """Whether ``obj`` is found again under its own ``module.qualname`` (as pickle stores a global)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return False
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found is obj


def _object_encoder(obj, path: str):
    """How an object ``_ENCODERS`` does not name is stored: a top-level class or function by its name, an
    instance of a top-level class (a whole ``nn.Module``) as its class's name and its ``__dict__``
    (``__getstate__``'s, as pickle takes it); anything else raises."""
    if _is_global(obj):
        return lambda enc, obj, path: {"__global__": global_name(obj)}
    cls = type(obj)
    if _is_global(cls) and hasattr(obj, "__dict__") and cls.__module__ != "builtins":
        return Encoder._object
    raise TypeError(f"save: cannot store a {cls.__name__} (at {path or 'the top level'}); checkpoints hold {STORABLE}")


_ENCODERS = {
    list: lambda enc, obj, path: [enc.node(v, _join(path, i)) for i, v in enumerate(obj)],
    tuple: lambda enc, obj, path: {"__tuple__": [enc.node(v, _join(path, i)) for i, v in enumerate(obj)]},
    dict: lambda enc, obj, path: {"__dict__": enc._items(obj.items(), path)},
    OrderedDict: lambda enc, obj, path: {"__odict__": enc._items(obj.items(), path)},
    DType: lambda enc, obj, path: {"__dtype__": obj.name},
    set: lambda enc, obj, path: {"__set__": [enc.node(v, _join(path, i)) for i, v in enumerate(obj)]},
    device: lambda enc, obj, path: {"__device__": str(obj)},
    Size: lambda enc, obj, path: {"__size__": list(obj)},
}


# ------------------------------------------------------------------ decoding
STRUCTURE = "webgrad.structure"


def malformed(detail: str) -> CheckpointError:
    return CheckpointError(f"load: the checkpoint's structure ({METADATA}[{STRUCTURE!r}]) is malformed: {detail}")


def decode(text: str, tensor_of, resolve=None):
    """The object the structure ``text`` describes, its tensors made by
    ``tensor_of(name, device, requires_grad, parameter)`` (once per name), the classes and functions
    it names by ``resolve(name)`` (which refuses those not allowed)."""
    try:
        tree = json.loads(text, object_pairs_hook=JsonObject.of_pairs)
    except (ValueError, RecursionError) as e:
        raise malformed(f"not JSON ({e})") from None
    try:
        return Decoder(tensor_of, resolve).node(tree)
    except RecursionError:
        raise malformed("nested too deeply") from None


class Decoder:
    """Builds the object a tree describes, checking each node."""

    def __init__(self, tensor_of, resolve=None):
        self.tensor_of, self.made, self.resolve, self.objects = tensor_of, {}, resolve, []

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

    def named(self, name):
        if type(name) is not str or self.resolve is None:
            raise malformed(f"a class or function name is {brief(name)}")
        return self.resolve(name)

    def instance(self, x):
        """An object of a named class, made as pickle makes one: ``cls.__new__`` and its state."""
        _fields(x, {"__object__": str, "state": object})
        if "state" not in x:
            raise malformed(f"object {brief(x)} has no state")
        cls = self.named(x["__object__"])
        if not isinstance(cls, type):
            raise malformed(f"{x['__object__']!r} is not a class")
        obj = cls.__new__(cls)
        self.objects.append(obj)
        state = self.node(x["state"])
        if hasattr(obj, "__setstate__"):
            obj.__setstate__(state)
        elif state is not None:
            obj.__dict__.update(state)
        return obj

    def reference(self, x):
        _fields(x, {"__ref__": int})
        if not 0 <= x["__ref__"] < len(self.objects):
            raise malformed(f"a reference to object {x['__ref__']}, of {len(self.objects)} made so far")
        return self.objects[x["__ref__"]]

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
        if field not in types or (types[field] is not object and type(value) is not types[field]):
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


def _size(dec, x) -> Size:
    _fields(x, {"__size__": list})
    if not all(type(n) is int for n in x["__size__"]):
        raise malformed(f"a Size holds {brief(x['__size__'])}, not ints")
    return Size(x["__size__"])


_DECODERS = {
    "__tensor__": Decoder.tensor,
    "__tuple__": _tuple,
    "__dict__": lambda dec, x: dict(dec.pairs(x, "__dict__")),
    "__odict__": lambda dec, x: OrderedDict(dec.pairs(x, "__odict__")),
    "__dtype__": _dtype,
    "__device__": lambda dec, x: _fields(x, {"__device__": str}) or device(x["__device__"]),
    "__set__": lambda dec, x: _fields(x, {"__set__": list}) or {dec.node(v) for v in x["__set__"]},
    "__global__": lambda dec, x: _fields(x, {"__global__": str}) or dec.named(x["__global__"]),
    "__object__": Decoder.instance,
    "__ref__": Decoder.reference,
    "__size__": _size,
}
