"""Gradient rules, one per kernel, written with ops so that they run on every backend
and can themselves be differentiated. Importing this package registers them all."""
from . import (activations, attention, binary, complex, factorizations, indexing, linalg, losses,  # noqa: F401
               movement, normalization, reduce, sorting, special, unary, windows)
from . import fft  # noqa: F401
