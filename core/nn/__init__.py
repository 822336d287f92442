"""Neural-network building blocks: ``webgrad.nn.functional`` (and, later, modules)."""
from . import functional  # noqa: F401
