"""movement ops."""
from __future__ import annotations

METHODS = {}

__all__ = []
