"""Gradient rules, one per kernel, written with ops so that they run on every backend
and can themselves be differentiated. Importing this package registers them all."""
from . import binary, indexing, linalg, losses, movement, reduce, sorting, unary, windows  # noqa: F401
