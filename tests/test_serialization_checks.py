"""wg.load checks a safetensors file's header whole, strictly, before making any tensor: one test
per rule with its message (each naming the tensor where there is one), and a fuzz test in which
every mutation of a valid file either loads exactly what the ``safetensors`` package reads or
raises a clear error. ``WEBGRAD_FUZZ_EXAMPLES`` (default 300 per backend) sets the fuzz budget."""
import functools
import io
import json
import os
import struct

import numpy as np
import pytest
import safetensors.torch
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import webgrad as wg
from webgrad.serialization import CheckpointError


def st_file(header=None, data=b"", text=None) -> bytes:
    """A safetensors file from a header (a dict, or ``text`` as written) and its data bytes."""
    text = json.dumps(header).encode() if text is None else text
    return struct.pack("<Q", len(text)) + text + data


def entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


E = json.dumps(entry())
DATA = struct.pack("<2f", 1.0, 2.0)
with_structure = lambda tree: {"a": entry(), "__metadata__": {"webgrad.structure": tree}}  # noqa: E731

# rule -> (file, message); every one is a CheckpointError (a ValueError)
RULES = {
    "shorter than the length field": (b"\x01\x02", "not a safetensors file: 2 bytes"),
    "header over the size limit": (struct.pack("<Q", 10 ** 9) + b"{}", "header length 1000000000 is over the"),
    "header longer than the file": (struct.pack("<Q", 100) + b'{"a":1}', "truncated file: its header claims 100"),
    "header not starting with a brace": (st_file(text=b' {"a":1}'), "does not start with '{'"),
    "header not UTF-8": (st_file(text=b'{"\xff":1}'), "not UTF-8"),
    "header not JSON": (st_file(text=b'{"a": '), "not valid JSON: Expecting value"),
    "NaN in the header": (st_file(text=b'{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,8]}}'),
                          "holds NaN, which is not JSON"),
    "tensor named twice": (st_file(text=f'{{"a":{E},"a":{E}}}'.encode(), data=DATA), "tensor 'a' appears twice"),
    "metadata twice": (st_file(text=b'{"__metadata__":{},"__metadata__":{}}'), "__metadata__ appears twice"),
    "field given twice": (st_file(text=b'{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
                                  data=DATA), "tensor 'a': its header entry has 'dtype' twice"),
    "entry not an object": (st_file({"a": [1]}), "tensor 'a': its header entry is a list"),
    "field missing": (st_file({"a": {"dtype": "F32", "data_offsets": [0, 8]}}, DATA), "tensor 'a'.* no 'shape'"),
    "unknown field": (st_file({"a": {**entry(), "extra": 1}}, DATA), "tensor 'a'.* unknown field 'extra'"),
    "unknown dtype": (st_file({"a": entry("U16")}, DATA), "tensor 'a': dtype \"U16\" is not one webgrad reads"),
    "dtype not a string": (st_file({"a": entry(4)}, DATA), "tensor 'a': dtype 4 is not one"),
    "shape not a list": (st_file({"a": {**entry(), "shape": 2}}, DATA), "tensor 'a': shape must be a list"),
    "negative dimension": (st_file({"a": entry(shape=(-2,))}, DATA), "tensor 'a': shape holds -2, which is negative"),
    "float dimension": (st_file({"a": entry(shape=(2.0,))}, DATA), "tensor 'a': shape holds 2.0, which is not an int"),
    "boolean dimension": (st_file({"a": entry(shape=(True,))}, DATA), "tensor 'a': shape holds true, which is not"),
    "impossible shape of no elements": (st_file({"a": entry(shape=(0, 2 ** 62), offsets=(0, 0))}),
                                        r"tensor 'a': shape \[0, 4611686018427387904\] is too large"),
    "offsets not a pair": (st_file({"a": entry(offsets=(0, 4, 8))}, DATA), "tensor 'a': data_offsets must be \\["),
    "offsets reversed": (st_file({"a": entry(offsets=(8, 0))}, DATA), "tensor 'a': data_offsets must be"),
    "negative offset": (st_file({"a": entry(offsets=(-8, 0))}, DATA), "tensor 'a': data_offsets holds -8"),
    "span not shape x itemsize": (st_file({"a": entry(shape=(3,))}, DATA),
                                  r"tensor 'a': data_offsets \[0, 8\] span 8 bytes, but shape \[3\] of F32 takes 12"),
    "tensor past the data": (st_file({"a": entry()}, DATA[:4]),
                             "truncated file: tensor 'a' ends at data byte 8, but the file holds only 4"),
    "first tensor not at byte 0": (st_file({"a": entry(shape=(1,), offsets=(4, 8))}, DATA),
                                   "tensor 'a' starts at data byte 4, but the data starts at byte 0: a gap"),
    "gap between tensors": (st_file({"a": entry(shape=(1,), offsets=(0, 4)), "b": entry(shape=(1,), offsets=(8, 12))},
                                    DATA + DATA[:4]),
                            "tensor 'b' starts at data byte 8, but tensor 'a' ends at byte 4"),
    "overlapping tensors": (st_file({"a": entry(), "b": entry(offsets=(4, 12))}, DATA + DATA[:4]),
                            "tensor 'b' starts at data byte 4, inside tensor 'a'"),
    "bytes after the last tensor": (st_file({"a": entry(shape=(1,), offsets=(0, 4))}, DATA),
                                    "4 bytes after its data: its last tensor 'a' ends at data byte 4 of 8"),
    "metadata not strings": (st_file({"__metadata__": {"k": 1}}), "__metadata__ must be an object of strings"),
    "metadata key twice": (st_file(text=b'{"__metadata__":{"k":"1","k":"2"}}'), "__metadata__ has key 'k' twice"),
    "structure not JSON": (st_file(with_structure("{"), DATA), "structure .* is malformed: not JSON"),
    "structure node unknown": (st_file(with_structure('{"__pickle__":"os.system"}'), DATA),
                               'malformed: unknown node {"__pickle__"'),
    "structure field bad": (st_file(with_structure('{"__tensor__":"a","device":3}'), DATA), "bad field 'device'"),
    "structure names a missing tensor": (st_file(with_structure('[{"__tensor__":"b"}]'), DATA),
                                         "refers to tensor 'b', which the file does not hold"),
    "structure key unhashable": (st_file(with_structure('{"__dict__":[[[1],2]]}'), DATA), "a dict key is \\[1\\]"),
    "structure key twice": (st_file(with_structure('{"__dict__":[[1,2],[1,3]]}'), DATA), "__dict__ holds a key twice"),
    "structure dtype unknown": (st_file(with_structure('{"__dtype__":"float99"}'), DATA), "unknown dtype 'float99'"),
    "structure Size of non-ints": (st_file(with_structure('{"__size__":[2,"3"]}'), DATA), "a Size holds \\[2, \"3\"\\]"),
    "structure Size not a list": (st_file(with_structure('{"__size__":2}'), DATA), "bad field '__size__'"),
    "integers that require grad": (st_file({"a": entry("I32"), "__metadata__": {
        "webgrad.structure": '{"__tensor__":"a","requires_grad":true}'}}, DATA),
        "tensor 'a' requires grad, but it holds int32"),
}


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_of_the_format_is_checked(rule, backend):
    blob, message = RULES[rule]
    with pytest.raises(CheckpointError, match=message):
        wg.load(blob)
    with pytest.raises(ValueError, match="^load: "):
        wg.load(io.BytesIO(blob))


def test_a_mapped_file_is_checked_alike(tmp_path):
    for i, (blob, message) in enumerate(RULES.values()):
        (tmp_path / f"{i}.st").write_bytes(blob)
        with pytest.raises(CheckpointError, match=message):
            wg.load(tmp_path / f"{i}.st", mmap=True)
    (tmp_path / "big.st").write_bytes(st_file({"big": entry("I64", (1,))}, struct.pack("<q", 2 ** 40)))
    if wg.long.itemsize < 8:
        with pytest.raises(OverflowError):
            wg.load(tmp_path / "big.st", mmap=True)


def test_checkpoints_written_before_tuple_keys_load():
    """Before tuple keys, an int key was written as {"__int__": k}."""
    tree = '{"__dict__":[[{"__int__":3},{"__tensor__":"a"}],["k",{"__tuple__":[1,"x"]}]]}'
    back = wg.load(st_file(with_structure(tree), DATA), map_location="cpu")
    assert list(back) == [3, "k"] and back[3].tolist() == [1.0, 2.0] and back["k"] == (1, "x")


def test_a_truncated_checkpoint_says_so():
    buf = io.BytesIO()
    wg.save({"w": wg.ones(100), "step": 1}, buf)
    blob = buf.getvalue()
    for cut in (len(blob) - 1, len(blob) - 399, 20, 7):
        with pytest.raises(CheckpointError, match="truncated file|not a safetensors file"):
            wg.load(blob[:cut])


def test_int64_values_must_fit_webgrads_long(backend):
    blob = st_file({"big": entry("I64", (1,))}, struct.pack("<q", 2 ** 40))
    if backend == "cpu":
        assert wg.load(blob)["big"].tolist() == [2 ** 40]
    else:   # the GPU backends hold int64 in 32 bits
        with pytest.raises(OverflowError, match="load: tensor 'big': .*does not fit in int64 on wgpu"):
            wg.load(blob)


def test_nothing_is_uploaded_from_a_file_that_breaks_a_rule(backend):
    """On a GPU backend, a tensor made from a short data section would read pooled memory past its
    bytes: the whole header is checked before the first upload."""
    short = st_file({"ok": entry(shape=(1,), offsets=(0, 4)), "big": entry(shape=(1024,), offsets=(4, 4100))}, DATA)
    bad_span = st_file({"ok": entry(shape=(1,), offsets=(0, 4)), "odd": entry(shape=(2,), offsets=(4, 8))}, DATA)
    before = wg.memory()[backend]
    for blob in (short, bad_span):
        with pytest.raises(CheckpointError, match="tensor 'big'|tensor 'odd'"):
            wg.load(blob)
    assert wg.memory()[backend] == before


# ------------------------------------------------------------------ fuzz
FUZZ_EXAMPLES = int(os.environ.get("WEBGRAD_FUZZ_EXAMPLES", "300"))
ST_DTYPES = ["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL", "C64", "U32", "f32", ""]


@functools.lru_cache(maxsize=None)
def seed_files() -> tuple:
    """Valid files to mutate: one from PyTorch's safetensors (every dtype webgrad reads), one
    nested checkpoint from wg.save."""
    torch.manual_seed(0)
    plain = safetensors.torch.save({"f32": torch.randn(2, 3), "bf16": torch.randn(4).bfloat16(),
                                    "f16": torch.randn(3).half(), "i64": torch.arange(-2, 3),
                                    "u8": torch.arange(250, 256, dtype=torch.uint8), "b": torch.tensor([True, False]),
                                    "i8": torch.tensor([-128, 5], dtype=torch.int8), "e": torch.zeros(0, 2)})
    buf = io.BytesIO()
    w = wg.tensor([[0.5, -1.0], [2.0, 3.0]], device="cpu")
    wg.save({"model": {"w": w, "b": wg.tensor([1, 2], device="cpu")}, "tied": [w, (w, 3)],
             "opt": {"state": {0: {"step": 2}}, "lr": 0.1, "mask": wg.tensor([True], device="cpu")}}, buf)
    return plain, buf.getvalue()


def split(blob):
    n = struct.unpack("<Q", blob[:8])[0]
    return json.loads(blob[8:8 + n]), blob[8 + n:]


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 65, 2 ** 65) | st.floats(allow_nan=False)
                           | st.sampled_from(ST_DTYPES), lambda inner: st.lists(inner, max_size=4), max_leaves=6)


def mutate(draw, blob: bytes) -> bytes:
    """One mutation of ``blob``, drawn: cut it, flip a byte (mostly in the header), insert bytes,
    change its header length, or change one tensor's dtype/shape/offsets (a whole field or one
    number of it), keeping the rest valid."""
    header, data = split(blob)
    head_end = len(blob) - len(data)
    kind = draw(st.sampled_from(["cut", "flip", "flip", "insert", "length", "field", "nudge", "dtype"]))
    if kind == "cut":
        return blob[:draw(st.integers(0, len(blob) - 1))]
    if kind == "flip":
        at = draw(st.integers(0, head_end - 1) | st.integers(0, len(blob) - 1))
        return blob[:at] + bytes([blob[at] ^ draw(st.integers(1, 255))]) + blob[at + 1:]
    if kind == "insert":
        at = draw(st.integers(0, len(blob)))
        return blob[:at] + draw(st.binary(min_size=1, max_size=9)) + blob[at:]
    if kind == "length":
        n = head_end - 8 + draw(st.integers(-9, 9) | st.integers(0, 2 ** 64 - 1))
        return struct.pack("<Q", n % 2 ** 64) + blob[8:]
    names = sorted(k for k, v in header.items() if k != "__metadata__" and isinstance(v, dict))
    if not names:
        return blob
    name = draw(st.sampled_from(names))
    field = draw(st.sampled_from(["dtype", "shape", "data_offsets"]))
    if kind == "field":
        header[name][field] = draw(json_values)
    elif kind == "dtype":
        header[name]["dtype"] = draw(st.sampled_from(ST_DTYPES))
    else:
        numbers = header[name].get(field)
        at = [i for i, v in enumerate(numbers) if type(v) is int] if isinstance(numbers, list) else []
        if at:
            numbers[draw(st.sampled_from(at))] += draw(st.integers(-9, 9))
    return st_file(header, data)


def tensors_by_name(got, blob):
    """[(name, loaded tensor)] for every tensor in ``got``, named by the file's structure."""
    header, _ = split(blob)
    tree = json.loads(header.get("__metadata__", {}).get("webgrad.structure", "null"))
    if tree is None:
        return list(got.items())
    out = []

    def walk(node, value):
        if isinstance(node, list):
            for n, v in zip(node, value, strict=True):
                walk(n, v)
        elif isinstance(node, dict):
            kind, body = next(iter(node.items()))
            if kind == "__tensor__":
                out.append((body, value))
            elif kind == "__tuple__":
                walk(body, list(value))
            elif kind in ("__dict__", "__odict__"):
                walk([v for _, v in body], list(value.values()))
    walk(tree, got)
    return out


def check_outcome(blob: bytes, backend: str):
    try:
        got = wg.load(blob, map_location=backend)
    except CheckpointError as e:
        assert str(e).startswith("load: ")
        return
    except OverflowError as e:              # an I64 value webgrad's long cannot hold
        assert str(e).startswith("load: tensor ")
        return
    except TypeError as e:                  # float64 or complex64 on a GPU backend, refused by the backend
        assert backend != "cpu" and ("float64" in str(e) or "complex64" in str(e)), e
        return
    try:
        reference = safetensors.torch.load(blob)
    except Exception as e:  # noqa: BLE001  (any refusal by the reference reader is the finding)
        pytest.fail(f"webgrad loaded a file that the safetensors package refuses ({e})")
    for name, t in tensors_by_name(got, blob):
        want = reference[name]
        assert t.shape == tuple(want.shape) and t.device == backend, name
        expected = want.float() if want.is_floating_point() and want.dtype != torch.float64 else want
        np.testing.assert_array_equal(t.numpy(), expected.numpy().astype(t.numpy().dtype), err_msg=name)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_every_mutated_file_loads_correctly_or_raises_a_clear_error(backend, data):
    blob = data.draw(st.sampled_from(seed_files()))
    for _ in range(data.draw(st.integers(1, 2))):
        blob = mutate(data.draw, blob) if len(blob) > 8 and blob[8:9] == b"{" and _parses(blob) else blob
    check_outcome(blob, backend)


def _parses(blob) -> bool:
    try:
        split(blob)
        return True
    except ValueError:
        return False


def test_the_fuzz_seeds_load():
    plain, nested = seed_files()
    assert len(wg.load(plain)) == 8
    assert wg.load(nested)["tied"][1][1] == 3
