"""What the GPU backend can hold: the largest buffer a kernel may bind on a device, and how
many bytes of free buffers the pool keeps (``GpuBackend.pool_limit``).

The pool keeps, by default, ``max(1 GiB, 2 x the largest buffer)``: at least two of the largest
buffers, so that an op on the largest tensor and its result cycle through the pool instead of
being made anew. ``WEBGRAD_GPU_POOL_LIMIT`` (bytes, or with a ``K``/``M``/``G`` suffix: ``512M``)
sets another amount; so does ``wg.backend("wgpu").pool_limit = nbytes`` while running.
"""
from __future__ import annotations

import os

POOL_FLOOR = 1 << 30
POOL_LIMIT_ENV = "WEBGRAD_GPU_POOL_LIMIT"
# WebGPU's defaults, for a device that does not say; and the largest tensor whose element
# offsets the kernels' i32 arithmetic can hold (2**31 - 1 elements of 4 bytes)
_DEFAULTS = {"max-storage-buffer-binding-size": 128 << 20, "max-buffer-size": 256 << 20}
_INDEXABLE = ("2**31 - 1 elements: the kernels index with i32", (2**31 - 1) * 4)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def buffer_limit(limits: dict) -> tuple:
    """(bytes, what limits it): the largest buffer a kernel may bind on a device with
    ``limits`` (WebGPU's names), rounded down to a multiple of 16.

    >>> buffer_limit({"max-storage-buffer-binding-size": 134217728, "max-buffer-size": 2147483647})
    (134217728, 'max-storage-buffer-binding-size')
    """
    name, n = min(((k, limits.get(k, v)) for k, v in _DEFAULTS.items()), key=lambda kv: kv[1])
    if n > _INDEXABLE[1]:
        name, n = _INDEXABLE
    return n // 16 * 16, name


def pool_limit(largest: int, environ=os.environ) -> int:
    """The bytes of free buffers the pool keeps: ``WEBGRAD_GPU_POOL_LIMIT`` when set, else
    ``max(1 GiB, 2 * largest)`` for a device whose largest buffer is ``largest`` bytes.

    >>> pool_limit(128 << 20, {}) == 1 << 30, pool_limit(0, {"WEBGRAD_GPU_POOL_LIMIT": "512M"})
    (True, 536870912)
    """
    text = environ.get(POOL_LIMIT_ENV, "").strip()
    return parse_bytes(text, POOL_LIMIT_ENV) if text else max(POOL_FLOOR, 2 * largest)


def parse_bytes(text: str, what: str) -> int:
    """A byte count from ``text``: digits with an optional K, M or G suffix (powers of 1024).

    >>> parse_bytes("2G", "limit"), parse_bytes("4096", "limit")
    (2147483648, 4096)
    """
    digits, unit = (text[:-1], text[-1].upper()) if text[-1:].isalpha() else (text, "")
    if not digits.isdigit() or unit not in _UNITS:
        raise ValueError(f"{what}: expected a byte count such as 1073741824, 512M or 2G, got {text!r}")
    return int(digits) * _UNITS[unit]
