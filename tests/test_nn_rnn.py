"""RNN, LSTM, GRU, their cells and nn.utils.rnn against PyTorch on every backend: with torch's
weights loaded (state_dict keys, shapes and order equal), outputs, final states and the gradients
of inputs, initial states and every parameter agree (float32 on each backend, float64 on cpu);
packed sequences give torch's layout and results; bad input raises torch's exception types; a
few SGD steps give torch's losses."""
import warnings

import numpy as np
import pytest

import webgrad as wg
from nn_compare import TORCH_DTYPES, compare_modules, load_torch_weights, rand, same_error, sgd_losses

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")

T, B, I, H = 4, 2, 3, 4
DTYPES = ["float32", "float64"]


def make_pair(cls, kwargs, dtype="float32", args=(I, H)):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kwargs).to(TORCH_DTYPES[dtype])
    wm = getattr(wg.nn, cls)(*args, **kwargs).to(getattr(wg, dtype))
    load_torch_weights(tm, wm)
    return tm, wm


def states(cls, kwargs, batched, dtype, batch=B):
    """An initial state of the right shape (a tuple for the LSTM)."""
    n = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    lead = (n, batch) if batched else (n,)
    h = rand(*lead, kwargs.get("proj_size") or H, seed=5, dtype=dtype)
    return (h, rand(*lead, H, seed=6, dtype=dtype)) if cls == "LSTM" else h


LAYERS = [  # (id, class, constructor kwargs, batched input, initial state given)
    ("rnn_tanh", "RNN", {}, True, False),
    ("rnn_relu_2layer_bi_batch_first_hx", "RNN", dict(num_layers=2, nonlinearity="relu", bidirectional=True,
                                                      batch_first=True), True, True),
    ("rnn_unbatched_2layer_hx", "RNN", dict(num_layers=2), False, True),
    ("lstm", "LSTM", {}, True, False),
    ("lstm_2layer_bi_hx", "LSTM", dict(num_layers=2, bidirectional=True), True, True),
    ("lstm_batch_first_proj_2layer_hx", "LSTM", dict(batch_first=True, proj_size=2, num_layers=2), True, True),
    ("lstm_unbatched_bi_hx", "LSTM", dict(bidirectional=True), False, True),
    ("lstm_no_bias", "LSTM", dict(bias=False), True, False),
    ("gru", "GRU", {}, True, False),
    ("gru_2layer_bi_batch_first_hx", "GRU", dict(num_layers=2, bidirectional=True, batch_first=True), True, True),
    ("gru_unbatched_bi", "GRU", dict(bidirectional=True), False, False),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,cls,kwargs,batched,given", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(backend, name, cls, kwargs, batched, given, dtype):
    tm, wm = make_pair(cls, kwargs, dtype)
    shape = ((B, T, I) if kwargs.get("batch_first") else (T, B, I)) if batched else (T, I)
    args = [rand(*shape, dtype=dtype)] + ([states(cls, kwargs, batched, dtype)] if given else [])
    compare_modules(tm, wm, args, dtype=dtype)


CELLS = [  # (id, class, constructor kwargs, batched input, state given)
    ("rnn_cell_hx", "RNNCell", {}, True, True),
    ("rnn_cell_relu_no_bias_unbatched", "RNNCell", dict(nonlinearity="relu", bias=False), False, False),
    ("lstm_cell_hx", "LSTMCell", {}, True, True),
    ("lstm_cell_unbatched_hx", "LSTMCell", {}, False, True),
    ("lstm_cell", "LSTMCell", {}, True, False),
    ("gru_cell", "GRUCell", {}, True, False),
    ("gru_cell_no_bias_unbatched_hx", "GRUCell", dict(bias=False), False, True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,cls,kwargs,batched,given", CELLS, ids=[c[0] for c in CELLS])
def test_cell_matches_torch(backend, name, cls, kwargs, batched, given, dtype):
    tm, wm = make_pair(cls, kwargs, dtype)
    lead = (B,) if batched else ()
    h = rand(*lead, H, seed=5, dtype=dtype)
    hx = (h, rand(*lead, H, seed=6, dtype=dtype)) if cls == "LSTMCell" else h
    compare_modules(tm, wm, [rand(*lead, I, dtype=dtype)] + ([hx] if given else []), dtype=dtype)


def test_parameters_registration_init_and_repr():
    wg.manual_seed(0)
    for cls, kwargs in [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2, bias=False)),
                        ("GRU", dict(num_layers=3, batch_first=True, dropout=0.5)), ("RNN", dict(nonlinearity="relu")),
                        ("RNNCell", dict(nonlinearity="relu", bias=False)), ("LSTMCell", {}), ("GRUCell", {})]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tm, wm = getattr(torch.nn, cls)(I, H, **kwargs), getattr(wg.nn, cls)(I, H, **kwargs)
        assert [n for n, _ in wm.named_parameters()] == [n for n, _ in tm.named_parameters()]
        assert repr(wm) == repr(tm)
        bound = 1 / H ** 0.5                           # PyTorch's uniform(-1/sqrt(H), 1/sqrt(H))
        values = np.concatenate([np.asarray(p.tolist()).reshape(-1) for p in wm.parameters()])
        assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 4
        if hasattr(tm, "all_weights"):
            assert [[tuple(w.shape) for w in ws] for ws in wm.all_weights] == \
                [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
            wm.flatten_parameters()


def test_dropout_between_layers_not_after_the_last(backend):
    """With p=1 the dropout is deterministic: the second layer sees zeros, the output does not."""
    tm, wm = make_pair("LSTM", dict(num_layers=2, dropout=1.0))
    compare_modules(tm, wm, [rand(T, B, I)])
    tm, wm = make_pair("GRU", dict(num_layers=3, dropout=0.5, bidirectional=True))
    tm.eval(), wm.eval()                               # eval: no dropout at all
    compare_modules(tm, wm, [rand(T, B, I)])
    wm.train()
    x = wg.tensor(rand(T, B, I))
    first, second = wm(x)[0].detach().numpy(), wm(x)[0].detach().numpy()
    assert not np.allclose(first, second), "training-mode dropout between layers should be random"


def test_dropout_with_one_layer_warns_as_torch():
    for lib in (torch, wg):
        with pytest.warns(UserWarning, match="dropout"):
            lib.nn.GRU(I, H, dropout=0.3)


# ---------------------------------------------------------------- packed sequences


def packed_pipeline(lib, batch_first, enforce_sorted, lengths):
    """pack -> module -> pad, returning every intermediate torch gives."""
    utils = lib.nn.utils.rnn

    def run(module, x, hx):
        packed = utils.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, h = module(packed, hx)
        padded, lens = utils.pad_packed_sequence(out, batch_first=batch_first, padding_value=-2.0,
                                                 total_length=T + 1)
        return tuple(packed), tuple(out), padded, lens, h
    return run


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls,kwargs", [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", {}),
                                        ("RNN", dict(bidirectional=True))], ids=["lstm", "gru", "rnn"])
@pytest.mark.parametrize("batch_first,enforce_sorted", [(False, True), (True, False), (False, False)])
def test_packed_sequence_matches_torch(backend, cls, kwargs, batch_first, enforce_sorted, dtype):
    kwargs = dict(kwargs, batch_first=batch_first)
    tm, wm = make_pair(cls, kwargs, dtype)
    lengths = [4, 4, 2, 1] if enforce_sorted else [2, 4, 1, 4]
    x = rand(*((4, T, I) if batch_first else (T, 4, I)), dtype=dtype)
    hx = states(cls, kwargs, True, dtype, batch=4)
    calls = (packed_pipeline(torch, batch_first, enforce_sorted, lengths),
             packed_pipeline(wg, batch_first, enforce_sorted, lengths))
    compare_modules(tm, wm, [x, hx], dtype=dtype, calls=calls)


def test_pad_pack_and_unpack_sequences_match_torch(backend):
    seqs = [rand(3, 2), rand(1, 2, seed=1), rand(4, 2, seed=2)]
    t_seqs, w_seqs = [torch.tensor(s) for s in seqs], [wg.tensor(s) for s in seqs]
    tr, wr = torch.nn.utils.rnn, wg.nn.utils.rnn
    for batch_first in (False, True):
        for side in ("left", "right"):
            want = tr.pad_sequence(t_seqs, batch_first=batch_first, padding_value=7.0, padding_side=side)
            got = wr.pad_sequence(w_seqs, batch_first=batch_first, padding_value=7.0, padding_side=side)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    want, got = tr.pack_sequence(t_seqs, enforce_sorted=False), wr.pack_sequence(w_seqs, enforce_sorted=False)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    for a, b in zip(tr.unpack_sequence(want), wr.unpack_sequence(got)):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    padded = tr.pad_sequence(t_seqs)
    w_padded = wg.tensor(padded.numpy())               # first: torch's unpad_sequence transposes its input in place
    for a, b in zip(tr.unpad_sequence(padded, torch.tensor([3, 1, 4])), wr.unpad_sequence(w_padded, [3, 1, 4])):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    w = wg.tensor(seqs[0], requires_grad=True)         # gradients reach the sequences through the padding
    (wr.pad_sequence([w, w_seqs[2]], padding_side="left") * 3).sum().backward()
    assert w.grad.tolist() == np.full((3, 2), 3.0).tolist()


# ---------------------------------------------------------------- errors


def _lstm(lib, *args, **kw):
    return lib.nn.LSTM(I, H, *args, **kw)


ERRORS = [
    ("input_rank", lambda L: L.nn.RNN(I, H)(L.tensor(rand(2, 2, 2, I)))),
    ("input_size", lambda L: L.nn.RNN(I, H)(L.tensor(rand(T, B, I + 1)))),
    ("hidden_size", lambda L: L.nn.RNN(I, H)(L.tensor(rand(T, B, I)), L.tensor(rand(1, B, H + 1)))),
    ("hidden_batch", lambda L: L.nn.GRU(I, H)(L.tensor(rand(T, B, I)), L.tensor(rand(1, B + 1, H)))),
    ("batched_input_2d_hx", lambda L: L.nn.RNN(I, H)(L.tensor(rand(T, B, I)), L.tensor(rand(1, H)))),
    ("unbatched_input_3d_hx", lambda L: L.nn.GRU(I, H)(L.tensor(rand(T, I)), L.tensor(rand(1, 1, H)))),
    ("lstm_cell_state_size", lambda L: _lstm(L, 2)(L.tensor(rand(T, B, I)),
                                                    (L.tensor(rand(2, B, H)), L.tensor(rand(1, B, H))))),
    ("lstm_batched_2d_states", lambda L: _lstm(L)(L.tensor(rand(T, B, I)), (L.tensor(rand(1, H)),) * 2)),
    ("lstm_unbatched_3d_states", lambda L: _lstm(L)(L.tensor(rand(T, I)), (L.tensor(rand(1, 1, H)),) * 2)),
    ("lstm_proj_state_size", lambda L: _lstm(L, proj_size=2)(L.tensor(rand(T, B, I)),
                                                             (L.tensor(rand(1, B, H)),) * 2)),
    ("dtype_mismatch", lambda L: _lstm(L)(L.tensor(rand(T, B, I, dtype="float64")))),
    ("state_dtype_mismatch", lambda L: L.nn.GRU(I, H)(L.tensor(rand(T, B, I)),
                                                      L.tensor(rand(1, B, H, dtype="float64")))),
    ("empty_sequence", lambda L: _lstm(L)(L.tensor(rand(0, B, I)))),
    ("bad_nonlinearity", lambda L: L.nn.RNN(I, H, nonlinearity="sigmoid")),
    ("rnn_proj_size", lambda L: L.nn.RNN(I, H, proj_size=2)),
    ("gru_proj_size", lambda L: L.nn.GRU(I, H, proj_size=2)),
    ("proj_size_too_big", lambda L: _lstm(L, proj_size=H)),
    ("negative_proj_size", lambda L: _lstm(L, proj_size=-1)),
    ("dropout_range", lambda L: _lstm(L, dropout=1.5)),
    ("dropout_bool", lambda L: _lstm(L, dropout=True)),
    ("float_hidden_size", lambda L: L.nn.LSTM(I, 4.0)),
    ("zero_hidden_size", lambda L: L.nn.LSTM(I, 0)),
    ("zero_layers", lambda L: _lstm(L, 0)),
    ("bias_not_bool", lambda L: _lstm(L, bias=1)),
    ("unknown_kwarg", lambda L: L.nn.RNN(I, H, foo=1)),
    ("cell_input_rank", lambda L: L.nn.RNNCell(I, H)(L.tensor(rand(1, B, I)))),
    ("cell_input_size", lambda L: L.nn.RNNCell(I, H)(L.tensor(rand(B, I + 1)))),
    ("cell_hidden_batch", lambda L: L.nn.GRUCell(I, H)(L.tensor(rand(B, I)), L.tensor(rand(B + 1, H)))),
    ("cell_hidden_size", lambda L: L.nn.RNNCell(I, H)(L.tensor(rand(B, I)), L.tensor(rand(B, H + 1)))),
    ("cell_hidden_rank", lambda L: L.nn.GRUCell(I, H)(L.tensor(rand(B, I)), L.tensor(rand(1, B, H)))),
    ("lstm_cell_state_rank", lambda L: L.nn.LSTMCell(I, H)(L.tensor(rand(B, I)),
                                                           (L.tensor(rand(B, H)), L.tensor(rand(1, B, H))))),
    ("lstm_cell_one_state", lambda L: L.nn.LSTMCell(I, H)(L.tensor(rand(B, I)), (L.tensor(rand(B, H)),))),
    ("cell_dtype", lambda L: L.nn.GRUCell(I, H)(L.tensor(rand(B, I, dtype="float64")))),
    ("cell_bad_nonlinearity", lambda L: L.nn.RNNCell(I, H, nonlinearity="x")(L.tensor(rand(B, I)))),
    ("pack_unsorted", lambda L: L.nn.utils.rnn.pack_padded_sequence(L.tensor(rand(T, 3, I)), [2, 4, 1])),
    ("pack_zero_length", lambda L: L.nn.utils.rnn.pack_padded_sequence(L.tensor(rand(T, 3, I)), [4, 2, 0])),
    ("pack_length_count", lambda L: L.nn.utils.rnn.pack_padded_sequence(L.tensor(rand(T, 3, I)), [4, 2])),
    ("pad_packed_total_length", lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_padded_sequence(L.tensor(rand(T, 3, I)), [4, 2, 1]), total_length=3)),
    ("pad_sequence_empty", lambda L: L.nn.utils.rnn.pad_sequence([])),
    ("pad_sequence_side", lambda L: L.nn.utils.rnn.pad_sequence([L.tensor(rand(2))], padding_side="middle")),
    ("pad_sequence_trailing", lambda L: L.nn.utils.rnn.pad_sequence([L.tensor(rand(2, 3)),
                                                                    L.tensor(rand(2, 2))])),
]


@pytest.mark.parametrize("name,call", [pytest.param(*c, marks=[pytest.mark.float64] if "dtype" in c[0] else [])
                                       for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_bad_input_raises_torchs_exception_type(backend, name, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call)


# ---------------------------------------------------------------- training


def sequence_regressor(lib):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = lib.nn.LSTM(I, 6, num_layers=2, batch_first=True, bidirectional=True)
            self.cell = lib.nn.GRUCell(12, 5)
            self.head = lib.nn.Linear(5, 1)

        def forward(self, x):
            out, (h, c) = self.rnn(x)
            return self.head(self.cell(out[:, -1], h[-1].repeat(1, 2)[:, :5]))
    return Model()


def test_sgd_training_matches_torch(backend):
    torch.manual_seed(0)
    tm, wm = sequence_regressor(torch), sequence_regressor(wg)
    load_torch_weights(tm, wm)
    x, y = rand(4, 5, I), rand(4, 1, seed=3)
    t_losses = sgd_losses(tm, lambda m: torch.nn.functional.mse_loss(m(torch.tensor(x)), torch.tensor(y)), 5, 0.2,
                          torch.optim)
    w_losses = sgd_losses(wm, lambda m: wg.nn.functional.mse_loss(m(wg.tensor(x)), wg.tensor(y)), 5, 0.2, wg.optim)
    assert t_losses[-1] < t_losses[0]
    np.testing.assert_allclose(w_losses, t_losses, rtol=1e-4)
