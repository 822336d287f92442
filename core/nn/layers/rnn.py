"""Recurrent layers: RNN, LSTM, GRU and their one-step cells (PyTorch's parameter names, shapes,
order, init, forward signatures and errors, so PyTorch's state dicts load and its programs run).

Each layer is composed from ops: one matmul projects every time step's input at once; the loop
over time then adds the hidden state's projection and applies the cell (a row of ``_CELLS``).
Packed sequences run the same loop over shrinking batches (``nn.utils.rnn``).
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import functional as F
from .. import init
from ...ops.creation import empty, zeros
from ...ops.movement import cat, stack
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, host_batch_sizes


# ------------------------------------------------------------------ one time step of each cell
# gi: the input's projection x @ W_ih^T + b_ih; gh: the hidden state's, h @ W_hh^T + b_hh.
# Each returns (h', c'), c' None but for the LSTM; the arithmetic follows ATen's cells.

def _tanh_cell(gi, gh, h, c):
    return (gi + gh).tanh(), None


def _relu_cell(gi, gh, h, c):
    return (gi + gh).relu(), None


def _lstm_cell(gi, gh, h, c):
    i, f, g, o = (gi + gh).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_cell(gi, gh, h, c):
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (h - n) * z + n, None


_CELLS = {"RNN_TANH": _tanh_cell, "RNN_RELU": _relu_cell, "LSTM": _lstm_cell, "GRU": _gru_cell}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_NONLINEARITIES = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}


def _step(mode, x_proj, h, c, w_hh, b_hh, w_hr=None):
    """One step of cell ``mode`` given the input's projection; ``w_hr`` projects an LSTM's output."""
    h, c = _CELLS[mode](x_proj, F.linear(h, w_hh, b_hh), h, c)
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _run_direction(mode, data, batch_sizes, h, c, weights, reverse):
    """One layer in one direction over time-major rows ``data`` [sum(batch_sizes), in] (step t holds
    rows of the first batch_sizes[t] sequences, as a PackedSequence's data): (output rows, h_n, c_n).
    Sequences that have ended keep their last state (the batch shrinks from the end of h)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    steps = F.linear(data, w_ih, b_ih).split(batch_sizes, 0)
    full, outs = h.shape[0], [None] * len(batch_sizes)
    for t in (reversed(range(len(batch_sizes))) if reverse else range(len(batch_sizes))):
        n = batch_sizes[t]
        h_t, c_t = (h, c) if n == full else (h[:n], None if c is None else c[:n])
        h_t, c_t = _step(mode, steps[t], h_t, c_t, w_hh, b_hh, w_hr)
        outs[t] = h_t
        h = h_t if n == full else cat([h_t, h[n:]], 0)
        c = c_t if n == full or c is None else cat([c_t, c[n:]], 0)
    return cat(outs, 0), h, c


def _check_size(what, value, minimum=1):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} should be of type int, got: {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{what} must be greater than zero")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the per-layer, per-direction weights (``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}`` with an LSTM's
    ``proj_size``, each with ``_reverse`` for the backward direction), registered in PyTorch's
    order and initialised uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
    ``flatten_parameters()`` is accepted and does nothing (cuDNN's weight layout has no meaning here).

    >>> import webgrad as wg
    >>> [n for n, _ in wg.nn.GRU(3, 4, bidirectional=True).named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self._check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self._flat_weights_names, self._all_weights = [], []
        directions = 2 if bidirectional else 1
        out_size = proj_size or hidden_size
        for layer in range(num_layers):
            for direction in range(directions):
                layer_in = input_size if layer == 0 else out_size * directions
                names = self._register_layer(layer, "_reverse" if direction else "", layer_in, device, dtype)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @staticmethod
    def _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             f"element being zeroed, got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=4)
        for what, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{what} should be of type bool, got: {type(value).__name__}")
        _check_size("input_size", input_size)
        _check_size("hidden_size", hidden_size)
        _check_size("num_layers", num_layers)
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError(f"proj_size has to be smaller than hidden_size, got proj_size={proj_size} and "
                             f"hidden_size={hidden_size}")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")

    def _register_layer(self, layer, suffix, layer_in, device, dtype):
        gates, out_size = _GATES[self.mode] * self.hidden_size, self.proj_size or self.hidden_size
        shapes = {"weight_ih": (gates, layer_in), "weight_hh": (gates, out_size)}
        if self.bias:
            shapes.update(bias_ih=(gates,), bias_hh=(gates,))
        if self.proj_size:
            shapes["weight_hr"] = (self.proj_size, self.hidden_size)
        names = []
        for kind, shape in shapes.items():
            names.append(f"{kind}_l{layer}{suffix}")
            setattr(self, names[-1], Parameter(empty(*shape, device=device, dtype=dtype)))
        return names

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """Does nothing: PyTorch packs the weights for cuDNN here; webgrad has no such layout."""

    @property
    def all_weights(self):
        """The parameters as a list per (layer, direction), in registration order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    # ---------------------------------------------------------------- forward
    def _layer_weights(self, index):
        names = self._all_weights[index]
        get = {name.split("_l")[0]: getattr(self, name) for name in names}.get
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _state_sizes(self, batch):
        directions = 2 if self.bidirectional else 1
        return ((self.num_layers * directions, batch, self.proj_size or self.hidden_size),
                (self.num_layers * directions, batch, self.hidden_size))

    def _check_input(self, data, batch_sizes):
        weight = self.weight_ih_l0
        if data.dtype is not weight.dtype:
            raise ValueError(f"{type(self).__name__}: input dtype ({data.dtype.name}) does not match weight dtype "
                             f"({weight.dtype.name}). Convert input: input.to({weight.dtype.name}), or convert "
                             f"model: model.to({data.dtype.name})")
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"{type(self).__name__}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        if not batch_sizes:
            raise RuntimeError(f"{type(self).__name__}: Expected sequence length to be larger than 0 in RNN")

    def _check_state(self, state, expected, what, dtype):
        if tuple(state.shape) != expected:
            raise RuntimeError(f"{type(self).__name__}: Expected {what} size {expected}, got {list(state.shape)}")
        if state.dtype is not dtype:
            raise RuntimeError(f"{type(self).__name__}: {what} dtype {state.dtype.name} does not match input dtype "
                               f"{dtype.name}")

    def _run(self, data, batch_sizes, h0, c0):
        """All layers over packed-layout rows: (output rows, h_n, c_n or None)."""
        directions = 2 if self.bidirectional else 1
        hs, cs = [], []
        for layer in range(self.num_layers):
            if layer and self.training and self.dropout:
                data = F.dropout(data, self.dropout, True)
            outs = []
            for d in range(directions):
                k = layer * directions + d
                out, h, c = _run_direction(self.mode, data, batch_sizes, h0[k], None if c0 is None else c0[k],
                                           self._layer_weights(k), reverse=d == 1)
                outs.append(out), hs.append(h), cs.append(c)
            data = outs[0] if directions == 1 else cat(outs, 1)
        return data, stack(hs, 0), (stack(cs, 0) if c0 is not None else None)

    def _forward(self, input, hx, hx_batched):
        """The shared forward: ``hx`` is a tuple of states (one, or (h, c) for the LSTM) or None;
        ``hx_batched(hx, batched)`` checks their ranks as PyTorch does. Returns (output, states)."""
        name, is_lstm = type(self).__name__, self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            data, batch_sizes = input.data, host_batch_sizes(input)
            unbatched, batch = False, batch_sizes[0] if batch_sizes else 0
            if hx is not None and input.sorted_indices is not None:
                hx = tuple(s.index_select(1, input.sorted_indices) for s in hx)
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead")
            unbatched = input.ndim == 2
            if hx is not None:
                hx = hx_batched(hx, not unbatched)
            x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
            batch = x.shape[1]
            batch_sizes, data = [batch] * x.shape[0], x.reshape(x.shape[0] * batch, x.shape[2])
        if data.ndim != 2:
            raise RuntimeError(f"{name}: input must have 2 dimensions, got {data.ndim}")
        self._check_input(data, batch_sizes)
        sizes = self._state_sizes(batch)
        if hx is None:
            hx = tuple(zeros(s, dtype=data.dtype, backend=data._backend) for s in sizes[:1 + is_lstm])
        whats = ("hidden[0]", "hidden[1]") if is_lstm else ("hidden",)
        for state, expected, what in zip(hx, sizes if is_lstm else sizes[:1], whats):
            self._check_state(state, expected, what, data.dtype)
        out, h, c = self._run(data, batch_sizes, hx[0], hx[1] if is_lstm else None)
        states = (h, c) if is_lstm else (h,)
        if isinstance(input, PackedSequence):
            if input.unsorted_indices is not None:
                states = tuple(s.index_select(1, input.unsorted_indices) for s in states)
            return input._replace_data(out), states
        out = out.reshape(len(batch_sizes), batch, out.shape[-1])
        if unbatched:
            return out.squeeze(1), tuple(s.squeeze(1) for s in states)
        return (out.transpose(0, 1) if self.batch_first else out), states

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        extras = (("proj_size", self.proj_size, 0), ("num_layers", self.num_layers, 1), ("bias", self.bias, True),
                  ("batch_first", self.batch_first, False), ("dropout", self.dropout, 0),
                  ("bidirectional", self.bidirectional, False))
        return s + "".join(f", {k}={v}" for k, v, default in extras if v != default)


def _single_state_ranks(name):
    """PyTorch's rank check of a lone hidden state (RNN, GRU): 3-D when batched, 2-D when not."""
    def check(hx, batched):
        (h,) = hx
        if batched and h.ndim != 3:
            raise RuntimeError(f"{name}: For batched 3-D input, hx should also be 3-D but got {h.ndim}-D tensor")
        if not batched and h.ndim != 2:
            raise RuntimeError(f"{name}: For unbatched 2-D input, hx should also be 2-D but got {h.ndim}-D tensor")
        return hx if batched else (h.unsqueeze(1),)
    return check


def _lstm_state_ranks(hx, batched):
    h, c = hx[0], hx[1]
    want = 3 if batched else 2
    if h.ndim != want or c.ndim != want:
        kind = "batched 3-D" if batched else "unbatched 2-D"
        raise RuntimeError(f"LSTM: For {kind} input, hx and cx should also be {want}-D but got "
                           f"({h.ndim}-D, {c.ndim}-D) tensors")
    return (h, c) if batched else (h.unsqueeze(1), c.unsqueeze(1))


def _no_proj_size(cls, kwargs):
    if "proj_size" in kwargs:
        raise ValueError(f"{cls}: proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{cls}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu) per layer.
    ``forward(input, hx=None)`` takes [L, N, H_in] ([N, L, H_in] with ``batch_first``, [L, H_in]
    unbatched, or a PackedSequence) and returns (output, h_n).

    >>> import webgrad as wg
    >>> out, h = RNN(3, 5, num_layers=2)(wg.randn(7, 2, 3))
    >>> out.shape, h.shape
    (webgrad.Size([7, 2, 5]), webgrad.Size([2, 2, 5]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj_size("RNN", kwargs)
        if nonlinearity not in _NONLINEARITIES:
            raise ValueError(f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(_NONLINEARITIES[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        out, (h,) = self._forward(input, None if hx is None else (hx,), _single_state_ranks("RNN"))
        return out, h


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o (in that order in the weights), cell state c and,
    with ``proj_size``, a projected hidden state. ``forward(input, hx=None)`` with ``hx = (h_0, c_0)``
    returns (output, (h_n, c_n)).

    >>> import webgrad as wg
    >>> out, (h, c) = LSTM(3, 5, batch_first=True, proj_size=2)(wg.randn(2, 7, 3))
    >>> out.shape, h.shape, c.shape
    (webgrad.Size([2, 7, 2]), webgrad.Size([1, 2, 2]), webgrad.Size([1, 2, 5]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input, hx=None):
        out, (h, c) = self._forward(input, None if hx is None else tuple(hx), _lstm_state_ranks)
        return out, (h, c)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n (in that order in the weights),
    ``h' = (1 - z) * n + z * h`` with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.
    ``forward(input, hx=None)`` returns (output, h_n).

    >>> import webgrad as wg
    >>> out, h = GRU(3, 5, bidirectional=True)(wg.randn(7, 3))
    >>> out.shape, h.shape
    (webgrad.Size([7, 10]), webgrad.Size([2, 5]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj_size("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def forward(self, input, hx=None):
        out, (h,) = self._forward(input, None if hx is None else (hx,), _single_state_ranks("GRU"))
        return out, h


# ------------------------------------------------------------------ cells


class RNNCellBase(Module):
    """What the one-step cells share: ``weight_ih`` [gates * hidden, input], ``weight_hh``
    [gates * hidden, hidden], ``bias_ih``/``bias_hh`` (None without ``bias``), PyTorch's uniform init.

    >>> import webgrad as wg
    >>> [n for n, _ in wg.nn.LSTMCell(3, 4).named_parameters()]
    ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
    """

    mode = ""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **kw))
        for name in ("bias_ih", "bias_hh"):
            self.register_parameter(name, Parameter(empty(num_chunks * hidden_size, **kw)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check_rank(self, t, what):
        if t.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected {what} to be 1D or 2D, got {t.ndim}D instead")

    def _check_step(self, x, states):
        name = type(self).__name__
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {x.shape[1]} expected "
                               f"{self.input_size}")
        for i, s in enumerate(states):
            if s.ndim != 2 or s.shape[0] != x.shape[0]:
                raise RuntimeError(f"{name}: Input batch size {x.shape[0]} doesn't match hidden{i} of shape "
                                   f"{tuple(s.shape)}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"{name}: hidden{i} has inconsistent hidden_size: got {s.shape[1]}, expected "
                                   f"{self.hidden_size}")
            if s.dtype is not x.dtype:
                raise RuntimeError(f"{name}: hidden{i} dtype {s.dtype.name} does not match input dtype "
                                   f"{x.dtype.name}")
        if x.dtype is not self.weight_ih.dtype:
            raise RuntimeError(f"{name}: input dtype {x.dtype.name} does not match weight dtype "
                               f"{self.weight_ih.dtype.name}")

    def _cell(self, input, states, count):
        """Batch 1-D input (and states), check, run one step: the new states, unbatched again if need be."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if states is None:
            states = (zeros(x.shape[0], self.hidden_size, dtype=x.dtype, backend=x._backend),) * count
        elif not batched:
            states = tuple(s.unsqueeze(0) for s in states)
        mode = self.mode                # an unknown nonlinearity fails first, as in PyTorch
        self._check_step(x, states)
        proj = F.linear(x, self.weight_ih, self.bias_ih)
        new = _step(mode, proj, states[0], states[-1] if count == 2 else None, self.weight_hh, self.bias_hh)
        new = new[:count]
        return new if batched else tuple(s.squeeze(0) for s in new)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        s += "" if self.bias else ", bias=False"
        return s + ("" if getattr(self, "nonlinearity", "tanh") == "tanh" else f", nonlinearity={self.nonlinearity}")


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu);
    ``forward(input, hx=None)`` with input [N, H_in] or [H_in].

    >>> import webgrad as wg
    >>> RNNCell(3, 4)(wg.randn(2, 3)).shape
    webgrad.Size([2, 4])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    @property
    def mode(self):
        if self.nonlinearity not in _NONLINEARITIES:
            raise RuntimeError(f"RNNCell: Unknown nonlinearity: {self.nonlinearity}")
        return _NONLINEARITIES[self.nonlinearity]

    def forward(self, input, hx=None):
        self._check_rank(input, "input")
        if hx is not None:
            self._check_rank(hx, "hidden")
        return self._cell(input, None if hx is None else (hx,), 1)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, hx=None)`` with ``hx = (h, c)`` returns ``(h', c')``.

    >>> import webgrad as wg
    >>> h, c = LSTMCell(3, 4)(wg.randn(2, 3))
    >>> h.shape, c.shape
    (webgrad.Size([2, 4]), webgrad.Size([2, 4]))
    """

    mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        self._check_rank(input, "input")
        if hx is not None:
            for i, s in enumerate(hx):
                self._check_rank(s, f"hx[{i}]")
            if len(hx) != 2:
                raise RuntimeError(f"LSTMCell: lstm_cell expects two hidden states, got {len(hx)}")
        return self._cell(input, None if hx is None else tuple(hx), 2)


class GRUCell(RNNCellBase):
    """One GRU step; ``forward(input, hx=None)`` returns ``h'``.

    >>> import webgrad as wg
    >>> GRUCell(3, 4)(wg.randn(3)).shape
    webgrad.Size([4])
    """

    mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        self._check_rank(input, "input")
        if hx is not None:
            self._check_rank(hx, "hidden")
        return self._cell(input, None if hx is None else (hx,), 1)[0]


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
