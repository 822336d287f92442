"""Random number generators (PyTorch's ``torch.Generator`` and ``torch.random``).

A ``Generator`` is counter-based: its state is a seed and the number of draws taken so far.
Each random op takes one draw, a 64-bit kernel seed mixed from (seed, count) by SplitMix64,
and hands it to a backend kernel (``RandomUniform``, ``RandomNormal``, ``RandomInt``) or to a
host algorithm (``randperm``, the samplers), so one generator serves every backend and a
seeded program repeats on each. The numbers differ from PyTorch's (other algorithms); their
distributions are the same.

>>> import webgrad as wg
>>> g = wg.Generator().manual_seed(0)
>>> a = wg.rand(3, generator=g).tolist()
>>> a == wg.rand(3, generator=g.manual_seed(0)).tolist()
True
"""
from __future__ import annotations

import contextlib
import operator
import os
import random as _random

from .dtypes import int32
from .tensor import Tensor, tensor

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15            # SplitMix64's increment
_STATE_TAG = 0x57475231                  # 'WGR1': marks a webgrad generator state
_DEFAULT_SEED = 67280421310721           # what a new torch.Generator() starts from


def _splitmix64(x: int) -> int:
    """SplitMix64: a 64-bit bijective mix (Steele, Lea and Flood 2014)."""
    z = (x + _GOLDEN) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


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
    """A source of random numbers for the random ops' ``generator=`` keyword.

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
        self._seed, self._count = _DEFAULT_SEED, 0
        self._base = _splitmix64(self._seed)

    def __repr__(self):
        return f"<webgrad.Generator device={self.device!r} initial_seed={self._seed}>"

    def manual_seed(self, seed) -> "Generator":
        """Restart from ``seed`` (an int in [-2**63, 2**64 - 1]); returns the generator.

        >>> g = Generator()
        >>> g.manual_seed(7) is g
        True
        """
        self._restore((_seed_value(seed), 0))
        return self

    def seed(self) -> int:
        """Restart from a fresh non-deterministic seed (from ``os.urandom``) and return it.

        >>> isinstance(Generator().seed(), int)
        True
        """
        seed = _random_seed()
        self._restore((seed, 0))
        return seed

    def initial_seed(self) -> int:
        """The seed this generator last started from.

        >>> Generator().manual_seed(3).initial_seed()
        3
        """
        return self._seed

    def get_state(self) -> Tensor:
        """The state as a tensor to hand back to ``set_state`` (PyTorch's is a uint8 tensor; this
        one is int32: a tag, the seed and the draw count, as 32-bit halves).

        >>> import webgrad as wg
        >>> g = wg.Generator().manual_seed(1)
        >>> s = g.get_state(); a = wg.rand(2, generator=g).tolist()
        >>> wg.rand(2, generator=g.set_state(s)).tolist() == a
        True
        """
        words = [_STATE_TAG, *_halves(self._seed), *_halves(self._count)]
        return tensor([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=int32)

    def set_state(self, new_state) -> "Generator":
        """Restore a state from ``get_state``; returns the generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not int32 or tuple(new_state.shape) != (5,):
            got = f"a {new_state.dtype.name} tensor of shape {tuple(new_state.shape)}" \
                if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"set_state: expected a generator state from get_state() (an int32 tensor of "
                            f"shape (5,)), got {got}")
        words = [w & 0xFFFFFFFF for w in new_state.tolist()]
        if words[0] != _STATE_TAG:
            raise RuntimeError("set_state: this tensor is not a webgrad generator state (its tag is wrong)")
        self._restore((words[1] | words[2] << 32, words[3] | words[4] << 32))
        return self

    def _next_seed(self) -> int:
        """Take the next 64-bit kernel seed (each random op does once)."""
        self._count += 1
        return _splitmix64((self._base + self._count * _GOLDEN) & _MASK64)

    def _snapshot(self) -> tuple:
        return self._seed, self._count

    def _restore(self, snapshot) -> None:
        self._seed, self._count = snapshot
        self._base = _splitmix64(self._seed)


def _halves(v: int) -> tuple:
    return v & 0xFFFFFFFF, v >> 32


default_generator = Generator()
default_generator.seed()      # as PyTorch's CPU default: a fresh seed per process until manual_seed


def generator_for(generator, op: str) -> Generator:
    """``generator``, or the default generator for None; a TypeError naming ``op`` otherwise."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}: generator must be a webgrad.Generator, got {type(generator).__name__}")
    return generator


def draw_seed(generator, op: str) -> int:
    """One kernel seed from ``generator`` (None: the default generator)."""
    return generator_for(generator, op)._next_seed()


def host_random(generator, op: str) -> _random.Random:
    """A Python ``random.Random`` seeded by one draw from ``generator``, for host algorithms."""
    return _random.Random(draw_seed(generator, op))


def permutation(n: int, generator=None, op: str = "randperm") -> list:
    """A random permutation of ``range(n)`` as a list (Fisher-Yates on the host), one draw.

    >>> sorted(permutation(4)) == [0, 1, 2, 3]
    True
    """
    order = list(range(n))
    host_random(generator, op).shuffle(order)
    return order


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
