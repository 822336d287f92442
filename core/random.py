"""Random number generators (PyTorch's ``torch.Generator`` and ``torch.random``).

A ``Generator`` is PyTorch's CPU generator: an mt19937 stream seeded as PyTorch seeds it, plus
PyTorch's cached second normal sample. Each random op draws from it on the host what PyTorch's
CPU kernel for that op draws, in the same order and with the same transform
(``webgrad.backends.torch_random``, on numpy), and uploads the values to the op's backend. So
after ``manual_seed(s)`` a program gets PyTorch's numbers on every backend, and one generator
serves them all. A draw is ``Generator._draw``: ``wg.compile`` replays it per step (each replay
draws afresh, as eager code would).

>>> import webgrad as wg
>>> g = wg.Generator().manual_seed(0)
>>> [round(v, 4) for v in wg.rand(3, generator=g).tolist()]   # torch.rand(3) after torch.manual_seed(0)
[0.4963, 0.7682, 0.0885]
"""
from __future__ import annotations

import contextlib
import operator
import os
import struct

from .dtypes import int64
from .tensor import Tensor, tensor

_MASK64 = (1 << 64) - 1
_DEFAULT_SEED = 67280421310721           # what a new torch.Generator() starts from
_STATE_WORDS = 624                       # mt19937's state
# PyTorch's CPUGeneratorImplState, 5056 bytes: initial seed, left, seeded, next, the 624 state words
# (as uint64), normal_x, normal_y (the cached double normal), normal_rho, its valid flag; then the
# cached float normal and its flag.
_KEEPS_NORMAL = ("normal", "standard_gamma", "dirichlet", "log_normal")    # draws that read and leave the kept normal
_STATE = struct.Struct(f"<QiiQ{_STATE_WORDS}Qdddi4xf?3x")


def _seed_value(seed) -> int:
    """``seed`` as an unsigned 64-bit int, as PyTorch reads it (negative seeds wrap)."""
    if isinstance(seed, (bool, Tensor)) or not hasattr(type(seed), "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = operator.index(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError(f"manual_seed: seed {seed} is out of range; it must lie in [-2**63, 2**64 - 1]")
    return seed & _MASK64


def _random_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """A source of random numbers for the random ops' ``generator=`` keyword: PyTorch's CPU
    generator (mt19937), so a seed gives PyTorch's numbers.

    ``device`` is recorded for PyTorch's sake; a webgrad generator serves every backend.
    A new generator starts from PyTorch's fixed default seed (``initial_seed()``).

    >>> import webgrad as wg
    >>> g = wg.Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    >>> wg.randn(2, generator=g).shape
    webgrad.Size([2])
    """

    def __init__(self, device="cpu"):
        self.device = device if isinstance(device, str) else str(device)
        self._restore((_DEFAULT_SEED, None, None))

    def __repr__(self):
        return f"<webgrad.Generator device={self.device!r} initial_seed={self._seed}>"

    def manual_seed(self, seed) -> "Generator":
        """Restart from ``seed`` (an int in [-2**63, 2**64 - 1]); returns the generator.

        >>> g = Generator()
        >>> g.manual_seed(7) is g
        True
        """
        self._restore((_seed_value(seed), None, None))
        return self

    def seed(self) -> int:
        """Restart from a fresh non-deterministic seed (from ``os.urandom``) and return it.

        >>> isinstance(Generator().seed(), int)
        True
        """
        seed = _random_seed()
        self._restore((seed, None, None))
        return seed

    def initial_seed(self) -> int:
        """The seed this generator last started from.

        >>> Generator().manual_seed(3).initial_seed()
        3
        """
        return self._seed

    def get_state(self) -> Tensor:
        """The state as PyTorch lays it out (its 5056 bytes, here an int64 tensor of byte values), to
        hand back to ``set_state``; ``bytes(state.tolist())`` are the bytes of ``torch.get_rng_state()``.

        >>> import webgrad as wg
        >>> g = wg.Generator().manual_seed(1)
        >>> s = g.get_state(); a = wg.rand(2, generator=g).tolist()
        >>> wg.rand(2, generator=g.set_state(s)).tolist() == a
        True
        >>> s.shape
        webgrad.Size([5056])
        """
        key, pos = self._stream.get() if self._stream is not None else _seeded_words(self._seed)
        key = [int(k) for k in key]   # (a uint32 array, or a list)
        normal = self._normal
        drawn = pos if self._stream is not None else 0
        raw = _STATE.pack(self._seed, _STATE_WORDS + 1 - pos, 1, drawn, *key, 0.0,
                          0.0 if normal is None else normal, 0.0, normal is not None, 0.0, False)
        return tensor(list(raw), dtype=int64)

    def set_state(self, new_state) -> "Generator":
        """Restore a state from ``get_state`` (PyTorch's layout); returns the generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype.kind != "i" or \
                tuple(new_state.shape) != (_STATE.size,):
            got = f"a {new_state.dtype.name} tensor of shape {tuple(new_state.shape)}" \
                if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"set_state: expected a generator state from get_state() (an integer tensor of "
                            f"{_STATE.size} byte values), got {got}")
        values = new_state.tolist()
        if not all(0 <= v < 256 for v in values):
            raise RuntimeError("set_state: this tensor is not a generator state (its values are not bytes)")
        seed, left, _, drawn, *rest = _STATE.unpack(bytes(values))
        key, normal, valid = rest[:_STATE_WORDS], rest[_STATE_WORDS + 1], rest[_STATE_WORDS + 3]
        if not 1 <= left <= _STATE_WORDS or any(k >> 32 for k in key):
            raise RuntimeError(f"set_state: this tensor is not a generator state (left={left} is outside "
                               f"[1, {_STATE_WORDS}] or a state word exceeds 32 bits)")
        if drawn == 0 and left == 1 and list(key) == _seeded_words(seed)[0]:   # as seeded, nothing drawn:
            self._restore((seed, None, normal if valid else None))           # get_state gives these bytes back
            return self
        stream = _host().Stream(seed)
        stream.set(key, _STATE_WORDS + 1 - left)
        self._restore((seed, stream, normal if valid else None))
        return self

    def _draw(self, how: str, *args):
        """Draw for one op: ``torch_random.<how>(stream, *args)`` on the host (a numpy array). The
        random ops call this once each; ``wg.compile`` replays it per step."""
        fn = getattr(_host(), how)
        if self._stream is None:
            self._stream = _host().Stream(self._seed)
        if how in _KEEPS_NORMAL:
            values, self._normal = fn(self._stream, *args, self._normal)
            return values
        return fn(self._stream, *args)

    def _snapshot(self) -> tuple:
        return self._seed, None if self._stream is None else self._stream.get(), self._normal

    def _restore(self, snapshot) -> None:
        self._seed, stream, self._normal = snapshot
        if stream is None or not isinstance(stream, tuple):
            self._stream = stream
        else:
            self._stream = _host().Stream(self._seed)
            self._stream.set(*stream)


def _host():
    """The host module drawing PyTorch's numbers (numpy; plain Python where numpy is missing, as in
    the browser without it); imported at the first draw."""
    try:
        from webgrad.backends import torch_random
    except ImportError:
        from webgrad.backends import torch_random_pure as torch_random
    return torch_random


def _seeded_words(seed: int) -> tuple:
    """mt19937's state words right after seeding (init_genrand), and its position (none drawn yet)."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _STATE_WORDS):
        key.append((1812433253 * (key[-1] ^ (key[-1] >> 30)) + i) & 0xFFFFFFFF)
    return key, _STATE_WORDS


default_generator = Generator()
default_generator.seed()      # as PyTorch's CPU default: a fresh seed per process until manual_seed


def generator_for(generator, op: str) -> Generator:
    """``generator``, or the default generator for None; a TypeError naming ``op`` otherwise."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}: generator must be a webgrad.Generator, got {type(generator).__name__}")
    return generator


def draw(generator, op: str, how: str, *args):
    """Host values for ``op`` from ``generator`` (None: the default generator): PyTorch's draws for
    ``how`` (a function of ``webgrad.backends.torch_random``), as a numpy array."""
    return generator_for(generator, op)._draw(how, *args)


def permutation(n: int, generator=None, op: str = "randperm") -> list:
    """PyTorch's ``randperm(n)`` as a list, drawn on the host.

    >>> _ = manual_seed(0); permutation(5)    # torch.randperm(5) after torch.manual_seed(0)
    [4, 0, 1, 3, 2]
    """
    return draw(generator, op, "randperm", n).tolist()


def draw_seed64(generator, op: str) -> int:
    """PyTorch's ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``: how its data
    loaders and samplers take a seed from a generator.

    >>> isinstance(draw_seed64(None, "sampler"), int)
    True
    """
    return int(draw(generator, op, "full_range", 1, "int64")[0])


def manual_seed(seed) -> Generator:
    """Seed the default generator (any int-convertible ``seed``); returns it, as PyTorch does.

    >>> import webgrad as wg
    >>> wg.manual_seed(0) is wg.default_generator
    True
    >>> a = wg.rand(3).tolist(); _ = wg.manual_seed(0)
    >>> a == wg.rand(3).tolist()
    True
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's initial seed.

    >>> _ = manual_seed(5); initial_seed()
    5
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (``set_rng_state`` takes it back)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state from ``get_rng_state``.

    >>> import webgrad as wg
    >>> s = wg.get_rng_state(); a = wg.rand(2).tolist()
    >>> wg.set_rng_state(s); wg.rand(2).tolist() == a
    True
    """
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Within the block, random ops draw as usual; on leaving, the default generator is as it
    was on entering. ``devices`` and ``device_type`` have no effect (one generator serves every
    backend); ``enabled=False`` makes this a no-op.

    >>> import webgrad as wg
    >>> with wg.random.fork_rng():
    ...     a = wg.rand(2).tolist()
    >>> wg.rand(2).tolist() == a
    True
    """
    if not enabled:
        yield
        return
    snapshot = default_generator._snapshot()
    try:
        yield
    finally:
        default_generator._restore(snapshot)


__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng"]
