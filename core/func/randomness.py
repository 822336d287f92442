"""``vmap``'s ``randomness``: whether a function drew random numbers, read from the default
generator's state (``get_rng_state``) before and after it ran.

'error' raises if it drew (and puts the generator back, so nothing is half-updated); 'same' gives
every batch element the same draws (the state is put back before each element); 'different'
lets each element draw its own. Draws from an explicit ``generator=`` are not watched.
"""
from __future__ import annotations

import contextlib

from ..random import get_rng_state, set_rng_state

CHOICES = ("error", "different", "same")
_DREW = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
         "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def check_randomness(randomness) -> None:
    if randomness not in CHOICES:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _state() -> list:
    return get_rng_state().tolist()


@contextlib.contextmanager
def random_guard(randomness: str):
    """Around a run that must not draw in 'error' mode: raises (restoring the generator) if it did."""
    if randomness != "error":
        yield
        return
    before = get_rng_state()
    yield
    if _state() != before.tolist():
        set_rng_state(before)
        raise RuntimeError(_DREW)


class Draws:
    """Per batch element: ``start(b)`` before element ``b`` runs ('same' restores the state the
    first element started from); ``check()`` after it ('error' raises if it drew)."""

    def __init__(self, randomness: str):
        self.randomness = randomness
        self.before = get_rng_state() if randomness != "different" else None
        self._first = self.before.tolist() if randomness == "error" else None

    def start(self, b: int) -> None:
        if self.randomness == "same" and b > 0:
            set_rng_state(self.before)

    def check(self) -> None:
        if self.randomness == "error" and _state() != self._first:
            set_rng_state(self.before)
            raise RuntimeError(_DREW)
