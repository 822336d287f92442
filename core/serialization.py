"""Checkpoints in the safetensors format, in pure Python (``struct`` + ``json`` + ``array``):
``save`` and ``load`` read and write files that the ``safetensors`` package (and so PyTorch)
reads and writes.

Layout: 8 bytes little-endian header length N, N bytes of JSON
``{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}}``,
then the raw little-endian tensor bytes. A nested state dict (an optimizer's, say) is
flattened to dotted tensor names, with its non-tensor parts kept as JSON in the metadata.
"""
from __future__ import annotations

import array
import json
import struct
import sys

from . import registry
from .dtypes import bool_, float32, float64, int32, int64
from .tensor import Tensor

# safetensors dtype -> (array typecode, bytes per element, webgrad dtype)
_LOAD = {"F32": ("f", 4, float32), "F64": ("d", 8, float64), "I32": ("i", 4, int32), "BOOL": ("B", 1, bool_),
         "I64": ("q", 8, int64), "I16": ("h", 2, int64), "I8": ("b", 1, int64), "U8": ("B", 1, int64),
         "F16": ("H", 2, float32), "BF16": ("H", 2, float32)}
_SAVE = {float32: ("F32", "f"), float64: ("F64", "d"), int32: ("I32", "i"), int64: ("I64", "q"),
         bool_: ("BOOL", "B")}
_STRUCTURE = "webgrad.structure"


def _flatten(obj, prefix, tensors):
    """The JSON-able skeleton of ``obj``, with tensors moved into ``tensors`` under dotted names."""
    if isinstance(obj, Tensor):
        tensors[prefix] = obj
        return {"__tensor__": prefix}
    if isinstance(obj, dict):
        return {"__dict__": [[_key(k), _flatten(v, f"{prefix}.{k}" if prefix else str(k), tensors)]
                             for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        items = [_flatten(v, f"{prefix}.{i}" if prefix else str(i), tensors) for i, v in enumerate(obj)]
        return {"__tuple__": items} if isinstance(obj, tuple) else items
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"save: cannot store a {type(obj).__name__}; checkpoints hold tensors, numbers, strings, "
                    f"and dicts/lists/tuples of them")


def _key(k):
    return {"__int__": k} if isinstance(k, int) else k


def _unflatten(node, tensors):
    if isinstance(node, list):
        return [_unflatten(v, tensors) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tensor__" in node:
        return tensors[node["__tensor__"]]
    if "__tuple__" in node:
        return tuple(_unflatten(v, tensors) for v in node["__tuple__"])
    return {(k["__int__"] if isinstance(k, dict) else k): _unflatten(v, tensors) for k, v in node["__dict__"]}


def _is_flat(obj):
    return isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())


def _tensor_bytes(t: Tensor):
    """(safetensors dtype, little-endian bytes) of ``t``."""
    name, code = _SAVE[t.dtype]
    flat = t._backend.read(t._data)[0]
    native = "?" if code == "B" else code
    if isinstance(flat, memoryview) and flat.format.lstrip("@=<") == native and sys.byteorder == "little":
        return name, flat.tobytes()
    arr = array.array(code, [int(v) for v in flat] if code == "B" else list(flat))
    if sys.byteorder != "little":
        arr.byteswap()
    return name, arr.tobytes()


def save(obj, f, metadata: dict | None = None) -> None:
    """Write ``obj`` (a state dict: names -> tensors, or a nested dict such as an optimizer's
    ``state_dict()``) to the path or binary file ``f`` in the safetensors format.

    >>> import webgrad as wg, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> wg.save({"w": wg.ones(2)}, path); wg.load(path)["w"].tolist()
    [1.0, 1.0]
    """
    tensors = {}
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    if _is_flat(obj):
        tensors = dict(obj)
    else:
        meta[_STRUCTURE] = json.dumps(_flatten(obj, "", tensors))
    header, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        dtype, data = _tensor_bytes(t)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if meta:
        header["__metadata__"] = meta
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    out = open(f, "wb") if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__") else f
    try:
        out.write(struct.pack("<Q", len(text)) + text)
        for c in chunks:
            out.write(c)
    finally:
        if out is not f:
            out.close()


def upload(values, shape, dtype, backend) -> Tensor:
    """A tensor on ``backend`` from a flat ``array.array`` whose typecode matches ``dtype``
    ('f', 'd', 'i' or 'B' for bool)."""
    be = registry.get_backend() if backend is None else (
        registry.backend(backend) if isinstance(backend, str) else backend)
    return Tensor._wrap(be.upload(values, tuple(shape), dtype), be)


def _decode(info, raw, name):
    """(flat array.array, shape, webgrad dtype) of one tensor: narrower ints widen to int64,
    float16/bfloat16 widen to float32."""
    kind = info["dtype"]
    if kind not in _LOAD:
        raise ValueError(f"load: tensor {name!r} has dtype {kind}, which webgrad cannot hold "
                         f"(it reads {', '.join(_LOAD)})")
    code, size, dtype = _LOAD[kind]
    begin, end = info["data_offsets"]
    arr = array.array(code)
    arr.frombytes(raw[begin:end])
    if sys.byteorder != "little":
        arr.byteswap()
    if kind == "F16":
        return array.array("f", struct.unpack(f"<{len(arr)}e", raw[begin:end])), info["shape"], dtype
    if kind == "BF16":
        return array.array("f", array.array("I", (v << 16 for v in arr)).tobytes()), info["shape"], dtype
    if dtype is int64 and code != "q":
        arr = array.array("q", arr)
    return arr, info["shape"], dtype


def load(f, backend=None, device=None) -> dict:
    """Read a safetensors file (path, binary file, or bytes) into a dict of tensors on ``backend``
    (the default backend if None); a nested structure written by ``save`` comes back as it was.

    >>> import webgrad as wg, io
    >>> buf = io.BytesIO(); wg.save({"b": wg.tensor([1, 2])}, buf)
    >>> wg.load(buf.getvalue())["b"].tolist()
    [1, 2]
    """
    if isinstance(f, (bytes, bytearray, memoryview)):
        data = bytes(f)
    elif isinstance(f, (str,)) or hasattr(f, "__fspath__"):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    if len(data) < 8:
        raise ValueError("load: not a safetensors file (shorter than its 8-byte header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"load: not a safetensors file (header length {n} exceeds the file's {len(data)} bytes)")
    header = json.loads(data[8:8 + n])
    raw = memoryview(data)[8 + n:]
    meta = header.pop("__metadata__", None) or {}
    tensors = {}
    for name, info in header.items():
        arr, shape, dtype = _decode(info, raw, name)
        tensors[name] = upload(arr, shape, dtype, backend if backend is not None else device)
    if _STRUCTURE in meta:
        return _unflatten(json.loads(meta[_STRUCTURE]), tensors)
    return tensors


__all__ = ["save", "load"]
