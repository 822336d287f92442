"""Datasets (map-style, iterable, joined, split), default_collate/default_convert against PyTorch's,
the webgrad.data alias of webgrad.utils.data, and the IDX/MNIST reader. DataLoader and samplers:
test_data_loader.py and test_data_samplers.py."""
import collections
import gzip
import struct

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import webgrad as wg
import webgrad.utils.data as wud
from backends_under_test import FLOAT64_BACKENDS

Pair = collections.namedtuple("Pair", "x y")

DTYPES = {torch.int64: "long", torch.float64: "float64", torch.float32: "float32", torch.bool: "bool",
          torch.int32: "int32", torch.uint8: "uint8"}


def plain(x, float64=True, uint8=True):
    """A comparable form of a batch: containers by type name, tensors as (dtype, values). A webgrad
    integer tensor reads as 'long' (webgrad.long), float64 as float32 where ``float64`` is False, and
    uint8 as 'long' where ``uint8`` is False (the GPU backends make numpy's uint8 int64)."""
    if isinstance(x, torch.Tensor):
        name = DTYPES[x.dtype]
        name = "float32" if name == "float64" and not float64 else name
        return ("tensor", "long" if name == "int32" or (name == "uint8" and not uint8) else name, x.tolist())
    if isinstance(x, wg.Tensor):
        return ("tensor", "long" if x.dtype == wg.long else x.dtype.name, x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: plain(v, float64, uint8) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v, float64, uint8) for v in x])
    return x


def batches(m):
    """Sample lists for default_collate, built with library ``m`` (torch or webgrad)."""
    return [
        [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
        [1, 2, 3], [0.5, 1.5], [True, False], [1, 2.5],
        ["a", "b"], [b"x", b"y"],
        [{"x": m.tensor([1, 2]), "label": 0, "name": "a"}, {"x": m.tensor([3, 4]), "label": 1, "name": "b"}],
        [(m.ones(2), 0, 1.0), (m.zeros(2), 1, 2.0)],
        [[1, 2], [3, 4]],
        [Pair(1, 2.0), Pair(3, 4.0)],
        [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
        [np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32)],
        [np.array([1, 2]), np.array([3, 4])],
        [np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint8)],
        [np.float32(1.5), np.float32(2.5)],
        [np.zeros(2), np.ones(2)],            # float64 arrays
        [((1, 2), {"k": [3.0]}), ((4, 5), {"k": [6.0]})],
    ]


@pytest.mark.parametrize("index", range(len(batches(torch))))
def test_default_collate_as_pytorch(backend, index):
    expected = tud.default_collate(batches(torch)[index])
    got = wud.default_collate(batches(wg)[index])
    assert plain(got) == plain(expected, float64=backend in FLOAT64_BACKENDS, uint8=wg.uint8 in wg.get_backend().dtypes)


def test_default_collate_errors_as_pytorch():
    for bad in ([object(), object()], [None], [[1, 2], [3]], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(Exception) as expected:
            tud.default_collate(bad)
        with pytest.raises(expected.type, match="default_collate"):
            wud.default_collate(bad)


@pytest.mark.parametrize("sample", [
    lambda m: 0, lambda m: np.array([0, 1]), lambda m: Pair(np.zeros(1), 2), lambda m: (1, [2.0], {"a": "b"}),
    lambda m: [np.array([1.0]), "s"], lambda m: {"t": m.tensor([1.0])}, lambda m: np.array(["a"]),
])
def test_default_convert_as_pytorch(backend, sample):
    got, expected = wud.default_convert(sample(wg)), tud.default_convert(sample(torch))
    assert plain(got) == plain(expected, float64=backend in FLOAT64_BACKENDS, uint8=wg.uint8 in wg.get_backend().dtypes)


def test_tensor_dataset(backend):
    x, y = wg.arange(12).reshape(6, 2).float(), wg.arange(6)
    ds = wud.TensorDataset(x, y)
    assert len(ds) == 6 and [t.tolist() for t in ds[2]] == [[4.0, 5.0], 2]
    assert [t.tolist() for t in ds[1:3]] == [[[2.0, 3.0], [4.0, 5.0]], [1, 2]]
    with pytest.raises(AssertionError, match="TensorDataset"):       # PyTorch's type too
        wud.TensorDataset(wg.ones(3), wg.ones(4))
    with pytest.raises(IndexError, match="TensorDataset"):
        wud.TensorDataset()


class Letters(wud.Dataset):
    def __init__(self, text):
        self.text = text

    def __getitem__(self, i):
        return self.text[i]

    def __len__(self):
        return len(self.text)


class Count(wud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_joined_datasets_as_pytorch():
    both = Letters("abc") + Letters("de")
    assert isinstance(both, wud.ConcatDataset) and len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i] for i in range(-5, 5)] == list("abcde") * 2
    with pytest.raises(ValueError, match="ConcatDataset"):
        both[-6]
    with pytest.raises(IndexError):
        both[5]
    with pytest.raises(AssertionError, match="empty"):
        wud.ConcatDataset([])
    with pytest.raises(AssertionError, match="IterableDataset"):
        wud.ConcatDataset([Count(2)])
    chain = Count(2) + Count(3)
    assert isinstance(chain, wud.ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(wud.ChainDataset([Letters("a")]))
    with pytest.raises(NotImplementedError, match="__getitem__"):
        wud.Dataset()[0]
    with pytest.raises(TypeError):             # no __len__ on the base class, as in PyTorch
        len(wud.Dataset())


def test_subset():
    sub = wud.Subset(Letters("abcdef"), [5, 0, 2])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == ["f", "a", "c"]
    assert sub.__getitems__([2, 0]) == ["c", "f"]
    nested = wud.Subset(sub, [2, 1])
    assert [nested[0], nested[1]] == ["c", "a"]


def test_random_split(backend):
    g = wg.Generator()
    a, b, c = wud.random_split(range(10), [0.5, 0.3, 0.2], generator=g.manual_seed(0))
    assert (len(a), len(b), len(c)) == (5, 3, 2)
    assert sorted(list(a) + list(b) + list(c)) == list(range(10))
    again = wud.random_split(range(10), [5, 3, 2], generator=g.manual_seed(0))
    assert [list(s) for s in again] == [list(a), list(b), list(c)]
    assert [list(s) for s in wud.random_split(range(10), [5, 5], generator=g.manual_seed(1))] != [list(a) + list(b)]
    wg.manual_seed(3)
    first = [list(s) for s in wud.random_split(range(10), [4, 6])]     # default generator by default
    wg.manual_seed(3)
    assert [list(s) for s in wud.random_split(range(10), [4, 6])] == first
    for n, lengths in ((3, [0.1, 0.9]), (7, [0.5, 0.25, 0.25])):     # remainders go round-robin, as PyTorch's
        assert [len(s) for s in wud.random_split(range(n), lengths)] == \
            [len(s) for s in tud.random_split(range(n), lengths)]
    with pytest.warns(UserWarning, match="length of split at index 1 is 0"):
        wud.random_split(range(2), [0.9, 0.1])
    for bad in ([0.5, 0.5, 0.2], [5, 4], [1.5, -0.5]):
        with pytest.raises(ValueError) as expected:
            tud.random_split(range(10), bad)
        with pytest.raises(expected.type, match="random_split"):
            wud.random_split(range(10), bad)


def test_webgrad_data_is_webgrad_utils_data():
    for name in wud.__all__:
        assert getattr(wg.data, name) is getattr(wud, name), name
        assert hasattr(tud, name), f"{name} is not a torch.utils.data name"
    for name in ("Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
                 "random_split", "default_collate", "default_convert", "get_worker_info", "DataLoader", "Sampler",
                 "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
                 "BatchSampler", "DistributedSampler"):
        assert name in wud.__all__, name
    assert wg.utils.data is wud
    from webgrad.data import MNIST, DataLoader  # noqa: F401   the old spelling keeps working
    assert DataLoader is wud.DataLoader


def write_idx(path, array, code=0x08):
    header = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(">u1" if code == 0x08 else ">i4").tobytes()
    if path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)


def test_mnist_reads_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(6, 28, 28)).astype(np.uint8)
    targets = rng.integers(0, 10, size=6).astype(np.uint8)
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", images)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", targets)
    ds = wg.data.MNIST(str(tmp_path), train=False)
    assert len(ds) == 6 and ds.data.shape == (6, 28, 28) and ds.targets.dtype == wg.int64
    np.testing.assert_allclose(ds.data.numpy(), images / 255.0, rtol=1e-6)
    assert ds.targets.tolist() == targets.tolist()
    x, y = next(iter(wg.data.DataLoader(ds, batch_size=4)))
    assert x.shape == (4, 28, 28) and y.tolist() == targets[:4].tolist()
    values, shape = wg.data.read_idx(str(tmp_path / "t10k-labels-idx1-ubyte"))
    assert list(values) == targets.tolist() and shape == (6,)
    write_idx(tmp_path / "ints", np.array([[-5, 70000]]), code=0x0C)
    assert list(wg.data.read_idx(str(tmp_path / "ints"))[0]) == [-5, 70000]
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        wg.data.FashionMNIST(str(tmp_path), train=True)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX file"):
        wg.data.read_idx(str(tmp_path / "bad"))
