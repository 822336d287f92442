"""Gradient rules, one per kernel, written with ops so that they run on every backend
and can themselves be differentiated. Importing this package registers them all."""
from . import (activations, attention, binary, complex, indexing, linalg, losses, movement,  # noqa: F401
               normalization, reduce, sorting, unary, windows)
