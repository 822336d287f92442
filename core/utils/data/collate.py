"""Batch assembly (PyTorch's ``default_collate`` and ``default_convert``).

``default_collate`` turns a list of samples into a batch, element by element: tensors are
stacked, numpy arrays become stacked tensors, Python ints become an integer tensor and floats a
float64 one (float32 on a backend without float64, such as the GPU's), strings stay a list, and
dicts, namedtuples, tuples and lists are collated field by field (a tuple becomes a list, as in
PyTorch)."""
from __future__ import annotations

import collections.abc
import copy

from ... import registry
from ...dtypes import float64, get_default_dtype
from ...ops.movement import stack
from ...tensor import Tensor, tensor

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_HOLDS_FLOAT64: dict = {}        # backend name -> whether it stores float64


def _float_dtype():
    """float64 where the default backend holds it, else the default float (what a float batch takes)."""
    be = registry.get_backend()
    if be.name not in _HOLDS_FLOAT64:
        try:
            be.upload([0.0], (1,), float64)
            _HOLDS_FLOAT64[be.name] = True
        except TypeError:            # the backend's refusal of a dtype it lacks (GPU: no 64-bit floats)
            _HOLDS_FLOAT64[be.name] = False
    return float64 if _HOLDS_FLOAT64[be.name] else get_default_dtype()


def _numpy_kind(x):
    """'array' or 'scalar' for numpy objects (told apart without importing numpy), else None."""
    t = type(x)
    if t.__module__ != "numpy" or t.__name__ in ("str_", "string_", "bytes_"):
        return None
    return "array" if t.__name__ in ("ndarray", "memmap") else "scalar"


def _from_numpy(x):
    """A tensor from a numpy array or scalar (float64 becomes float32 where the backend lacks it)."""
    if x.dtype.kind in "SaUO":
        raise TypeError(_ERROR.format(x.dtype))
    return tensor(x, dtype=_float_dtype()) if x.dtype.name == "float64" else tensor(x)


def _same_type(elem, values):
    """``values`` (a dict or list) in ``elem``'s container type where that type can be built so."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            clone[:] = values
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def default_collate(batch):
    """Stack a list of samples into a batch (see the module's docstring for each kind of element).

    >>> import webgrad as wg
    >>> x, y = default_collate([(wg.ones(2), 0), (wg.zeros(2), 1)])
    >>> x.shape, y.tolist()
    (webgrad.Size([2, 2]), [0, 1])
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch)
    kind = _numpy_kind(elem)
    if kind == "array":
        return default_collate([_from_numpy(b) for b in batch])
    if kind == "scalar":
        return stack([_from_numpy(b) for b in batch])
    if isinstance(elem, float):
        return tensor(batch, dtype=_float_dtype())
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_type(elem, {key: default_collate([b[key] for b in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _same_type(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """Turn numpy arrays and scalars inside ``data`` into tensors, leaving everything else as it is
    (the DataLoader's collate_fn when it does not batch).

    >>> default_convert((1, [2.0], {"a": "b"}))
    [1, [2.0], {'a': 'b'}]
    """
    if isinstance(data, Tensor):
        return data
    if _numpy_kind(data):
        return data if data.dtype.kind in "SaUO" else _from_numpy(data)
    if isinstance(data, collections.abc.Mapping):
        return _same_type(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_type(data, [default_convert(d) for d in data])
    return data


__all__ = ["default_collate", "default_convert"]
