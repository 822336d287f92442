"""webgrad.distributed and DistributedDataParallel on 2 and 4 ranks of this machine (loopback MPI).

Starting ranks is slow, so each world size is started once: the launcher runs this file as a
script on every rank (``--worker``), which runs every check of ``CHECKS`` and writes, per rank,
which passed and the traceback of each that failed; one pytest test per (world size, check)
reads them. Collectives are checked against their definitions, computed on every rank from the
data every rank makes (a function of the rank), for several dtypes and shapes; DDP against
single-process training on the concatenated batch. Failures (a rank that raises, a rank that
never joins a collective) and the example get launches of their own.
"""
import json
import os
import subprocess
import sys
import time
import traceback
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

import webgrad as wg
import webgrad.distributed as dist
import webgrad.nn as nn
from webgrad.nn.parallel import DistributedDataParallel as DDP

ROOT = Path(__file__).resolve().parent.parent
WORLD_SIZES = (2, 4)
RANK_TIMEOUT_S = 30   # the worker's process-group timeout: a check that leaves the ranks out of step fails, not hangs


def launch(nproc, *argv, timeout=240):
    """Run ``argv`` (a script and its arguments) on ``nproc`` ranks through the launcher."""
    cmd = [sys.executable, "-m", "webgrad.distributed.run", "--nproc", str(nproc), *map(str, argv)]
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}     # the launcher sets it (to 1)
    env.update(PYTHONDONTWRITEBYTECODE="1", WEBGRAD_BACKEND="cpu")
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


# ================================================================ the worker (runs on every rank)

DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "bool")
SHAPES = ((), (5,), (3, 4), (2, 0), (2, 3, 2))
OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")
CHECKS = {}          # name -> (check(rank, size), the world sizes it runs on)
SKIP = "skip: "      # a check's result that starts so is a skip (with its reason), not a pass


def check(fn=None, sizes=WORLD_SIZES):
    """Register ``fn(rank, size)`` as a check run on every rank of each world size in ``sizes``;
    it returns None, or ``SKIP + reason`` when it cannot run here."""
    if fn is None:
        return lambda f: check(f, sizes)
    CHECKS[fn.__name__] = (fn, sizes)
    return fn


def values(seed, shape, dtype):
    """Small integers (exact in every dtype and under sums and products of 4 ranks), as numpy."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.integers(-3, 4, size=shape).astype("float32" if dtype == "bfloat16" else dtype)


def make(a, dtype):
    return wg.tensor(a.tolist(), dtype=getattr(wg, "bool_" if dtype == "bool" else dtype))


def as_numpy(t):
    return np.asarray(t.to(wg.float32).tolist() if t.dtype.name == "bfloat16" else t.tolist())


def reference(op, arrays, dtype):
    stack = np.stack(arrays)
    if dtype == "bool":
        return {"SUM": np.any, "MAX": np.any, "BOR": np.any, "PRODUCT": np.all, "MIN": np.all,
                "BAND": np.all, "BXOR": lambda s, axis: np.logical_xor.reduce(s, axis=axis)}[op](stack, axis=0)
    if op == "AVG":
        return (stack.astype("float64").sum(0) / len(arrays)).astype(stack.dtype)
    return {"SUM": np.sum, "PRODUCT": np.prod, "MIN": np.min, "MAX": np.max, "BAND": np.bitwise_and.reduce,
            "BOR": np.bitwise_or.reduce, "BXOR": np.bitwise_xor.reduce}[op](stack, axis=0).astype(stack.dtype)


def valid(op, dtype):
    floating = dtype.startswith(("float", "bfloat"))
    return not ((op == "AVG" and not floating) or (op in ("BAND", "BOR", "BXOR") and floating))


def same(got, expected, what):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and np.array_equal(got, expected), f"{what}: got {got}, expected {expected}"


@check
def all_reduce_matches_its_definition(rank, size):
    cases = [(dtype, shape, op) for dtype in DTYPES for shape in SHAPES for op in OPS if valid(op, dtype)]
    for seed, (dtype, shape, op) in enumerate(cases):
        t = make(values(seed * 10 + rank, shape, dtype), dtype)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        expected = reference(op, [values(seed * 10 + r, shape, dtype) for r in range(size)], dtype)
        assert t.dtype.name == dtype and t.shape == shape
        same(as_numpy(t), expected, f"all_reduce {op} {dtype} {shape}")


@check
def broadcast_from_every_rank(rank, size):
    for dtype in DTYPES:
        for shape in SHAPES[:4]:
            for src in range(size):
                t = make(values(100 + rank, shape, dtype), dtype)
                dist.broadcast(t, src=src)
                same(as_numpy(t), values(100 + src, shape, dtype), f"broadcast {dtype} {shape} from {src}")


@check
def all_gather_and_all_gather_into_tensor(rank, size):
    for dtype in DTYPES:
        for shape in ((), (3,), (2, 3)):
            mine = values(200 + rank, shape, dtype)
            everyone = [values(200 + r, shape, dtype) for r in range(size)]
            outs = [make(np.zeros(shape, dtype="float32" if dtype == "bfloat16" else dtype), dtype)
                    for _ in range(size)]
            dist.all_gather(outs, make(mine, dtype))
            for r in range(size):
                same(as_numpy(outs[r]), everyone[r], f"all_gather {dtype} {shape} from {r}")
            stacked = np.stack(everyone)
            for out_shape in (stacked.shape, (size * max(1, int(np.prod(shape))),)):
                out = make(np.zeros(out_shape, dtype=stacked.dtype), dtype)
                dist.all_gather_into_tensor(out, make(mine, dtype))
                same(as_numpy(out), stacked.reshape(out_shape), f"all_gather_into_tensor {dtype} {out_shape}")


@check
def reduce_scatter_tensor_matches_its_definition(rank, size):
    for dtype in ("float32", "float16", "int64", "bool"):
        for op in ("SUM", "AVG", "MAX"):
            if not valid(op, dtype):
                continue
            inputs = [values(300 + r, (size * 2, 3), dtype) for r in range(size)]
            out = make(np.zeros((2, 3), dtype="float32" if dtype == "bfloat16" else dtype), dtype)
            dist.reduce_scatter_tensor(out, make(inputs[rank], dtype), op=getattr(dist.ReduceOp, op))
            same(as_numpy(out), reference(op, inputs, dtype)[2 * rank:2 * rank + 2], f"reduce_scatter {op} {dtype}")


@check
def send_and_recv_round_a_ring(rank, size):
    right, left = (rank + 1) % size, (rank - 1) % size
    for dtype in ("float32", "int64", "bfloat16"):
        out = make(np.zeros((2, 2), dtype="float32" if dtype == "bfloat16" else dtype), dtype)
        if rank % 2 == 0:
            dist.send(make(values(400 + rank, (2, 2), dtype), dtype), dst=right)
            sender = dist.recv(out, src=left)
        else:
            sender = dist.recv(out)                       # any source: recv says who sent
            dist.send(make(values(400 + rank, (2, 2), dtype), dtype), dst=right)
        assert sender == left
        same(as_numpy(out), values(400 + left, (2, 2), dtype), f"recv {dtype}")
    box = wg.zeros(3)
    works = [dist.isend(wg.full((3,), float(rank)), dst=right, tag=7), dist.irecv(box, src=left, tag=7)]
    assert all(w.wait() for w in works)
    assert box.tolist() == [float(left)] * 3 and works[1].source_rank() == left


@check
def async_collectives_complete_in_any_order(rank, size):
    ts = [wg.full((1000,), float(rank + i)) for i in range(5)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    assert all(isinstance(w, dist.Work) for w in works)
    for i in reversed(range(5)):
        assert works[i].wait() is True and works[i].is_completed()
        assert len(works[i].result()) == 1 and works[i].result()[0] is ts[i]
        assert ts[i][:3].tolist() == [float(sum(range(size)) + size * i)] * 3
    work = dist.barrier(async_op=True)
    deadline = time.monotonic() + RANK_TIMEOUT_S
    while not work.is_completed():
        assert time.monotonic() < deadline
    dist.barrier(timeout=timedelta(seconds=RANK_TIMEOUT_S))


@check
def results_arrive_as_in_place_ops(rank, size):
    base = wg.arange(6.0).reshape(2, 3)
    view = base.t()
    dist.all_reduce(view)                                  # writes through the view into its base
    assert base.tolist() == (np.arange(6.0).reshape(2, 3) * size).tolist()
    assert view.tolist() == (np.arange(6.0).reshape(2, 3).T * size).tolist()
    two = wg.tensor(2.0)                                   # small constants share cached data: never written
    dist.all_reduce(two)
    assert two.item() == 2.0 * size and wg.tensor(2.0).item() == 2.0
    w = nn.Parameter(wg.ones(3))                           # a leaf that requires grad, as PyTorch allows
    version = w._version
    dist.all_reduce(w)
    assert w.requires_grad and w.is_leaf and w.tolist() == [float(size)] * 3 and w._version > version
    x = wg.ones(3, requires_grad=True)
    y = x.exp()                                            # exp saves its output for backward
    dist.all_reduce(y)
    try:
        y.sum().backward()
    except RuntimeError as e:
        assert "modified by an in-place operation" in str(e)
    else:
        raise AssertionError("backward through an all-reduced saved output should fail the version check")


@check(sizes=(2,))   # 4 processes starting lavapipe at once on 2 cores take ~10 s; 2 ranks check the same path
def gpu_tensors_travel_through_the_host(rank, size):
    if "wgpu" not in wg.backends():
        return SKIP + "no wgpu adapter (install Debian's mesa-vulkan-drivers for lavapipe)"
    t = wg.full((4,), float(rank + 1), backend="wgpu")
    dist.all_reduce(t)
    assert t.device == "wgpu" and t.tolist() == [float(sum(range(1, size + 1)))] * 4
    b = wg.arange(3, backend="wgpu") if rank == 0 else wg.zeros(3, dtype=wg.int64, backend="wgpu")
    dist.broadcast(b, src=0)
    assert b.device == "wgpu" and b.tolist() == [0, 1, 2]
    ddp = DDP(mlp(seed=rank).to("wgpu"), bucket_cap_mb=0.0002)          # DDP's buckets on the GPU
    x, y = batch(0, size)
    loss_fn(ddp(x[4 * rank:4 * rank + 4].to("wgpu")), y[4 * rank:4 * rank + 4].to("wgpu")).backward()
    ref = mlp(0)
    loss_fn(ref(x), y).backward()
    assert all(p.grad.device == "wgpu" for p in ddp.parameters())
    assert_close([p.grad.tolist() for p in ddp.parameters()], [p.grad.tolist() for p in ref.parameters()],
                 "DDP on wgpu", atol=1e-5)


@check
def object_collectives(rank, size):
    out = [None] * size
    dist.all_gather_object(out, {"rank": rank, "name": "r" * rank})
    assert out == [{"rank": r, "name": "r" * r} for r in range(size)]
    objs = [("config", 1), [2.5]] if rank == 1 else [None, None]
    dist.broadcast_object_list(objs, src=1)
    assert objs == [("config", 1), [2.5]]


@check
def errors_name_the_call(rank, size):
    cases = [
        (lambda: dist.all_reduce([1.0]), TypeError, "all_reduce"),
        (lambda: dist.all_reduce(wg.ones(2, dtype=wg.int64), op=dist.ReduceOp.AVG), RuntimeError, "AVG"),
        (lambda: dist.broadcast(wg.ones(2), src=size), RuntimeError, "invalid src rank"),
        (lambda: dist.broadcast(wg.ones(2)), ValueError, "src"),
        (lambda: dist.all_gather([wg.ones(2)] * (size + 1), wg.ones(2)), RuntimeError, "one per rank"),
        (lambda: dist.all_gather_into_tensor(wg.ones(3), wg.ones(2)), RuntimeError, "output_tensor"),
        (lambda: dist.reduce_scatter_tensor(wg.ones(2), wg.ones(2 * size, dtype=wg.float64)), RuntimeError,
         "input"),
        (lambda: dist.send(wg.ones(2), dst=rank), ValueError, "destination"),
        (lambda: dist.all_reduce(wg.ones(2), group=object()), ValueError, "default process group"),
        (lambda: dist.init_process_group("mpi"), ValueError, "twice"),
    ]
    for call, error, words in cases:
        try:
            call()
        except error as e:
            assert words in str(e), f"{error.__name__} without {words!r}: {e}"
        else:
            raise AssertionError(f"no {error.__name__} ({words})")


@check
def launcher_sets_torchruns_variables(rank, size):
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
    assert [os.environ[n] for n in names] == [str(rank), str(size), str(rank), str(size)]
    assert sys.argv[0] == __file__ and sys.argv[1] == "--worker"      # the script runs as `python script args`
    assert os.environ["OMP_NUM_THREADS"] == "1"


@check
def distributed_sampler_reads_the_group(rank, size):
    sampler = wg.utils.data.DistributedSampler(range(10), shuffle=False)
    assert (sampler.num_replicas, sampler.rank) == (size, rank)
    assert list(sampler) == list(wg.utils.data.DistributedSampler(range(10), size, rank, shuffle=False))


# ---------------------------------------------------------------- DistributedDataParallel


def grad_hook_on_output(fn):
    """A forward hook that registers ``fn`` as a gradient hook on the module's output."""
    def forward_hook(module, inputs, out):
        out.register_hook(fn)
    return forward_hook


def mlp(seed):
    wg.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))


def batch(step, size, per_rank=4):
    g = wg.Generator().manual_seed(1000 + step)
    return wg.randn(per_rank * size, 5, generator=g), wg.randn(per_rank * size, 3, generator=g)


def loss_fn(out, y):
    return ((out - y) ** 2).mean()


def params_of(model):
    return [np.asarray(p.tolist()) for p in model.parameters()]


def assert_close(got, expected, what, atol=2e-6):
    for i, (a, b) in enumerate(zip(got, expected)):
        assert np.allclose(a, b, atol=atol, rtol=1e-5), f"{what}: parameter {i} differs by {np.abs(a - b).max()}"


def train_single(model, steps, size, micro=1):
    """Single-process training on the concatenated batches (each micro-batch's loss a mean over
    every rank's rows, gradients summed over the micro-batches), SGD with momentum."""
    opt = wg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        opt.zero_grad()
        for m in range(micro):
            x, y = batch(step * micro + m, size)
            loss_fn(model(x), y).backward()
        opt.step()
    return model


def train_ddp(ddp, steps, rank, size, micro=1):
    """Each rank trains on its rows of the same batches; the first micro-1 micro-steps under no_sync."""
    opt = wg.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        opt.zero_grad()
        for m in range(micro):
            x, y = batch(step * micro + m, size)
            rows = slice(4 * rank, 4 * rank + 4)
            if m < micro - 1:
                with ddp.no_sync():
                    loss_fn(ddp(x[rows]), y[rows]).backward()
            else:
                loss_fn(ddp(x[rows]), y[rows]).backward()
        opt.step()
    return ddp


@check
def ddp_broadcasts_rank0_parameters_at_wrap_time(rank, size):
    model = mlp(seed=rank)                                 # a different start on every rank
    DDP(model)
    same_as = [None] * size
    dist.all_gather_object(same_as, [p.tolist() for p in model.parameters()])
    assert all(s == same_as[0] for s in same_as)
    assert same_as[0] == [p.tolist() for p in mlp(seed=0).parameters()]


@check
def ddp_equals_single_process_training_on_the_concatenated_batch(rank, size):
    expected = params_of(train_single(mlp(0), steps=3, size=size))
    for caps in ({}, {"bucket_cap_mb": 0.0002}, {"bucket_cap_mb": 0}):      # one bucket, a few, one per parameter
        ddp = train_ddp(DDP(mlp(seed=rank), **caps), steps=3, rank=rank, size=size)
        assert_close(params_of(ddp.module), expected, f"DDP {caps}")
        assert ddp.reducer.stats["steps"] == 3


@check
def ddp_no_sync_accumulates_locally_then_averages(rank, size):
    expected = params_of(train_single(mlp(0), steps=2, size=size, micro=3))
    ddp = train_ddp(DDP(mlp(0), bucket_cap_mb=0.0002), steps=2, rank=rank, size=size, micro=3)
    assert_close(params_of(ddp.module), expected, "no_sync")
    assert ddp.reducer.stats["steps"] == 2                  # one reduction per synchronised step only
    ddp = DDP(mlp(0))
    with ddp.no_sync():
        x, y = batch(0, size)
        loss_fn(ddp(x[4 * rank:4 * rank + 4]), y[4 * rank:4 * rank + 4]).backward()
    local = [p.grad.tolist() for p in ddp.module.parameters()]
    everyone = [None] * size
    dist.all_gather_object(everyone, local)
    assert everyone[0] != everyone[1]                       # not averaged: each rank keeps its own


@check
def ddp_starts_all_reduces_during_backward(rank, size):
    ddp = DDP(mlp(0), bucket_cap_mb=0)                      # one bucket per parameter
    started = []
    ddp.module[1].register_forward_hook(grad_hook_on_output(   # on the gradient after layer 0
        lambda g: started.append(sum(w is not None for w in ddp.reducer.works))))
    x, y = batch(0, size)
    loss_fn(ddp(x), y).backward()
    assert started == [4], started       # the buckets of layers 2 and 4 went before backward reached layer 0


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        wg.manual_seed(0)
        self.a, self.b, self.head = nn.Linear(5, 3), nn.Linear(5, 3), nn.Linear(3, 3)

    def forward(self, x, use_b):
        return self.head(self.b(x) if use_b else self.a(x))


@check
def ddp_find_unused_parameters(rank, size):
    x, y = batch(0, size)
    rows = slice(4 * rank, 4 * rank + 4)
    ddp = DDP(TwoBranches(), find_unused_parameters=True, bucket_cap_mb=0)
    loss_fn(ddp(x[rows], use_b=False), y[rows]).backward()       # b unused everywhere: its grad untouched
    assert ddp.module.b.weight.grad is None and ddp.module.a.weight.grad is not None
    ref = TwoBranches()
    loss_fn(ref(x, use_b=False), y).backward()
    assert_close([ddp.module.a.weight.grad.tolist()], [ref.a.weight.grad.tolist()], "used branch")
    ddp.module.zero_grad()
    loss_fn(ddp(x[rows], use_b=rank == 0), y[rows]).backward()    # b used on rank 0 only: averaged with zeros
    ref = TwoBranches()
    for r in range(size):
        r_rows = slice(4 * r, 4 * r + 4)
        (loss_fn(ref(x[r_rows], use_b=r == 0), y[r_rows]) / size).backward()
    assert_close([ddp.module.b.weight.grad.tolist(), ddp.module.a.weight.grad.tolist()],
                 [ref.b.weight.grad.tolist(), ref.a.weight.grad.tolist()], "locally unused")


@check
def ddp_without_find_unused_parameters_says_so(rank, size):
    ddp = DDP(TwoBranches())
    x, y = batch(0, size)
    loss_fn(ddp(x, use_b=False), y).backward()
    try:
        ddp(x, use_b=False)
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e) and "b.weight" in str(e), e
    else:
        raise AssertionError("a forward after an unfinished reduction should raise")


def bn_model():
    wg.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4))


@check
def ddp_broadcasts_buffers_at_forward(rank, size):
    ddp = DDP(bn_model())
    x, _ = batch(rank, size)                                 # a different batch on every rank
    ddp(x)
    states = [None] * size
    dist.all_gather_object(states, {k: v.tolist() for k, v in ddp.module.state_dict().items()})
    assert states[0]["1.running_mean"] != states[1]["1.running_mean"]
    ddp(x)                                                   # starts from rank 0's buffers
    ref = bn_model()
    ref.load_state_dict({k: wg.tensor(v) for k, v in states[0].items()})
    ref(x)
    for name in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        assert ddp.module.state_dict()[name].tolist() == ref.state_dict()[name].tolist(), name


@check
def ddp_refuses_different_models(rank, size):
    wg.manual_seed(0)
    try:
        DDP(nn.Linear(5, 3 + (rank == 1)))
    except RuntimeError as e:
        assert "same model across all ranks" in str(e), e
    else:
        raise AssertionError("different parameter shapes on the ranks should raise")


def worker(outdir):
    dist.init_process_group("mpi", timeout=timedelta(seconds=RANK_TIMEOUT_S))
    rank, size = dist.get_rank(), dist.get_world_size()
    results, seconds = {}, {}
    for name, (fn, sizes) in CHECKS.items():
        if size not in sizes:
            continue
        start = time.perf_counter()
        try:
            results[name] = fn(rank, size) or "ok"
        except Exception:
            results[name] = traceback.format_exc()
        seconds[name] = round(time.perf_counter() - start, 2)
    results["seconds"] = seconds
    Path(outdir, f"rank{rank}.json").write_text(json.dumps(results))
    dist.barrier()
    dist.destroy_process_group()


# ================================================================ the tests (pytest)


@pytest.fixture(scope="module")
def world(request, tmp_path_factory):
    """Run every check once on ``request.param`` ranks; returns (size, [per-rank results])."""
    size, out = request.param, tmp_path_factory.mktemp(f"ranks{request.param}")
    proc = launch(size, Path(__file__), "--worker", out)
    results = [json.loads((out / f"rank{r}.json").read_text()) for r in range(size)
               if (out / f"rank{r}.json").exists()]
    assert proc.returncode == 0 and len(results) == size, f"{size} ranks failed:\n{proc.stdout}\n{proc.stderr}"
    return size, results


def verdict(world, name):
    """Pass, fail (with every failing rank's traceback) or skip ``name`` by the ranks' results."""
    size, results = world
    failed = {r: res[name] for r, res in enumerate(results) if res[name] != "ok" and not res[name].startswith(SKIP)}
    print(f"{name} on {size} ranks: {max(res['seconds'][name] for res in results)} s")
    assert not failed, f"{name} on {size} ranks:\n" + "\n".join(f"rank {r}: {tb}" for r, tb in failed.items())
    if any(res[name].startswith(SKIP) for res in results):
        pytest.skip(f"{name} on {size} ranks: {results[0][name][len(SKIP):]}")


def checks_on(sizes):
    return [name for name, (_, on) in CHECKS.items() if on == sizes]


# (world and name parametrized apart, so that pytest keeps each world's tests together: one launch per world)
@pytest.mark.parametrize("world", WORLD_SIZES, indirect=True)
@pytest.mark.parametrize("name", checks_on(WORLD_SIZES))
def test_on_every_rank(world, name):
    verdict(world, name)


@pytest.mark.parametrize("world", [2], indirect=True)
@pytest.mark.parametrize("name", checks_on((2,)))
def test_on_two_ranks(world, name):
    verdict(world, name)


FAILING = """
import sys, time
from datetime import timedelta
import webgrad as wg, webgrad.distributed as dist
dist.init_process_group("mpi", timeout=timedelta(seconds=2))
if dist.get_rank() == 1:
    if sys.argv[1] == "raise":
        raise ValueError("rank 1 gives up")
    time.sleep(60)                       # alive, but never joins the all-reduce
dist.all_reduce(wg.ones(2))
print("unreachable")
"""


@pytest.mark.parametrize("how, says", [
    ("raise", ["ValueError: rank 1 gives up", "rank 1 of 2 stopped on an uncaught ValueError"]),
    ("hang", ["all_reduce on rank 0 of 2 timed out after 2 s", "rank 0 of 2 stopped on an uncaught RuntimeError"]),
])
def test_a_failing_rank_ends_the_job_with_a_clear_error(tmp_path, how, says):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    start = time.monotonic()
    proc = launch(2, script, how, timeout=50)
    elapsed = time.monotonic() - start
    assert proc.returncode != 0 and "unreachable" not in proc.stdout
    for words in says:
        assert words in proc.stderr, f"{words!r} not in:\n{proc.stderr}"
    assert elapsed < 40, f"the job took {elapsed:.0f} s to end"


def digits_accuracy(proc) -> float:
    """The test accuracy examples/ddp_digits.py printed (it must have run to the end)."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    accuracy = [float(line.split(":")[1]) for line in proc.stdout.splitlines() if line.startswith("test accuracy:")]
    assert len(accuracy) == 1, proc.stdout
    return accuracy[0]


@pytest.fixture(scope="module")
def one_process_accuracy():
    """examples/ddp_digits.py's full run as one process (no launcher, no MPI, no DDP)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "WEBGRAD_BACKEND": "cpu", "OMP_NUM_THREADS": "1"}
    env.pop("RANK", None)
    return digits_accuracy(subprocess.run([sys.executable, ROOT / "examples" / "ddp_digits.py"], cwd=ROOT, env=env,
                                          capture_output=True, text=True, timeout=300))


@pytest.mark.parametrize("nproc", WORLD_SIZES)
def test_ddp_digits_example_reaches_single_process_accuracy(nproc, one_process_accuracy):
    accuracy = digits_accuracy(launch(nproc, ROOT / "examples" / "ddp_digits.py", timeout=300))
    assert one_process_accuracy >= 0.95                          # digits_mlp.py's bar
    assert abs(accuracy - one_process_accuracy) <= 0.01, (nproc, accuracy, one_process_accuracy)


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    worker(sys.argv[2])
