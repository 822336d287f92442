"""MNIST and Fashion-MNIST from the standard IDX files in a local folder (plain or ``.gz``),
read with ``struct``; ``download=True`` fetches them once into that folder where the network allows."""
from __future__ import annotations

import array
import gzip
import math
import os
import struct
import sys

from ..serialization import upload
from ..utils.data.dataset import TensorDataset

_IDX_TYPES = {0x08: "B", 0x09: "b", 0x0B: "h", 0x0C: "i", 0x0D: "f", 0x0E: "d"}   # big-endian on disk
_FILES = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_MIRRORS = {"MNIST": "https://ossci-datasets.s3.amazonaws.com/mnist/",
            "FashionMNIST": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"}


def read_idx(path: str):
    """(values, shape) of an IDX file (``.gz`` is decompressed): values is a flat ``array.array``,
    typecode 'i' (int32) for integer data, 'f' or 'd' for floats.

    >>> read_idx("train-labels-idx1-ubyte.gz")  # doctest: +SKIP
    (array('i', [5, 0, 4, ...]), (60000,))
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"read_idx: {path} is not an IDX file (bad magic number {raw[:4]!r})")
    code, ndim = _IDX_TYPES[raw[2]], raw[3]
    shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    values = array.array(code)
    body = raw[4 + 4 * ndim:]
    if len(body) != math.prod(shape) * values.itemsize:
        raise ValueError(f"read_idx: {path} holds {len(body)} data bytes; its header {shape} needs "
                         f"{math.prod(shape) * values.itemsize}")
    values.frombytes(body)
    if values.itemsize > 1 and sys.byteorder == "little":
        values.byteswap()
    return (values if code in "fdi" else array.array("i", values)), tuple(shape)


def _find(root, name):
    for candidate in (name, name + ".gz"):
        path = os.path.join(root, candidate)
        if os.path.exists(path):
            return path
    return None


def _download(root, name, base):
    import urllib.request
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, name + ".gz")
    urllib.request.urlretrieve(base + name + ".gz", path)
    return path


class MNIST(TensorDataset):
    """MNIST digits: ``data`` [N, 28, 28] float32 in [0, 1] (or the raw 0-255 values with
    ``normalize=False``) and ``targets`` [N] int64, read from IDX files under ``root``.

    >>> ds = MNIST("~/.cache/mnist", train=False)  # doctest: +SKIP
    >>> x, y = ds[0]; x.shape, y.item()  # doctest: +SKIP
    ((28, 28), 7)
    """

    mirror = _MIRRORS["MNIST"]

    def __init__(self, root: str, train: bool = True, download: bool = False, normalize: bool = True, backend=None):
        import webgrad as wg
        root = os.path.expanduser(root)
        paths = []
        for name in _FILES[bool(train)]:
            path = _find(root, name)
            if path is None and download:
                path = _download(root, name, self.mirror)
            if path is None:
                raise FileNotFoundError(f"{type(self).__name__}: {name}[.gz] not found in {root}; put the IDX files "
                                        f"there or pass download=True")
            paths.append(path)
        pixels, shape = read_idx(paths[0])
        labels, lshape = read_idx(paths[1])
        if shape[0] != lshape[0]:
            raise ValueError(f"{type(self).__name__}: {shape[0]} images but {lshape[0]} labels in {root}")
        data = upload(pixels, shape, wg.int32 if pixels.typecode == "i" else wg.float32, backend).float()
        self.data = data / 255.0 if normalize else data
        self.targets = upload(labels, lshape, wg.int64, backend)
        super().__init__(self.data, self.targets)


class FashionMNIST(MNIST):
    """Fashion-MNIST: the same IDX layout as MNIST, ten kinds of clothing."""

    mirror = _MIRRORS["FashionMNIST"]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


__all__ = ["MNIST", "FashionMNIST", "read_idx"]
