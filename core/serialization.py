"""``save`` and ``load``, PyTorch's names, without pickle: checkpoints are safetensors files
(``safetensors_format``) whose tensors the ``safetensors`` package (and so PyTorch) reads, with the
rest of the object (dicts, lists, tuples, numbers, strings, the backend each tensor lived on) kept
as JSON data in the header's ``__metadata__`` (``checkpoint_tree``). Nothing in a file can run code.

A save to a path is atomic: the file is written beside its target, flushed, synced and renamed
over it, so a crash mid-write leaves the previous checkpoint whole (and, at worst, a stray
``.NAME.*.tmp`` file beside it).
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import pickle
import stat

from . import registry
from .dtypes import float32, int64
from .checkpoint_tree import STRUCTURE, Encoder, decode as decode_tree, global_name
from .nn.parameter import Parameter
from .safetensors_format import CheckpointError, decode, header_bytes, layout, parse, tensor_bytes
from .tensor import Tensor


# ------------------------------------------------------------------ save
def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, metadata: dict | None = None) -> None:
    """Write ``obj`` (a tensor, or dicts/lists/tuples of tensors, numbers, strings, None and
    dtypes: a ``state_dict()``, an optimizer's, a whole training checkpoint) to ``f``, a path
    (str or os.PathLike; written atomically) or a binary file object.

    The file is a safetensors file: a dict of tensors loads with ``safetensors.torch.load_file``
    under the same names. ``metadata`` (str -> str) goes into the header's ``__metadata__`` (e.g.
    ``{"format": "pt"}``, which Hugging Face's loaders look for). ``pickle_module``,
    ``pickle_protocol``, ``_use_new_zipfile_serialization`` and ``_disable_byteorder_record`` are
    accepted, as in PyTorch, and have no effect: nothing is pickled.

    >>> import webgrad as wg, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
    >>> wg.save({"w": wg.ones(2), "step": 10}, path)
    >>> wg.load(path)["step"], wg.load(path)["w"].tolist()
    (10, [1.0, 1.0])
    """
    head, tensors = _encode(obj, metadata)

    def write(out):
        out.write(head)
        for t in tensors:
            out.write(tensor_bytes(t))

    if isinstance(f, (str, os.PathLike)):
        _write_atomically(f, write)
    elif hasattr(f, "write"):
        write(f)
    else:
        raise TypeError(f"save: f must be a path (str or os.PathLike) or a binary file object, "
                        f"got {type(f).__name__}")


def _encode(obj, metadata) -> tuple:
    """(the file's header bytes, its tensors in file order): everything that can fail, before a
    byte is written."""
    meta = {}
    for k, v in (metadata or {}).items():
        if type(k) is not str or type(v) is not str or k == STRUCTURE:
            raise ValueError(f"save: metadata must map str to str, and {STRUCTURE!r} is webgrad's; "
                             f"got {k!r}: {v!r}")
        meta[k] = v
    enc = Encoder()
    tree = enc.node(obj, "")
    meta[STRUCTURE] = json.dumps(tree, separators=(",", ":"))
    entries = [(name, *layout(t)) for name, t in enc.tensors.items()]
    return header_bytes(entries, meta), list(enc.tensors.values())


def _write_atomically(path, write) -> None:
    """``write(file)`` into a new file beside ``path``, made durable and renamed over ``path``."""
    target = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(target)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))   # an overwritten file keeps its mode
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable, where the platform lets a folder be synced."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ------------------------------------------------------------------ allowed globals
_SAFE: list = []              # add_safe_globals's, for every load
_SAFE_SCOPES: list = []       # safe_globals's, while their blocks run


def _named(entry) -> tuple:
    """(name, object) of a safe-globals entry: an object, or (object, the name files store it under)."""
    if isinstance(entry, tuple):
        obj, name = entry
        return name, obj
    return global_name(entry), entry


def add_safe_globals(safe_globals: list) -> None:
    """Allow ``load`` to make the classes and functions listed (objects, or ``(object, "module.name")``
    pairs) when a checkpoint names them: a whole model saved with ``save(model, f)`` loads once its
    classes are allowed, as with PyTorch's ``weights_only`` loading.

    >>> import webgrad as wg, io
    >>> buf = io.BytesIO(); wg.save(wg.nn.Linear(2, 1), buf)
    >>> add_safe_globals([wg.nn.Linear]); type(wg.load(io.BytesIO(buf.getvalue()))).__name__
    'Linear'
    >>> clear_safe_globals()
    """
    _SAFE.extend(safe_globals)


def get_safe_globals() -> list:
    """The entries ``add_safe_globals`` allowed."""
    return list(_SAFE)


def clear_safe_globals() -> None:
    """Forget the entries ``add_safe_globals`` allowed."""
    _SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Allow the classes and functions listed, for the loads inside the block only.

    >>> import webgrad as wg, io
    >>> buf = io.BytesIO(); wg.save(wg.nn.Linear(2, 1), buf)
    >>> with safe_globals([wg.nn.Linear]):
    ...     model = wg.load(io.BytesIO(buf.getvalue()))
    >>> model.weight.shape
    webgrad.Size([1, 2])
    """
    _SAFE_SCOPES.append(list(safe_globals))
    try:
        yield
    finally:
        _SAFE_SCOPES.pop()


def _allowed(name: str):
    """The allowed class or function stored as ``name``; refused as PyTorch's weights-only unpickler does."""
    for entry in [*_SAFE, *(e for scope in _SAFE_SCOPES for e in scope)]:
        stored, obj = _named(entry)
        if stored == name:
            return obj
    short = name.rsplit(".", 1)[-1]
    raise pickle.UnpicklingError(
        f"Weights only load failed: the checkpoint names {name}, which is not an allowed global. Please use "
        f"`webgrad.serialization.add_safe_globals([{short}])` or the `webgrad.serialization.safe_globals("
        f"[{short}])` context manager to allowlist it if you trust this class/function, or load with "
        f"weights_only=False (which imports what the checkpoint names: only for files you trust)")


def _imported(name: str):
    """``weights_only=False``: the class or function ``name`` names, imported (as pickle would)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        if isinstance(obj, type) or callable(obj):
            return obj
        break
    raise CheckpointError(f"load: the checkpoint names {name!r}, which is not a class or function that can "
                          f"be imported here")


# ------------------------------------------------------------------ load
_PICKLE_ARGS = {True: {"encoding"}, False: {"encoding", "errors", "fix_imports", "buffers"}}


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what ``save`` wrote (or any safetensors file, e.g. from ``safetensors.torch.save_file``)
    from ``f``: a path, a binary file object, or bytes. The file's header is checked whole
    before any tensor is made; a malformed file raises ``CheckpointError`` (a ValueError) naming
    the tensor, and a file from ``torch.save`` an error saying how to convert it.

    ``map_location`` places the tensors, as in PyTorch: None puts each on the backend it was saved
    from (files from other writers: the default backend); a backend name or device (``"cpu"``,
    ``"wgpu"``) puts all there; a dict maps saved backend names to others; a callable
    ``fn(tensor, location)`` gets each tensor (on ``cpu`` where it starts) and its saved backend
    name and returns the tensor to use, or None for the default placement.

    ``weights_only`` (None means True, as in PyTorch): a checkpoint that names classes or functions (a
    whole model saved with ``save(model, f)``) loads only those allowed by ``add_safe_globals`` or
    ``safe_globals``, and raises ``pickle.UnpicklingError`` naming the first one that is not, as
    PyTorch's weights-only loading does. ``weights_only=False`` imports what the checkpoint names
    (only for files you trust, as in PyTorch); either way the only calls a load makes are the classes'
    ``__new__`` and ``__setstate__``: nothing else in a file is run.
    ``mmap=True`` maps a path's file instead of reading it whole (tensors are still copied onto
    their backend). ``pickle_module`` and pickle's ``encoding`` (also ``errors``, ``fix_imports``,
    ``buffers`` when ``weights_only=False``) are accepted with no effect.

    F16 and BF16 tensors load as float16 and bfloat16 (as float32 on a backend without half precision),
    I16/I8/U8 as int16, int8 and uint8 (as int64, exactly, on a backend without them: the GPU backends); a
    value the backend cannot hold (int64 beyond 32 bits on a GPU backend)
    raises OverflowError naming the tensor.

    >>> import webgrad as wg, io
    >>> buf = io.BytesIO(); wg.save({"b": wg.tensor([1, 2]), "config": {"lr": 0.1}}, buf)
    >>> ck = wg.load(io.BytesIO(buf.getvalue()), map_location="cpu")
    >>> ck["b"].tolist(), ck["config"]
    ([1, 2], {'lr': 0.1})
    """
    for k in pickle_load_args:
        if k not in _PICKLE_ARGS[weights_only is not False]:
            raise TypeError(f"load() got an unexpected keyword argument {k!r}")
    place = _placement(map_location)
    with _contents(f, mmap) as data:
        specs, metadata, start = parse(data)
        with memoryview(data)[start:] as raw:     # released before a mapped file closes
            made = _Maker(specs, raw, place)
            if STRUCTURE in metadata:
                return decode_tree(metadata[STRUCTURE], made.tensor, _imported if weights_only is False else _allowed)
            return {name: made.tensor(name, None, False, False) for name in specs}


@contextlib.contextmanager
def _contents(f, mmap):
    """The bytes of ``f`` (a path, a binary file object, or bytes-like), mapped when ``mmap``."""
    if isinstance(f, (bytes, bytearray, memoryview)):
        yield memoryview(f).cast("B")
    elif isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            if mmap and os.fstat(fh.fileno()).st_size:
                import mmap as mmap_module
                with mmap_module.mmap(fh.fileno(), 0, access=mmap_module.ACCESS_READ) as mapped:
                    yield mapped
            else:
                yield fh.read()
    elif hasattr(f, "read"):
        if mmap:
            raise ValueError("load: f must be a file path in order to use the mmap argument")
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"load: f must be opened in binary mode ('rb'); its read() gave {type(data).__name__}")
        yield data
    else:
        raise TypeError(f"load: f must be a path (str or os.PathLike), a binary file object or bytes, "
                        f"got {type(f).__name__}")


class _Maker:
    """Makes the file's tensors by name, placed as ``map_location`` says, with their flags."""

    def __init__(self, specs, raw, place):
        self.specs, self.raw, self.place = specs, raw, place

    def tensor(self, name, device, requires_grad, parameter) -> Tensor:
        if name not in self.specs:
            raise CheckpointError(f"load: the checkpoint's structure refers to tensor {name!r}, which the "
                                  f"file does not hold")
        values, shape, dtype = decode(name, self.specs[name], self.raw)
        if requires_grad and not dtype.is_floating:
            raise CheckpointError(f"load: the checkpoint's structure says tensor {name!r} requires grad, "
                                  f"but it holds {dtype.name}: only floating-point tensors can")
        t = self.place(name, values, shape, dtype, device or registry.get_backend().name)
        if parameter:
            return Parameter(t, requires_grad=requires_grad)
        return t.requires_grad_(True) if requires_grad else t


# map_location -> fn(name, values, shape, dtype, saved location) -> Tensor
def _placement(map_location):
    if map_location is None:
        return _restore
    if isinstance(map_location, dict):
        table = {_location(k): _location(v) for k, v in map_location.items()}
        return lambda name, values, shape, dtype, loc: _restore(name, values, shape, dtype, table.get(loc, loc))
    if callable(map_location):
        return lambda *args: _through(map_location, *args)
    backend = registry.backend(_location(map_location))
    return lambda name, values, shape, dtype, loc: upload(values, shape, dtype, backend, name)


def _location(where) -> str:
    """The backend name a map_location names: a name ("wgpu", "cpu:0"), a device (``.type``) or
    a backend (``.name``)."""
    name = where if isinstance(where, str) else getattr(where, "type", None) or getattr(where, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"load: map_location must be a backend name ('cpu', 'wgpu'), a device, a dict or "
                        f"a callable; got {type(where).__name__}")
    return name.split(":")[0]


def _restore(name, values, shape, dtype, loc) -> Tensor:
    try:
        backend = registry.backend(loc)
    except (ValueError, RuntimeError) as e:
        raise RuntimeError(f"load: tensor {name!r} was saved on backend {loc!r}, which is not available "
                           f"here ({e}); pass map_location='cpu' (or another of {registry.backends()}) "
                           f"to load it there") from None
    return upload(values, shape, dtype, backend, name)


def _through(fn, name, values, shape, dtype, loc) -> Tensor:
    """PyTorch's callable map_location: ``fn(tensor as read, saved location)``, None for the default."""
    staged = upload(values, shape, dtype, _staging_backend(), name)
    out = fn(staged, loc)
    if out is None:
        return _restore(name, values, shape, dtype, loc)
    if not isinstance(out, Tensor):
        raise TypeError(f"load: map_location returned a {type(out).__name__} for tensor {name!r}; "
                        f"it must return a tensor or None")
    return out


def _staging_backend():
    """Where a callable map_location first sees a tensor: ``cpu`` (as PyTorch), else the default."""
    try:
        return registry.backend("cpu")
    except (ValueError, RuntimeError):
        return registry.get_backend()


def upload(values, shape, dtype, backend, name=None) -> Tensor:
    """A tensor on ``backend`` (a name, a backend, or None for the default) from a flat
    ``array.array`` whose typecode matches ``dtype`` ('f', 'd', 'i', 'q', or 'B' for bool); a value
    the backend cannot hold raises OverflowError naming the tensor ``name``. A backend without half
    precision (the GPU backends) holds float16 and bfloat16 tensors as float32, one without 8- and
    16-bit integers (the GPU backends) holds uint8, int8 and int16 as int64 (exactly).

    >>> import array, webgrad as wg
    >>> upload(array.array("f", [1, 2]), (2,), wg.float32, "cpu").tolist()
    [1.0, 2.0]
    """
    be = registry.resolve(backend)
    if dtype.itemsize <= 2 and dtype not in getattr(be, "dtypes", (dtype,)):
        dtype = float32 if dtype.is_floating else int64
    try:
        return Tensor._wrap(be.upload(values, tuple(shape), dtype), be)
    except OverflowError as e:   # e.g. int64 beyond 32 bits on a GPU backend
        raise OverflowError(f"load: tensor {name!r}: {e}") from None


__all__ = ["save", "load", "CheckpointError", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]
