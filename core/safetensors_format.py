"""The safetensors file layout, in pure Python (``struct`` + ``json`` + ``array``): the header
written for a list of tensors, and a strict reader that checks every rule of the format before
any tensor is made.

Layout: 8 bytes little-endian header length N, N bytes of JSON
``{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {str: str}}``,
then the raw little-endian tensor bytes, each tensor right after the one before, the last one
ending the file.
"""
from __future__ import annotations

import array
import json
import struct
import sys
from typing import NamedTuple

from .dtypes import to_dtype

MAX_HEADER = 100_000_000        # the safetensors package refuses longer headers
METADATA = "__metadata__"
_FIELDS = ("dtype", "shape", "data_offsets")
_LITTLE = sys.byteorder == "little"


class CheckpointError(ValueError):
    """A file that is not a well-formed safetensors checkpoint; the message names the tensor.

    >>> import webgrad as wg
    >>> try:
    ...     wg.load(b"\\x01")
    ... except wg.serialization.CheckpointError as e:
    ...     print(str(e)[:31])
    load: not a safetensors file: 1
    """


class Format(NamedTuple):
    """How one safetensors dtype is read: its array typecode, bytes per element, the webgrad
    dtype it becomes (by name, so ``int64`` follows ``webgrad.long``), and how its bytes widen."""
    code: str
    itemsize: int
    dtype: str
    widen: str = ""


# safetensors dtype -> Format. Half precision is read through float32 (exact).
FORMATS = {"F64": Format("d", 8, "float64"), "F32": Format("f", 4, "float32"),
           "F16": Format("H", 2, "float16", "f16"), "BF16": Format("H", 2, "bfloat16", "bf16"),
           "I64": Format("q", 8, "int64", "int"), "I32": Format("i", 4, "int32"),
           "I16": Format("h", 2, "int16"), "I8": Format("b", 1, "int8"),
           "U8": Format("B", 1, "uint8"), "BOOL": Format("B", 1, "bool"),
           "C64": Format("f", 8, "complex64", "c64")}
# webgrad dtype name -> (safetensors dtype, memoryview formats whose bytes are already the file's)
SAVED_AS = {"float64": ("F64", "d"), "float32": ("F32", "f"), "float16": ("F16", ""), "bfloat16": ("BF16", ""),
            "int64": ("I64", "lq"), "int32": ("I32", "il"), "int16": ("I16", "h"), "int8": ("I8", "b"),
            "uint8": ("U8", "B"), "bool": ("BOOL", "?B"),
            "complex64": ("C64", "f")}   # (a complex64 memoryview's format is "Zf"; safetensors has no C128)


class Spec(NamedTuple):
    """One tensor's header entry, checked."""
    format: str
    shape: tuple
    begin: int
    end: int


# ------------------------------------------------------------------ writing
def layout(t) -> tuple:
    """``(safetensors dtype, shape, byte count)`` of tensor ``t`` in a file."""
    if t.dtype.name not in SAVED_AS:
        raise TypeError(f"save: cannot store dtype {t.dtype.name}; safetensors files here hold "
                        f"{', '.join(SAVED_AS)}")
    fmt = SAVED_AS[t.dtype.name][0]
    return fmt, tuple(t.shape), _numel(t.shape) * FORMATS[fmt].itemsize


def header_bytes(entries, metadata: dict) -> bytes:
    """The 8-byte length and the JSON header (padded with spaces to a multiple of 8) for
    ``entries``: ``(name, safetensors dtype, shape, byte count)`` in file order."""
    header, offset = {METADATA: metadata} if metadata else {}, 0
    for name, fmt, shape, nbytes in entries:
        header[name] = {"dtype": fmt, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    if len(text) > MAX_HEADER:
        raise ValueError(f"save: the header would take {len(text)} bytes, over the {MAX_HEADER} that "
                         f"safetensors readers accept (too many tensors or too large a structure)")
    return struct.pack("<Q", len(text)) + text


def tensor_bytes(t) -> bytes:
    """The little-endian bytes of ``t`` as its safetensors dtype stores them."""
    fmt, raw_formats = SAVED_AS[t.dtype.name]
    code, itemsize = FORMATS[fmt].code, FORMATS[fmt].itemsize
    flat = t._backend.read(t._data)[0]
    if fmt in _NARROW:
        return _NARROW[fmt](flat)
    if (_LITTLE and isinstance(flat, memoryview) and flat.itemsize == itemsize
            and flat.format[-1:] in raw_formats and flat.c_contiguous):
        return flat.tobytes()
    arr = array.array(code, [int(v) for v in flat] if code == "B" else _parts(flat) if fmt == "C64" else flat)
    return _little(arr).tobytes()


def _parts(flat) -> list:
    """Complex values as their (real, imaginary) pairs, one after the other."""
    return [p for v in flat for p in (v.real, v.imag)]


def _narrow_f16(flat) -> bytes:
    return struct.pack(f"<{len(flat)}e", *flat)


def _narrow_bf16(flat) -> bytes:
    """bfloat16 values (held as floats) as their 2-byte form: each float32's upper half."""
    raw = _little(array.array("f", flat)).tobytes()
    out = bytearray(len(raw) // 2)
    out[0::2], out[1::2] = raw[2::4], raw[3::4]
    return bytes(out)


_NARROW = {"F16": _narrow_f16, "BF16": _narrow_bf16}


# ------------------------------------------------------------------ reading
TORCH_FILE = ("load: this file was written by torch.save (a zip archive of pickles, or a legacy pickle); "
              "webgrad never unpickles, since a pickle can run code. Save the tensors as safetensors in "
              "PyTorch instead: `from safetensors.torch import save_file; "
              "save_file(model.state_dict(), 'model.safetensors')`, then wg.load('model.safetensors')")
_TORCH_MAGIC = (b"PK\x03\x04", b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")


def parse(data) -> tuple:
    """``(specs, metadata, data start)`` of a safetensors file held in ``data`` (bytes-like):
    ``specs`` maps tensor names to checked ``Spec``s in header order. Every rule is checked here,
    so no tensor is made from a file that breaks one; a broken rule raises ``CheckpointError``."""
    size = len(data)
    head = bytes(data[:9])
    if head.startswith(_TORCH_MAGIC) and head[8:9] != b"{":
        raise CheckpointError(TORCH_FILE)
    if size < 8:
        raise CheckpointError(f"load: not a safetensors file: {size} bytes, fewer than the 8 that give "
                              f"its header's length")
    (n,) = struct.unpack_from("<Q", data, 0)
    if n > MAX_HEADER:
        raise CheckpointError(f"load: not a safetensors file: its header length {n} is over the "
                              f"{MAX_HEADER}-byte limit")
    if 8 + n > size:
        raise CheckpointError(f"load: truncated file: its header claims {n} bytes but only {size - 8} "
                              f"follow the header length")
    header = _json_object(bytes(data[8:8 + n]))
    metadata = _metadata(header.pop(METADATA, None))
    specs = {name: _spec(name, entry) for name, entry in header.items()}
    _check_layout(specs, size - 8 - n)
    return specs, metadata, 8 + n


class JsonObject(dict):
    """A JSON object as parsed, remembering the keys it held more than once."""
    duplicates: tuple = ()

    @classmethod
    def of_pairs(cls, pairs):
        obj = cls()
        for k, v in pairs:
            if k in obj:
                obj.duplicates += (k,)
            obj[k] = v
        return obj


def _no_constant(name):
    raise CheckpointError(f"load: the header holds {name}, which is not JSON")


def _json_object(text: bytes) -> JsonObject:
    if not text.startswith(b"{"):
        raise CheckpointError(f"load: the header does not start with '{{' (it starts with {text[:8]!r})")
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=JsonObject.of_pairs,
                            parse_constant=_no_constant)
    except CheckpointError:
        raise
    except UnicodeDecodeError as e:
        raise CheckpointError(f"load: the header is not UTF-8 text ({e.reason} at header byte {e.start})") from None
    except (ValueError, RecursionError) as e:
        raise CheckpointError(f"load: the header is not valid JSON: {e}") from None
    if header.duplicates:
        twice = header.duplicates[0]
        raise CheckpointError(f"load: {METADATA if twice == METADATA else f'tensor {twice!r}'} appears twice "
                              f"in the header")
    return header


def _json_type(v) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(v), "object")


def _metadata(meta) -> dict:
    if meta is None:
        return {}
    if type(meta) is not JsonObject or not all(type(v) is str for v in meta.values()):
        raise CheckpointError(f"load: the header's {METADATA} must be an object of strings, got {brief(meta)}")
    if meta.duplicates:
        raise CheckpointError(f"load: the header's {METADATA} has key {meta.duplicates[0]!r} twice")
    return dict(meta)


def _spec(name: str, entry) -> Spec:
    where = f"load: tensor {name!r}"
    if type(entry) is not JsonObject:
        raise CheckpointError(f"{where}: its header entry is a {_json_type(entry)}, not an object with "
                              f"dtype, shape and data_offsets")
    if entry.duplicates:
        raise CheckpointError(f"{where}: its header entry has {entry.duplicates[0]!r} twice")
    for field in _FIELDS:
        if field not in entry:
            raise CheckpointError(f"{where}: its header entry has no {field!r}")
    for field in entry:
        if field not in _FIELDS:
            raise CheckpointError(f"{where}: its header entry has an unknown field {field!r} "
                                  f"(expected {', '.join(_FIELDS)})")
    fmt = entry["dtype"]
    if type(fmt) is not str or fmt not in FORMATS:
        raise CheckpointError(f"{where}: dtype {brief(fmt)} is not one webgrad reads ({', '.join(FORMATS)})")
    shape = _naturals(entry["shape"], where, "shape")
    offsets = _naturals(entry["data_offsets"], where, "data_offsets")
    if len(offsets) != 2 or offsets[0] > offsets[1]:
        raise CheckpointError(f"{where}: data_offsets must be [begin, end] with begin <= end, got {offsets}")
    if _numel(d for d in shape if d) * FORMATS[fmt].itemsize >= 2 ** 63:
        raise CheckpointError(f"{where}: shape {shape} is too large: its nonzero dimensions alone take 2**63 "
                              f"bytes or more")
    span, want = offsets[1] - offsets[0], _numel(shape) * FORMATS[fmt].itemsize
    if span != want:
        raise CheckpointError(f"{where}: data_offsets {offsets} span {span} bytes, but shape {shape} of "
                              f"{fmt} takes {want}")
    return Spec(fmt, tuple(shape), *offsets)


def _naturals(value, where: str, field: str) -> list:
    if type(value) is not list:
        raise CheckpointError(f"{where}: {field} must be a list of integers, got {brief(value)}")
    for v in value:
        if type(v) is not int:
            raise CheckpointError(f"{where}: {field} holds {brief(v)}, which is not an integer")
        if v < 0:
            raise CheckpointError(f"{where}: {field} holds {v}, which is negative")
    return value


def brief(v) -> str:
    """``v`` as JSON, cut to 60 characters: a value quoted in an error message."""
    text = json.dumps(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_layout(specs: dict, data_len: int) -> None:
    """Every tensor within the data, the tensors one after another from byte 0, the last ending
    the file: the bytes a tensor is made from are exactly its own."""
    order = sorted(specs.items(), key=lambda item: (item[1].begin, item[1].end))
    for name, s in order:
        if s.end > data_len:
            raise CheckpointError(f"load: truncated file: tensor {name!r} ends at data byte {s.end}, but the "
                                  f"file holds only {data_len} bytes of data after its header")
    end, previous = 0, None
    for name, s in order:
        if s.begin < end:
            raise CheckpointError(f"load: tensor {name!r} starts at data byte {s.begin}, inside tensor "
                                  f"{previous!r} (which ends at byte {end}); tensors may not overlap")
        if s.begin > end:
            before = f"tensor {previous!r} ends" if previous else "the data starts"
            raise CheckpointError(f"load: tensor {name!r} starts at data byte {s.begin}, but {before} at byte "
                                  f"{end}: a gap (safetensors tensors follow one another)")
        end, previous = s.end, name
    if end != data_len:
        last = f"its last tensor {previous!r} ends" if previous else "it lists no tensors and its data ends"
        raise CheckpointError(f"load: the file has {data_len - end} bytes after its data: {last} at data byte "
                              f"{end} of {data_len}")


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# ------------------------------------------------------------------ decoding one tensor
def _little(arr: array.array) -> array.array:
    if not _LITTLE:
        arr.byteswap()
    return arr


def _widen_f16(arr, raw, fmt):
    return array.array("f", struct.unpack(f"<{len(arr)}e", raw))


def _widen_bf16(arr, raw, fmt):
    """bfloat16 is float32's upper half: each 2-byte value becomes the upper two bytes of a float32."""
    wide = bytearray(2 * len(raw))
    wide[2::4], wide[3::4] = raw[0::2], raw[1::2]
    return _little(array.array("f", wide))


def _widen_int(arr, raw, fmt):
    """Integers into the webgrad dtype ``fmt`` names, refusing values it cannot hold."""
    itemsize = to_dtype(fmt.dtype).itemsize
    if itemsize >= fmt.itemsize:
        return array.array("q" if itemsize == 8 else "i", arr)
    bound = 2 ** (8 * itemsize - 1)
    if arr and (min(arr) < -bound or max(arr) >= bound):
        return None
    return array.array("i", arr)


def _widen_c64(arr, raw, fmt):
    """(real, imaginary) float32 pairs as complex values."""
    return [complex(re, im) for re, im in zip(arr[0::2], arr[1::2])]


_WIDEN = {"f16": _widen_f16, "bf16": _widen_bf16, "int": _widen_int, "c64": _widen_c64}


def decode(name: str, spec: Spec, raw) -> tuple:
    """``(flat array.array, shape, webgrad dtype)`` of the tensor ``spec`` describes, from the
    data section ``raw`` (a memoryview)."""
    fmt = FORMATS[spec.format]
    arr = array.array(fmt.code)
    with raw[spec.begin:spec.end] as chunk:     # released at once: a mapped file closes only without views
        arr.frombytes(chunk)
        arr = _little(arr)
        if fmt.widen:
            arr = _WIDEN[fmt.widen](arr, chunk, fmt)
    if arr is None:
        raise OverflowError(f"load: tensor {name!r} holds {spec.format} values outside "
                            f"{to_dtype(fmt.dtype).name}, webgrad's dtype for them")
    return arr, spec.shape, to_dtype(fmt.dtype)
