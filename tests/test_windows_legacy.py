"""Window functions (hann, hamming, blackman, bartlett, kaiser) and PyTorch's small queries and legacy
entry points (is_neg, resolve_neg, get_device, typename, is_nonzero, set_default_tensor_type, Tensor.new,
apply_, map_), against torch."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("length", [0, 1, 2, 7, 64])
@pytest.mark.parametrize("name", WINDOWS)
def test_windows_as_torch(name, length, periodic, backend):
    got = getattr(wg, name)(length, periodic)
    want = getattr(torch, name)(length, periodic)
    assert got.device == backend and got.dtype == wg.float32 and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=1e-5, atol=2e-6)


def test_window_parameters_and_options(backend):
    cases = [lambda m: m.hamming_window(9, False, 0.5, 0.25), lambda m: m.hamming_window(9, True, 0.6),
             lambda m: m.kaiser_window(9, False, 5.0), lambda m: m.kaiser_window(10, True, 30.0),
             lambda m: m.hann_window(6, dtype=m.float64 if backend == "cpu" else m.float32)]
    for case in cases:
        got, want = case(wg), case(torch)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=1e-5, atol=2e-6)
    w = wg.hann_window(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    for lib in (torch, wg):
        with pytest.raises(RuntimeError, match="floating point dtypes"):
            lib.bartlett_window(4, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="non-negative window_length"):
            lib.hann_window(-1)


def test_queries_as_torch(backend):
    for lib in (torch, wg):
        x = -lib.ones(2)
        assert lib.is_neg(x) is False and x.is_neg() is False
        assert lib.resolve_neg(x) is x and x.resolve_neg() is x
        assert lib.is_nonzero(lib.tensor([0.5])) is True and lib.tensor(0).is_nonzero() is False
        for bad, words in ((lib.ones(2), "more than one value"), (lib.ones(0), "no values")):
            with pytest.raises(RuntimeError, match=words):
                lib.is_nonzero(bad)
        assert lib.typename(lib.zeros(1, dtype=lib.int64)) == "torch.LongTensor"
        prefix = lib.__name__ + ".nn."         # (webgrad's Linear lives in webgrad.nn.layers.linear)
        assert lib.typename(3) == "int" and lib.typename(lib.nn.Linear).startswith(prefix)
        assert lib.typename(lib.nn.Linear(1, 1)) == lib.typename(lib.nn.Linear) and \
            lib.typename(lib.nn.Linear).endswith(".linear.Linear")
    assert wg.get_device(wg.ones(1)) == (-1 if backend == "cpu" else 0)
    assert torch.get_device(torch.ones(1)) == -1


def test_set_default_tensor_type_as_torch():
    try:
        for lib in (torch, wg):
            with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
                lib.set_default_tensor_type("torch.DoubleTensor")
            assert lib.get_default_dtype() == lib.float64 and lib.tensor([1.5]).dtype == lib.float64
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_default_tensor_type(lib.FloatTensor)
                assert lib.get_default_dtype() == lib.float32
                with pytest.raises(TypeError, match="only floating-point types"):
                    lib.set_default_tensor_type(lib.LongTensor)
    finally:
        torch.set_default_dtype(torch.float32)
        wg.set_default_dtype(wg.float32)


def test_legacy_new_as_torch(backend):
    for lib in (torch, wg):
        x = lib.zeros(1, dtype=lib.int64)
        assert x.new().shape == (0,) and x.new().dtype == lib.int64
        assert x.new(2, 3).shape == (2, 3) and x.new(lib.Size([4])).shape == (4,)
        assert x.new([1, 2]).tolist() == [1, 2] and x.new([1.7]).dtype == lib.int64
        other = lib.ones(3, dtype=lib.int64)
        shared = x.new(other)
        shared[0] = 5
        assert other.tolist() == [5, 1, 1]
    assert wg.ones(1, device=backend).new(2).device == backend


def test_apply_and_map_as_torch(backend):
    for lib in (torch, wg):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], device="cpu")
        v = x[:, 1]
        assert x.apply_(lambda e: e * e + 1) is x
        assert x.tolist() == [[2.0, 5.0], [10.0, 17.0]] and v.tolist() == [5.0, 17.0]
        assert x.map_(lib.tensor([1.0, -1.0], device="cpu"), lambda a, b: a * b).tolist() == [[2.0, -5.0], [10.0, -17.0]]
        with pytest.raises(RuntimeError, match="requires grad"):
            lib.ones(2, requires_grad=True, device="cpu").apply_(abs)
    if backend != "cpu":
        with pytest.raises(TypeError, match="only implemented on CPU tensors"):
            wg.ones(2, device=backend).apply_(abs)


def test_is_inference_follows_this_threads_scopes(backend):
    """Tensors made in one thread while another thread is inside inference_mode are not inference tensors
    (Tensor._wrap tests the scopes open anywhere, then this thread's flag); those made inside are."""
    import threading
    made, inside, go_on = {}, threading.Event(), threading.Event()

    def other():
        with wg.inference_mode():
            inside.set()
            go_on.wait(10)
            made["there"] = wg.ones(1, device=backend)
    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    made["here"] = wg.ones(1, device=backend) * 2
    go_on.set()
    thread.join(10)
    assert made["there"].is_inference() and not made["here"].is_inference()
    assert not wg.ones(1, device=backend).is_inference()   # every scope closed


def test_is_inference_as_torch(backend):
    for lib in (torch, wg):
        with lib.inference_mode():
            x = lib.ones(2)
            y = x * 2
        assert (x.is_inference(), y.is_inference(), lib.is_inference(x)) == (True, True, True)
        assert not (x + 1).is_inference() if lib is wg else True   # (torch refuses x + 1 outside for autograd)
        assert not lib.ones(1).is_inference()
        with lib.inference_mode(False):
            assert not lib.ones(1).is_inference()


def test_more_legacy_queries_as_torch(backend):
    for lib in (torch, wg):
        assert lib.zeros(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
        assert lib.nonzero_static(lib.tensor([[0, 1], [1, 1]]), size=4).tolist() == [[0, 1], [1, 0], [1, 1],
                                                                                      [-1, -1]]
        assert lib.tensor([0, 2, 3]).nonzero_static(size=1, fill_value=7).tolist() == [[1]]
        assert lib.zeros(2, device="cpu").map2_(lib.tensor([1.0, 2.0], device="cpu"), lib.tensor(3.0, device="cpu"),
                                                lambda v, a, b: v + a * b).tolist() == [3.0, 6.0]
        assert lib.empty_permuted((2, 3, 4), (2, 0, 1)).stride() == (3, 1, 6)
        x = lib.ones(2)
        assert lib.asarray(x) is x and lib.asarray(x, dtype=lib.int64).dtype == lib.int64
        assert lib.asarray([1, 2], dtype=lib.float32, requires_grad=True).requires_grad
        with pytest.raises(ValueError):
            lib.asarray(x, dtype=lib.int64, copy=False)
        copied = lib.asarray(x, copy=True)
        copied.add_(1)
        assert x.tolist() == [1.0, 1.0]
        import array
        buf = array.array("q", [5, 6, 7])
        assert lib.frombuffer(buf, dtype=lib.int64, count=2, offset=8).tolist() == [6, 7]
        with pytest.raises(ValueError):
            lib.frombuffer(buf, dtype=lib.int64, offset=32)
