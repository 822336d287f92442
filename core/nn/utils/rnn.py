"""Variable-length sequences for the recurrent layers (PyTorch's ``torch.nn.utils.rnn``):
padding, packing and unpacking.

A PackedSequence holds the time-major rows of sequences sorted by decreasing length: step t
holds one row for each of the ``batch_sizes[t]`` sequences still running. Every function here
moves rows with one ``index_select`` whose row indices are computed on the host from the
lengths (which PyTorch, too, keeps on the host), so gradients flow back to the padded input.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

from ...dtypes import float32, float64, to_dtype
from ...ops.creation import full
from ...ops.movement import cat
from ...tensor import Tensor, tensor


def _index(rows, like):
    """Host row indices as a long tensor on ``like``'s backend."""
    return tensor(rows, dtype=to_dtype("long"), backend=like._backend)


def _host_ints(values, what):
    if isinstance(values, Tensor):
        if values.ndim != 1 or values.dtype.kind != "i":
            raise ValueError(f"{what} must be a 1-D integer tensor or a list of ints, got {values.dtype.name} "
                             f"of shape {tuple(values.shape)}")
        return [int(v) for v in values.tolist()]
    return [int(v) for v in values]


def _invert(order):
    inverse = [0] * len(order)
    for i, j in enumerate(order):
        inverse[j] = i
    return inverse


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Sequences of different lengths packed for a recurrent layer: ``data`` [sum of lengths, *],
    ``batch_sizes`` (sequences running at each time step), and the permutation that sorted the
    batch by length (``sorted_indices``) with its inverse (``unsorted_indices``). Make one with
    ``pack_padded_sequence`` or ``pack_sequence``, not by hand (as in PyTorch).

    >>> import webgrad as wg
    >>> p = pack_sequence([wg.tensor([1.0, 2.0, 3.0]), wg.tensor([4.0])])
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 3.0], [2, 1, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("PackedSequence: expected data to be a list or tuple of length 2 "
                                     "(data, batch_sizes) when batch_sizes is not given")
            data, batch_sizes = data
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _index(_invert(_host_ints(sorted_indices, "sorted_indices")), sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _replace_data(self, data):
        """A PackedSequence of other ``data`` rows in this one's layout (host copies of the layout kept)."""
        out = type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)
        out._host = getattr(self, "_host", {})
        return out

    def to(self, *args, **kwargs):
        """``data.to(...)``; the index tensors follow the data to its backend."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: t if t is None else t.to(data.device))
        out = type(self)(data, self.batch_sizes.to(data.device), move(self.sorted_indices),
                         move(self.unsorted_indices))
        out._host = getattr(self, "_host", {})
        return out

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    @property
    def is_cuda(self):
        """Always False: webgrad has no CUDA device."""
        return False

    def is_pinned(self):
        """Always False: webgrad has no pinned host memory."""
        return False


def _layout(packed, key, field):
    """A host list of one of ``packed``'s index tensors (read back once, then kept with it)."""
    host = packed.__dict__.setdefault("_host", {})
    if key not in host:
        value = getattr(packed, field)
        host[key] = None if value is None else _host_ints(value, field)
    return host[key]


def host_batch_sizes(packed):
    """``packed.batch_sizes`` as a list of Python ints (read back at most once per packed sequence)."""
    return _layout(packed, "sizes", "batch_sizes")


def _packed(data, sizes, order):
    """A PackedSequence of ``data`` with host ``sizes`` and batch ``order`` (None: already sorted)."""
    sorted_indices = None if order is None else _index(order, data)
    out = PackedSequence(data, _index(sizes, data), sorted_indices,
                         None if order is None else _index(_invert(order), data))
    out._host = {"sizes": sizes, "unsorted": None if order is None else _invert(order)}
    return out


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch [T, B, *] ([B, T, *] with ``batch_first``) of sequences of the given
    ``lengths``. With ``enforce_sorted`` the lengths must be decreasing; otherwise the batch is
    sorted here (stably, longest first) and the permutation kept.

    >>> import webgrad as wg
    >>> x = wg.tensor([[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]])
    >>> pack_padded_sequence(x, [3, 1]).data.tolist()
    [1.0, 4.0, 2.0, 3.0]
    """
    lengths = _host_ints(lengths, "pack_padded_sequence: lengths")
    order = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do "
                               f"not need ONNX exportability (got lengths {lengths})")
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        lengths = [lengths[i] for i in order]
    x = input.transpose(0, 1) if batch_first else input
    steps, batch = x.shape[0], x.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(f"pack_padded_sequence: Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths and (lengths[-1] <= 0 or lengths[0] > steps):
        raise RuntimeError(f"pack_padded_sequence: every length must be in [1, {steps}] (the padded length), "
                           f"got lengths {lengths}")
    sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0] if lengths else 0)]
    sorted_at = order or list(range(batch))
    rows = [t * batch + sorted_at[b] for t, n in enumerate(sizes) for b in range(n)]
    data = x.reshape(steps * batch, *x.shape[2:]).index_select(0, _index(rows, x))
    return _packed(data, sizes, order)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: (padded [T, B, *] or [B, T, *], lengths as a long tensor),
    in the batch's original order; ``total_length`` pads to that many steps.

    >>> import webgrad as wg
    >>> padded, lengths = pad_packed_sequence(pack_sequence([wg.tensor([1.0, 2.0]), wg.tensor([3.0])]))
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 3.0], [2.0, 0.0]], [2, 1])
    """
    sizes = host_batch_sizes(sequence)
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max sequence length "
                             f"being {steps}")
        steps = total_length
    data, batch = sequence.data, sizes[0] if sizes else 0
    unsorted = _layout(sequence, "unsorted", "unsorted_indices") or list(range(batch))
    starts = [sum(sizes[:t]) for t in range(len(sizes))]
    pad = data.shape[0]
    def row(t, b):
        s = unsorted[b]
        return starts[t] + s if t < len(sizes) and s < sizes[t] else pad
    order = [(b, t) for b in range(batch) for t in range(steps)] if batch_first else \
        [(b, t) for t in range(steps) for b in range(batch)]
    rows = [row(t, b) for b, t in order]
    filler = full((1, *data.shape[1:]), padding_value, dtype=data.dtype, backend=data._backend)
    out = cat([data, filler], 0).index_select(0, _index(rows, data))
    shape = (batch, steps) if batch_first else (steps, batch)
    lengths = [sum(1 for n in sizes if n > unsorted[b]) for b in range(batch)]
    return out.reshape(*shape, *data.shape[1:]), _index(lengths, data)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors [L_i, *] of different lengths into [max L, B, *] ([B, max L, *] with
    ``batch_first``), filling with ``padding_value`` on the ``padding_side``.

    >>> import webgrad as wg
    >>> pad_sequence([wg.tensor([1, 2]), wg.tensor([3])], batch_first=True, padding_side="left").tolist()
    [[1, 2], [0, 3]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences).__name__}")
    seqs = tuple(sequences) if not isinstance(sequences, Tensor) else tuple(sequences[i] for i in
                                                                            range(sequences.shape[0]))
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"pad_sequence: Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    trailing = seqs[0].shape[1:]
    if any(s.ndim == 0 or s.shape[1:] != trailing for s in seqs):
        raise RuntimeError(f"pad_sequence: every sequence must be [L, *] with the same trailing dims, got shapes "
                           f"{[tuple(s.shape) for s in seqs]}")
    lengths = [s.shape[0] for s in seqs]
    steps, starts = max(lengths), [sum(lengths[:b]) for b in range(len(seqs))]
    pad = sum(lengths)

    def row(t, b):
        k = t - (steps - lengths[b] if padding_side == "left" else 0)
        return starts[b] + k if 0 <= k < lengths[b] else pad
    order = [(t, b) for b in range(len(seqs)) for t in range(steps)] if batch_first else \
        [(t, b) for t in range(steps) for b in range(len(seqs))]
    first = seqs[0]
    filler = full((1, *trailing), padding_value, dtype=first.dtype, backend=first._backend)
    out = cat([*seqs, filler], 0).index_select(0, _index([row(t, b) for t, b in order], first))
    shape = (len(seqs), steps) if batch_first else (steps, len(seqs))
    return out.reshape(*shape, *trailing)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of tensors [L_i, *] (PyTorch's transposes its input in
    place when not ``batch_first``; this leaves it as it is).

    >>> import webgrad as wg
    >>> [t.tolist() for t in unpad_sequence(wg.tensor([[1, 3], [2, 0]]), [2, 1])]
    [[1, 2], [3]]
    """
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[b, :n] for b, n in enumerate(_host_ints(lengths, "unpad_sequence: lengths"))]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors [L_i, *] (``pad_sequence`` then ``pack_padded_sequence``).

    >>> import webgrad as wg
    >>> pack_sequence([wg.tensor([1]), wg.tensor([2, 3])], enforce_sorted=False).data.tolist()
    [2, 1, 3]
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors a PackedSequence holds, in their original order.

    >>> import webgrad as wg
    >>> [t.tolist() for t in unpack_sequence(pack_sequence([wg.tensor([1]), wg.tensor([2, 3])], False))]
    [[1], [2, 3]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def invert_permutation(permutation):
    """The inverse of the 1-D index ``permutation`` (None gives None), as PyTorch's helper.

    >>> import webgrad as wg
    >>> invert_permutation(wg.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    from ...ops.creation import arange, empty_like
    return empty_like(permutation).scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


def bind(optional, fn):
    """``fn(optional)``, or None when ``optional`` is None (PyTorch's helper)."""
    return None if optional is None else fn(optional)


PackedSequence_ = PackedSequence.__bases__[0]


__all__ = ["PackedSequence", "PackedSequence_", "invert_permutation", "bind", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "unpad_sequence",
           "pack_sequence", "unpack_sequence"]
