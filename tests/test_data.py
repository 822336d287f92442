"""Datasets, DataLoader (batching, seeded shuffling, drop_last, collate) and the IDX/MNIST reader."""
import gzip
import struct

import numpy as np
import pytest

import webgrad as wg
from webgrad.data import DataLoader, Dataset, TensorDataset, default_collate, random_split


def dataset(n=10):
    return TensorDataset(wg.arange(n * 2).reshape(n, 2).float(), wg.arange(n))


def labels(loader):
    return [y.tolist() for _, y in loader]


def test_batches_in_order():
    loader = DataLoader(dataset(), batch_size=4)
    assert len(loader) == 3
    assert labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    x, _ = next(iter(loader))
    assert x.shape == (4, 2) and x.dtype == wg.float32


def test_drop_last():
    loader = DataLoader(dataset(), batch_size=4, drop_last=True)
    assert len(loader) == 2 and labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_shuffle_is_deterministic_with_a_seed():
    a = labels(DataLoader(dataset(), batch_size=3, shuffle=True, generator=123))
    b = labels(DataLoader(dataset(), batch_size=3, shuffle=True, generator=123))
    c = labels(DataLoader(dataset(), batch_size=3, shuffle=True, generator=7))
    assert a == b and a != c
    assert sorted(sum(a, [])) == list(range(10))
    loader = DataLoader(dataset(), batch_size=10, shuffle=True, generator=1)
    assert labels(loader) != labels(loader)     # a new order each epoch
    wg.manual_seed(5)
    d = labels(DataLoader(dataset(), batch_size=3, shuffle=True))
    wg.manual_seed(5)
    assert labels(DataLoader(dataset(), batch_size=3, shuffle=True)) == d


def test_rows_match_items():
    ds = dataset()
    for x, y in DataLoader(ds, batch_size=4, shuffle=True, generator=0):
        for xi, yi in zip(x, y):
            assert ds[yi.item()][0].tolist() == xi.tolist()


class Squares(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": wg.tensor([float(i), float(i * i)]), "label": i, "pair": (i, float(i) / 2)}


def test_collate_dicts_tuples_numbers():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["x"].tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]]
    assert batch["label"].tolist() == [0, 1, 2] and batch["label"].dtype == wg.int64
    assert batch["pair"][1].tolist() == [0.0, 0.5, 1.0]
    custom = DataLoader(Squares(), batch_size=2, collate_fn=lambda items: len(items))
    assert list(custom) == [2, 2, 1]
    assert default_collate([[1, 2], [3, 4]])[0].tolist() == [1, 3]


def test_random_split_and_errors():
    a, b = random_split(dataset(), [7, 3], generator=0)
    assert len(a) == 7 and len(b) == 3
    assert sorted([a[i][1].item() for i in range(7)] + [b[i][1].item() for i in range(3)]) == list(range(10))
    with pytest.raises(ValueError, match="random_split"):
        random_split(dataset(), [3, 3])
    with pytest.raises(ValueError, match="TensorDataset"):
        TensorDataset(wg.ones(3), wg.ones(4))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(dataset(), batch_size=0)


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
    x, y = next(iter(DataLoader(ds, batch_size=4)))
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
