"""webgrad's CPU benchmark against PyTorch, hand-written numpy and a minimal autograd floor.

    python bench/bench_cpu.py            # full run (a few minutes on 2 cores)
    python bench/bench_cpu.py --quick    # a smoke run: fewer, shorter repeats

Measures, each as the median over repeats, in one process:
  * chain:  a 10-op elementwise chain on tiny tensors (8 elements) with requires_grad,
            forward + backward(), reported per op;
  * no-grad op: one ``a + b`` on 1-element tensors without grad;
  * MLP step: 784-256-10, ReLU, cross-entropy, SGD, at batch 128 and 1024;
  * CNN step: a digits-sized conv net (8x8 input, conv 3x3 to 8 channels, ReLU, 2x2 max-pool,
            linear to 10, cross-entropy, SGD) at batch 64 (webgrad and PyTorch);
  * GPT step: a nanoGPT-style model (2 pre-norm layers, 4 heads, 128 wide, block 64, GELU MLP,
            causal ``F.scaled_dot_product_attention``) trained with AdamW at batch 16, one model
            definition for both libraries, from PyTorch's initial weights (webgrad and PyTorch);
  * masks:  ``g[mask] = 0``, ``g[mask]`` and ``g[mask] = values`` on a 256x256 float32 ``g`` with
            ``mask = g > 0`` (half True, at random places), without grad (webgrad, PyTorch, numpy);
and, each in a fresh process, the peak RSS of 200 MLP steps (batch 128) for webgrad and PyTorch.
Contenders: webgrad (cpu backend), PyTorch (when importable; its thread count set to numpy's
BLAS thread count), hand-written numpy (forward and backward by hand), and for the tiny-tensor
rows bench/micrograd_floor.py, a closure-based autograd over numpy; for the MLP rows, "blas":
the step's five matrix products alone, in numpy (a floor under any autograd that computes with
numpy's BLAS). Prints a markdown table with each contender's median time and webgrad's ratio to
each (the median over rounds of the round's ratio; lower is better for webgrad), then issue 7's
targets with webgrad's ratio, pass/short, and for the MLP targets the ratio that "blas" gets
(the best ratio any numpy-backed step could reach on this machine). glibc malloc's thresholds
are pinned for the run (``pin_malloc``): left to move, they make a contender's step page-fault
or not depending on what ran before it.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import importlib
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import micrograd_floor  # noqa: E402

RSS_CHILD = os.environ.get("WEBGRAD_BENCH_RSS_CHILD")   # a peak-RSS child imports only its contender
wg = None if RSS_CHILD == "torch" else importlib.import_module("webgrad")
try:
    if RSS_CHILD == "webgrad":
        raise ImportError
    import torch
except ImportError:  # PyTorch is optional: its column reads "-"
    torch = None

CHAIN_OPS, CHAIN_N = 10, 8
D_IN, D_HIDDEN, D_OUT, LR = 784, 256, 10, 0.01
PAUSE_S = 0.2   # OpenBLAS threads spin after each call: let them sleep between contenders


# ---------------------------------------------------------------- timing

def calibrate(fn, min_time):
    """How many calls of ``fn()`` take about ``min_time`` seconds (after a warm-up call)."""
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        t = time.perf_counter() - t0
        if t >= min_time / 4 or number >= 1 << 20:
            return max(1, int(number * min_time / max(t, 1e-9)))
        number *= 2


def measure(contenders, repeats, min_time, pause):
    """Median seconds per call for each of {name: fn} (see ``measure_rounds``)."""
    return {name: statistics.median(t) for name, t in measure_rounds(contenders, repeats, min_time, pause).items()}


def measure_rounds(contenders, repeats, min_time, pause):
    """Seconds per call for each of {name: fn}, one figure per round. Repeats are interleaved (every
    contender once per round) so that a change in machine load hits all of them alike, with a pause
    before each timing so that the previous contender's BLAS threads have stopped spinning.
    The objects alive before timing are frozen out of the cyclic GC: in one process holding
    PyTorch's ~150k Python objects, a full collection triggered by a Python-level contender's
    allocations would scan them all (~80 ms each, ~0.8 ms per CNN step on average), a cost that
    belongs to sharing the process, not to the contender."""
    numbers = {name: calibrate(fn, min_time) for name, fn in contenders.items()}
    times = {name: [] for name in contenders}
    gc.collect()
    gc.freeze()   # what exists now (the libraries' modules, the data) stays out of the cyclic GC's scans
    try:
        for _ in range(repeats):
            for name, fn in contenders.items():
                gc.collect()
                time.sleep(pause)
                n = numbers[name]
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                times[name].append((time.perf_counter() - t0) / n)
    finally:
        gc.unfreeze()
    return times


# ---------------------------------------------------------------- tiny-tensor chain

def chain(x, w):
    """Ten elementwise ops, written once for every contender that has tensor methods."""
    a = x * w           # 1
    b = a + x           # 2
    c = b.tanh()        # 3
    d = c * c           # 4
    e = d - w           # 5
    f = e.exp()         # 6
    g = f * x           # 7
    h = g + w           # 8
    i = h.relu()        # 9
    return i.sum()      # 10


def chain_numpy(x, w):
    """The same chain with its backward written by hand: (dx, dw)."""
    a = x * w
    b = a + x
    c = np.tanh(b)
    d = c * c
    e = d - w
    f = np.exp(e)
    g = f * x
    h = g + w
    i = np.maximum(h, 0)
    i.sum()
    dh = (h > 0).astype(x.dtype)
    de = dh * x * f
    db = de * 2 * c * (1 - c * c)
    dx = dh * f + db + db * w
    dw = dh - de + db * x
    return dx, dw


def chain_step(make):
    x, w = make()

    def step():
        x.grad = w.grad = None
        chain(x, w).backward()
    return step


def chain_contenders(x0, w0):
    out = {}
    if wg is not None:   # (a child process may import only PyTorch)
        out["webgrad"] = chain_step(lambda: (wg.tensor(x0, requires_grad=True), wg.tensor(w0, requires_grad=True)))
    if torch is not None:
        out["torch"] = chain_step(lambda: (torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)))
    out["numpy"] = lambda: chain_numpy(x0, w0)
    out["floor"] = chain_step(lambda: (micrograd_floor.Value(x0), micrograd_floor.Value(w0)))
    return out


def check_chain(x0, w0):
    """Every contender computes the same gradients (a benchmark of wrong code proves nothing)."""
    ref = chain_numpy(x0.astype(np.float64), w0.astype(np.float64))
    x, w = wg.tensor(x0, requires_grad=True), wg.tensor(w0, requires_grad=True)
    chain(x, w).backward()
    got = [x.grad.numpy(), w.grad.numpy()]
    fx, fw = micrograd_floor.Value(x0), micrograd_floor.Value(w0)
    chain(fx, fw).backward()
    for name, pair in (("webgrad", got), ("floor", [fx.grad, fw.grad])):
        for g, r in zip(pair, ref):
            assert np.allclose(g, r, rtol=1e-4, atol=1e-5), f"{name} chain gradient differs from numpy's"


# ---------------------------------------------------------------- single op without grad

def nograd_contenders():
    a0, b0 = np.array([1.5], np.float32), np.array([2.5], np.float32)
    out = {}
    if wg is not None:
        wa, wb = wg.tensor(a0), wg.tensor(b0)
        out["webgrad"] = lambda: wa + wb
    if torch is not None:
        ta, tb = torch.tensor(a0), torch.tensor(b0)
        out["torch"] = lambda: ta + tb
    out["numpy"] = lambda: a0 + b0
    fa, fb = micrograd_floor.Value(a0), micrograd_floor.Value(b0)
    out["floor"] = lambda: fa + fb
    return out


# ---------------------------------------------------------------- MLP training step

def mlp_data(batch, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, D_IN), dtype=np.float32)
    y = rng.integers(0, D_OUT, batch).astype(np.int32)
    params = [(rng.standard_normal((D_IN, D_HIDDEN), dtype=np.float32) * np.float32(D_IN ** -0.5)),
              np.zeros(D_HIDDEN, np.float32),
              (rng.standard_normal((D_HIDDEN, D_OUT), dtype=np.float32) * np.float32(D_HIDDEN ** -0.5)),
              np.zeros(D_OUT, np.float32)]
    return x, y, params


def webgrad_cross_entropy():
    """webgrad's cross_entropy when it exists; else log-softmax written with basic ops."""
    F = wg.nn.functional
    if hasattr(F, "cross_entropy"):
        return "F.cross_entropy", lambda logits, y, onehot: F.cross_entropy(logits, y)

    def basic(logits, y, onehot):
        z = logits - logits.amax(dim=1, keepdim=True).detach()
        logp = z - z.exp().sum(dim=1, keepdim=True).log()
        return (logp * onehot).sum() * (-1.0 / logits.shape[0])
    return "basic ops (exp, log, sum, amax, one-hot mul)", basic


def mlp_webgrad(batch):
    x0, y0, p0 = mlp_data(batch)
    x, y = wg.tensor(x0), wg.tensor(y0)
    onehot = wg.tensor(np.eye(D_OUT, dtype=np.float32)[y0])
    w1, b1, w2, b2 = params = [wg.tensor(p, requires_grad=True) for p in p0]
    _, loss_fn = webgrad_cross_entropy()

    def step():
        loss = loss_fn((x @ w1 + b1).relu() @ w2 + b2, y, onehot)
        loss.backward()
        with wg.no_grad():
            for p in params:
                p.sub_(p.grad * LR)
                p.grad = None
        return loss
    return step


def mlp_torch(batch):
    x0, y0, p0 = mlp_data(batch)
    x, y = torch.from_numpy(x0), torch.from_numpy(y0).long()
    w1, b1, w2, b2 = params = [torch.tensor(p, requires_grad=True) for p in p0]

    def step():
        loss = torch.nn.functional.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(p.grad * LR)
                p.grad = None
        return loss
    return step


def cross_entropy_numpy(logits, y, rows):
    """(mean softmax cross-entropy, its gradient w.r.t. ``logits``), written by hand in numpy;
    ``rows`` is ``np.arange(len(y))``."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    loss = np.log(s[:, 0]).mean() - z[rows, y].mean()
    dlogits = e / s
    dlogits[rows, y] -= 1
    dlogits /= len(y)
    return loss, dlogits


def mlp_numpy(batch):
    x, y, params = mlp_data(batch)
    w1, b1, w2, b2 = params
    rows = np.arange(batch)

    def step():
        h = x @ w1 + b1
        r = np.maximum(h, 0)
        loss, dlogits = cross_entropy_numpy(r @ w2 + b2, y, rows)
        dr = dlogits @ w2.T
        dh = dr * (h > 0)
        for p, g in zip(params, (x.T @ dh, dh.sum(axis=0), r.T @ dlogits, dlogits.sum(axis=0))):
            p -= LR * g
        return loss
    return step


def mlp_blas(batch):
    """The MLP step's five matrix products alone, in numpy, and nothing else: a floor under the
    step of any autograd that computes with numpy's BLAS (webgrad's cpu backend among them), so
    its ratio to PyTorch is the best such an autograd could reach on this machine."""
    x, _, (w1, _, w2, _) = mlp_data(batch)
    r = np.maximum(x @ w1, 0)                       # stands in for the hidden activation and its gradient
    dlogits = np.full((batch, D_OUT), 1 / batch, np.float32)

    def step():
        return (x @ w1, r @ w2,                                 # forward: the two layers
                dlogits @ w2.T, x.T @ r, r.T @ dlogits)         # backward: the hidden gradient, two weights'
    return step


def check_mlp(batch):
    """The three contenders agree on the first steps' losses."""
    losses = {}
    for name, make in mlp_makers().items():
        step = make(batch)
        losses[name] = [float(step() if name == "numpy" else step().item()) for _ in range(3)]
    ref = losses["numpy"]
    for name, got in losses.items():
        assert np.allclose(got, ref, rtol=1e-3), f"{name} MLP losses {got} differ from numpy's {ref}"


def mlp_makers():
    makers = {"webgrad": mlp_webgrad}
    if torch is not None:
        makers["torch"] = mlp_torch
    makers["numpy"] = mlp_numpy
    return makers


# ---------------------------------------------------------------- CNN training step

CNN_BATCH, CNN_SIDE, CNN_CHANNELS = 64, 8, 8


def cnn_data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((CNN_BATCH, 1, CNN_SIDE, CNN_SIDE), dtype=np.float32)
    y = rng.integers(0, D_OUT, CNN_BATCH).astype(np.int32)
    flat = CNN_CHANNELS * (CNN_SIDE // 2) ** 2
    params = [rng.standard_normal((CNN_CHANNELS, 1, 3, 3), dtype=np.float32) * np.float32(1 / 3),
              np.zeros(CNN_CHANNELS, np.float32),
              rng.standard_normal((D_OUT, flat), dtype=np.float32) * np.float32(flat ** -0.5),
              np.zeros(D_OUT, np.float32)]
    return x, y, params


def cnn_step(lib, F, x, y, params, no_grad):
    """One SGD step of the conv net, written once for webgrad and PyTorch (same functional names)."""
    k, kb, w, b = params

    def step():
        h = F.max_pool2d(F.relu(F.conv2d(x, k, kb, padding=1)), 2)
        loss = F.cross_entropy(F.linear(h.reshape(CNN_BATCH, -1), w, b), y)
        loss.backward()
        with no_grad():
            for p in params:
                p.sub_(p.grad * LR)
                p.grad = None
        return loss
    return step


def cnn_makers():
    def webgrad_cnn():
        x, y, p = cnn_data()
        return cnn_step(wg, wg.nn.functional, wg.tensor(x), wg.tensor(y),
                        [wg.tensor(a, requires_grad=True) for a in p], wg.no_grad)
    makers = {"webgrad": webgrad_cnn}
    if torch is not None:
        def torch_cnn():
            x, y, p = cnn_data()
            return cnn_step(torch, torch.nn.functional, torch.from_numpy(x), torch.from_numpy(y).long(),
                            [torch.tensor(a, requires_grad=True) for a in p], torch.no_grad)
        makers["torch"] = torch_cnn
    return makers


def check_cnn():
    losses = {name: [float(step().item()) for step in [make()] for _ in range(3)]
              for name, make in cnn_makers().items()}
    if "torch" in losses:
        assert np.allclose(losses["webgrad"], losses["torch"], rtol=1e-3), f"CNN losses differ: {losses}"


# ---------------------------------------------------------------- GPT-style training step

GPT_LAYERS, GPT_HEADS, GPT_WIDTH, GPT_BLOCK, GPT_BATCH, GPT_VOCAB = 2, 4, 128, 64, 16, 65


def make_gpt(lib):
    """A nanoGPT-style model (pre-norm blocks: causal self-attention through
    ``F.scaled_dot_product_attention``, a GELU MLP; tied to nothing), written once for webgrad and
    PyTorch: ``lib`` is either module, whose ``nn`` and ``nn.functional`` share PyTorch's names."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(GPT_WIDTH), nn.LayerNorm(GPT_WIDTH)
            self.qkv, self.proj = nn.Linear(GPT_WIDTH, 3 * GPT_WIDTH), nn.Linear(GPT_WIDTH, GPT_WIDTH)
            self.fc, self.out = nn.Linear(GPT_WIDTH, 4 * GPT_WIDTH), nn.Linear(4 * GPT_WIDTH, GPT_WIDTH)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = [z.view(b, t, GPT_HEADS, c // GPT_HEADS).transpose(1, 2) for z in (q, k, v)]
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(GPT_VOCAB, GPT_WIDTH), nn.Embedding(GPT_BLOCK, GPT_WIDTH)
            self.blocks = nn.ModuleList([Block() for _ in range(GPT_LAYERS)])
            self.ln, self.head = nn.LayerNorm(GPT_WIDTH), nn.Linear(GPT_WIDTH, GPT_VOCAB)

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.reshape(-1, GPT_VOCAB), targets.reshape(-1))
    return GPT()


def gpt_data(seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, GPT_VOCAB, (GPT_BATCH, GPT_BLOCK + 1))
    return idx[:, :-1].copy(), idx[:, 1:].copy()


def gpt_step(lib):
    """One AdamW training step of the GPT model on a fixed batch, for ``lib`` (webgrad or torch),
    from PyTorch's initial weights (seed 0), so that both libraries start from the same model."""
    torch.manual_seed(0)
    state = {k: v.detach().numpy().copy() for k, v in make_gpt(torch).state_dict().items()}
    model = make_gpt(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    x, y = (lib.tensor(a) for a in gpt_data())
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def gpt_makers():
    """The GPT step needs PyTorch for its initial weights: without it there is no row."""
    return {} if torch is None else {"webgrad": lambda: gpt_step(wg), "torch": lambda: gpt_step(torch)}


def check_gpt():
    losses = {name: [float(step().item()) for step in [make()] for _ in range(3)]
              for name, make in gpt_makers().items()}
    if losses:
        assert np.allclose(losses["webgrad"], losses["torch"], rtol=1e-4), f"GPT losses differ: {losses}"


# ---------------------------------------------------------------- boolean masks (issue 17)

MASK_SIDE = 256
MASK_OPS = {   # label -> the op on (g, mask, values), written once for every contender
    "g[mask] = 0": lambda g, m, v: g.__setitem__(m, 0),
    "g[mask]": lambda g, m, v: g[m],
    "g[mask] = values": lambda g, m, v: g.__setitem__(m, v),
}


def mask_data(seed=0):
    """A 256x256 float32 ``g``, ``mask = g > 0`` (half True, at random places: no run of True for a
    branch predictor to learn) and one value per True element."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((MASK_SIDE, MASK_SIDE), dtype=np.float32)
    m = g > 0
    return g, m, rng.standard_normal(int(m.sum()), dtype=np.float32)


def mask_contenders(op):
    g, m, v = mask_data()
    out = {}
    if wg is not None:
        args = wg.tensor(g), wg.tensor(m), wg.tensor(v)
        out["webgrad"] = lambda: op(*args)
    if torch is not None:
        targs = torch.from_numpy(g.copy()), torch.from_numpy(m), torch.from_numpy(v)
        out["torch"] = lambda: op(*targs)
    nargs = g.copy(), m, v
    out["numpy"] = lambda: op(*nargs)
    return out


def check_masks():
    """webgrad's and PyTorch's results (the selection, or ``g`` after the assignment) are numpy's."""
    g, m, v = mask_data()
    for label, op in MASK_OPS.items():
        ref = g.copy()
        want = op(ref, m, v)
        want = ref if want is None else want
        contenders = [("webgrad", wg.tensor(g), wg.tensor(m), wg.tensor(v), lambda t: t.numpy())]
        if torch is not None:
            contenders.append(("torch", torch.from_numpy(g.copy()), torch.from_numpy(m), torch.from_numpy(v),
                               lambda t: t.numpy()))
        for name, tg, tm, tv, as_numpy in contenders:
            got = op(tg, tm, tv)
            assert np.array_equal(as_numpy(tg if got is None else got), want), f"{name}: {label} differs from numpy's"


# ---------------------------------------------------------------- peak memory (fresh processes)

RSS_STEPS = 200


def rss_child(name, batch):
    """Run in a fresh process: RSS (MiB) after setup and at peak over RSS_STEPS MLP steps."""
    if name == "torch":
        torch.set_num_threads(blas_threads())
    else:
        wg.set_backend("cpu")   # as main() does: no GPU backend is probed or started
    step = mlp_makers()[name](batch)
    step()
    base = _status_mib("VmRSS")
    for _ in range(RSS_STEPS):
        step()
    print(f"{base:.1f} {_status_mib('VmHWM'):.1f}")


def _status_mib(field):
    """A memory figure of this process from /proc/self/status, in MiB. VmHWM is the peak RSS of this
    process image (getrusage's ru_maxrss is not: it carries the parent's peak across fork and exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_rss(batch):
    """{contender: (MiB after setup, peak MiB)} for the MLP loop, each in its own process."""
    out = {}
    for name in ["webgrad"] + (["torch"] if torch is not None else []):
        env = dict(os.environ, WEBGRAD_BENCH_RSS_CHILD=name)
        res = subprocess.run([sys.executable, __file__, "--rss-child", name, str(batch)], env=env,
                             capture_output=True, text=True, check=True)
        out[name] = tuple(float(v) for v in res.stdout.split())
    return out


# ---------------------------------------------------------------- report

MALLOC_MMAP_MIB, MALLOC_TRIM_MIB = 32, 256


def pin_malloc() -> bool:
    """Fix glibc malloc's mmap and trim thresholds for this process (True where it took).

    glibc moves both with the process's allocation history, so whether a step's large temporaries
    (~0.8 MiB at batch 128) come from the heap or are mapped, unmapped and faulted in anew each time
    depends on what ran before: the same MLP step page-faults ~500 times a step (~+40% time) in
    one order of contenders and never in another. Pinned, every contender runs on the same terms.
    Fresh processes (the peak-RSS children) keep glibc's defaults."""
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):   # not glibc
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, MALLOC_MMAP_MIB << 20) and mallopt(M_TRIM_THRESHOLD, MALLOC_TRIM_MIB << 20))


def blas_threads():
    try:
        from threadpoolctl import threadpool_info
        n = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        if n:
            return max(n)
    except ImportError:
        pass
    return os.cpu_count() or 1


def run_row(label, unit, scale, contenders, repeats, min_time, pause):
    """One table row: each contender's median time (in ``unit``), and webgrad's ratio to each other
    contender as the median over rounds of the round's ratio (the contenders of a round ran within
    a second of each other, so a slow spell of this shared machine cancels out of the ratio)."""
    rounds = measure_rounds(contenders, repeats, min_time, pause)
    times = {name: statistics.median(t) * scale for name, t in rounds.items()}
    for name, t in times.items():
        print(f"  {label:<34} {name:<8} {t:10.2f} {unit}", file=sys.stderr, flush=True)
    ratios = {name: statistics.median(w / o for w, o in zip(rounds["webgrad"], t))
              for name, t in rounds.items() if name != "webgrad"}
    return label, unit, times, ratios


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def ratio(times, a, b):
    return None if a not in times or b not in times else times[a] / times[b]


def webgrad_ratio(row, other):
    """webgrad's paired ratio to ``other`` in a row from ``run_row`` (None if ``other`` did not run)."""
    return row[3].get(other)


def report(rows):
    names = ["webgrad", "torch", "numpy", "floor", "blas"]
    lines = ["| benchmark | unit | " + " | ".join(names) + " | webgrad/torch | webgrad/numpy | webgrad/floor |",
             "|---|---|" + "---:|" * (len(names) + 3)]
    for row in rows:
        label, unit, t, _ = row
        cells = [fmt(t.get(n)) for n in names] + [fmt(webgrad_ratio(row, n)) for n in ("torch", "numpy", "floor")]
        lines.append(f"| {label} | {unit} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def environment(malloc_pinned=False):
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [f"python {platform.python_version()}", f"numpy {np.__version__}",
                f"torch {torch.__version__ if torch else 'not installed'}", f"webgrad {wg.__version__}"]
    malloc = f"; malloc thresholds pinned (mmap {MALLOC_MMAP_MIB} MiB, trim {MALLOC_TRIM_MIB} MiB)" if malloc_pinned else ""
    return f"{os.cpu_count()} cpus, {model}; " + ", ".join(versions) + malloc


PLOTS = ("scaling_op.png", "scaling_mlp.png")


def targets(rows, rss):
    """Issue 7's targets: (target, webgrad's ratio or None, bound, the ratio that the step's matrix
    products alone take (``mlp_blas``: the best a numpy-backed autograd could do) or None)."""
    t = {row[0]: row for row in rows}

    def r(label, other):
        return webgrad_ratio(t[label], other) if label in t else None

    def blas(label, other):
        _, _, times, _ = t[label]
        return ratio(times, "blas", other)
    chain, op = f"{CHAIN_OPS}-op chain + backward, {CHAIN_N} elems", "a + b, 1 elem, no grad"
    out = [("tiny-tensor chain + backward ≤ 0.5× torch", r(chain, "torch"), 0.5, None),
           ("tiny-tensor chain + backward ≤ 1.2× floor", r(chain, "floor"), 1.2, None),
           ("tiny-tensor op without grad ≤ 1.2× torch", r(op, "torch"), 1.2, None)]
    for label in t:
        if label.startswith("MLP"):
            b = label.rsplit(" ", 1)[1]
            out += [(f"MLP step b{b} ≤ 0.9× torch", r(label, "torch"), 0.9, blas(label, "torch")),
                    (f"MLP step b{b} ≤ 1.1× numpy", r(label, "numpy"), 1.1, blas(label, "numpy"))]
        elif label.startswith("CNN"):
            out.append((f"CNN step b{CNN_BATCH} ≤ 1.0× torch", r(label, "torch"), 1.0, None))
        elif label.startswith("GPT"):
            out += [("GPT step ≤ 1.5× torch (issue 17)", r(label, "torch"), 1.5, None),
                    ("GPT step eager ≤ 1.3× torch (issue 19)", r(label, "torch"), 1.3, None)]
        elif label.startswith("g[mask]"):   # issue 17: masks as fast as numpy
            out.append((f"{label.split(',')[0]} ≤ 1.0× numpy", r(label, "numpy"), 1.0, None))
    if rss:
        peak = {name: p for name, (_, p) in rss.items()}
        out.append(("MLP loop peak RSS ≤ torch's", ratio(peak, "webgrad", "torch"), 1.0, None))
    here = Path(__file__).resolve().parent
    out.append(("scaling plots (bench/plot_scaling.py)", 1.0 if all((here / f).exists() for f in PLOTS) else None,
                1.0, None))
    return out


def report_targets(rows, rss):
    lines = ["| target | webgrad's ratio | result | BLAS alone |", "|---|---:|---|---:|"]
    for name, value, bound, best in targets(rows, rss):
        ok = value is not None and value <= bound
        shown = "-" if value is None else ("exist" if name.startswith("scaling") else f"{value:.2f}")
        lines.append(f"| {name} | {shown} | {'pass' if ok else 'short'} | {fmt(best)} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 short repeats, batch 128 only")
    ap.add_argument("--repeats", type=int, default=None, help="repeats per measurement (median taken)")
    ap.add_argument("--rss-child", nargs=2, metavar=("NAME", "BATCH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child:
        return rss_child(args.rss_child[0], int(args.rss_child[1]))
    repeats = args.repeats or (3 if args.quick else 15)
    min_time = 0.01 if args.quick else 0.1
    pause = 0.0 if args.quick else PAUSE_S
    batches = (128,) if args.quick else (128, 1024)

    pinned = pin_malloc()
    threads = blas_threads()
    if torch is not None:
        torch.set_num_threads(threads)
    wg.set_backend("cpu")
    rng = np.random.default_rng(1)
    x0 = rng.uniform(-1, 1, CHAIN_N).astype(np.float32)
    w0 = rng.uniform(-1, 1, CHAIN_N).astype(np.float32)
    check_chain(x0, w0)
    for b in batches:
        check_mlp(b)
    check_cnn()
    check_gpt()
    check_masks()

    print(f"# {environment(pinned)}; BLAS/torch threads {threads}", file=sys.stderr)
    rows = [run_row(f"{CHAIN_OPS}-op chain + backward, {CHAIN_N} elems", "µs/op", 1e6 / CHAIN_OPS,
                    chain_contenders(x0, w0), repeats, min_time, pause),
            run_row("a + b, 1 elem, no grad", "µs/op", 1e6, nograd_contenders(), repeats, min_time, pause)]
    loss_name, _ = webgrad_cross_entropy()
    for b in batches:
        rows.append(run_row(f"MLP 784-256-10 step, batch {b}", "ms/step", 1e3,
                            {**{n: make(b) for n, make in mlp_makers().items()}, "blas": mlp_blas(b)},
                            repeats, min_time * 3, pause))
    rows.append(run_row(f"CNN step (8x8, conv3x3x8, pool, linear), batch {CNN_BATCH}", "ms/step", 1e3,
                        {n: make() for n, make in cnn_makers().items()}, repeats, min_time * 3, pause))
    if gpt_makers():
        rows.append(run_row(f"GPT step ({GPT_LAYERS} layers, {GPT_HEADS} heads, {GPT_WIDTH} wide, block {GPT_BLOCK}), "
                            f"batch {GPT_BATCH}", "ms/step", 1e3, {n: make() for n, make in gpt_makers().items()},
                            repeats, min_time * 3, pause))
    for label, op in MASK_OPS.items():
        rows.append(run_row(f"{label}, {MASK_SIDE}x{MASK_SIDE}, mask = g > 0", "µs/op", 1e6, mask_contenders(op),
                            repeats, min_time, pause))
    rss = peak_rss(128)
    print(f"\n{environment(pinned)}; BLAS/torch threads {threads}; webgrad MLP loss: {loss_name}\n")
    print(report(rows))
    print(f"\nPeak RSS of {RSS_STEPS} MLP steps (batch 128), each in a fresh process, MiB (after setup -> peak): "
          + ", ".join(f"{n} {a:.0f} -> {p:.0f}" for n, (a, p) in rss.items()) + "\n")
    print(report_targets(rows, rss))
    return rows


if __name__ == "__main__":
    main()
