"""webgrad.distributed without starting MPI in this process: the API before a process group
exists, argument checks, the launcher's command lines, the reduce-op tables, DDP's buckets, and
the engine's post-accumulate-grad hooks that DistributedDataParallel rests on (against PyTorch).
The multi-rank checks are in test_distributed_ranks.py."""
import os
import subprocess
import sys
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest
import torch

import webgrad as wg
import webgrad.distributed as dist
from webgrad.distributed import mpi, run
from webgrad.nn.parallel.reducer import bucket_assignment, reached_leaves

ROOT = Path(__file__).resolve().parent.parent


def test_import_webgrad_does_not_start_mpi():
    code = "import sys, webgrad, webgrad.distributed, webgrad.nn.parallel; print(sorted(m for m in sys.modules " \
           "if m.startswith('mpi4py')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


WITHOUT_MPI4PY = """
import sys
sys.modules["mpi4py"] = None                 # mpi4py is unimportable from here on
import webgrad as wg, webgrad.distributed as dist
from webgrad.nn.parallel import DistributedDataParallel
model = wg.nn.Linear(3, 1)
model(wg.ones(2, 3)).sum().backward()        # training needs no MPI
print(dist.is_available(), dist.is_mpi_available(), dist.is_initialized(), model.bias.grad.tolist())
try:
    dist.init_process_group("mpi")
except RuntimeError as e:
    print(e)
"""


def test_webgrad_runs_without_mpi4py_and_init_process_group_says_how_to_install_it():
    out = subprocess.run([sys.executable, "-c", WITHOUT_MPI4PY], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    first, error = out.stdout.splitlines()
    assert first == "False False False [2.0]"
    assert error.startswith("init_process_group: ") and "pip install 'webgrad[distributed]'" in error, error


def test_the_distributed_extra_installs_mpi4py():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert [r.split(">")[0] for r in extras["distributed"]] == ["mpi4py"]


DOCTESTS = """
import doctest, importlib
for name in {modules!r}:
    result = doctest.testmod(importlib.import_module(name))
    print(name, result.attempted, result.failed)
"""
DOCUMENTED = ["webgrad.distributed", "webgrad.distributed.group", "webgrad.distributed.collectives",
              "webgrad.distributed.work", "webgrad.distributed.objects", "webgrad.distributed.mpi",
              "webgrad.distributed.buffers", "webgrad.distributed.run", "webgrad.nn.parallel.distributed",
              "webgrad.nn.parallel.reducer", "webgrad.utils.data.distributed"]


def test_docstring_examples_run_in_a_world_of_one():
    """(In a process of its own, as a world of one: this one never starts MPI.)"""
    out = subprocess.run([sys.executable, "-c", DOCTESTS.format(modules=DOCUMENTED)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, env={**os.environ, "WEBGRAD_BACKEND": "cpu"})
    assert out.returncode == 0, out.stderr
    counts = {name: (int(a), int(f)) for name, a, f in (line.split() for line in out.stdout.splitlines()
                                                          if line.startswith("webgrad."))}
    assert list(counts) == DOCUMENTED and all(a > 0 for a, _ in counts.values()), out.stdout
    assert all(f == 0 for _, f in counts.values()), out.stdout


@pytest.mark.parametrize("call", [
    lambda: dist.get_rank(), lambda: dist.get_world_size(), lambda: dist.all_reduce(wg.ones(2)),
    lambda: dist.barrier(), lambda: dist.get_backend(),
    lambda: wg.nn.parallel.DistributedDataParallel(wg.nn.Linear(2, 2)),
    lambda: wg.utils.data.DistributedSampler(range(10)),
])
def test_before_init_process_group_as_pytorch(call):
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        call()


def test_destroy_without_a_group_as_pytorch():
    for lib in (dist, torch.distributed):
        with pytest.raises(AssertionError):
            lib.destroy_process_group()


def test_availability():
    assert dist.is_available() and dist.is_mpi_available()      # the test environment installs mpi4py
    assert not dist.is_gloo_available() and not dist.is_nccl_available()


@pytest.mark.parametrize("kwargs, error", [
    ({"backend": "tcp"}, ValueError), ({"backend": 3}, TypeError), ({"backend": "cpu:gloo,cuda:xyz"}, ValueError),
    ({"backend": "mpi", "timeout": 30}, TypeError),
])
def test_init_process_group_argument_errors(kwargs, error):
    """Checked before MPI is touched (this process never starts it)."""
    with pytest.raises(error):
        dist.init_process_group(**kwargs)
    assert "mpi4py.MPI" not in sys.modules


def test_default_timeout_is_pytorchs():
    assert dist.default_pg_timeout == timedelta(minutes=30) == torch.distributed.default_pg_timeout


def test_reduce_ops_are_pytorchs():
    names = {op.name for op in dist.ReduceOp}
    assert names <= set(torch.distributed.ReduceOp.RedOpType.__members__)
    assert {"SUM", "AVG", "PRODUCT", "MIN", "MAX"} <= names
    assert dist.ReduceOp.RedOpType is dist.ReduceOp


@pytest.mark.parametrize("op, dtype, expected", [
    (dist.ReduceOp.SUM, wg.float32, "SUM"), (dist.ReduceOp.AVG, wg.float16, "SUM"),
    (dist.ReduceOp.PRODUCT, wg.int64, "PROD"), (dist.ReduceOp.BXOR, wg.int32, "BXOR"),
    (dist.ReduceOp.SUM, wg.bool_, "LOR"), (dist.ReduceOp.MIN, wg.bool_, "LAND"),
])
def test_mpi_ops(op, dtype, expected):
    assert mpi.mpi_op_name("all_reduce", op, dtype) == expected


@pytest.mark.parametrize("op, dtype, error", [
    (dist.ReduceOp.AVG, wg.int64, RuntimeError), (dist.ReduceOp.BAND, wg.float32, RuntimeError),
    ("sum", wg.float32, TypeError), (0, wg.float32, TypeError),
])
def test_mpi_op_errors(op, dtype, error):
    with pytest.raises(error, match="all_reduce"):
        mpi.mpi_op_name("all_reduce", op, dtype)


def test_half_types_travel_as_float32():
    assert [mpi.wire_dtype(d).name for d in (wg.float16, wg.bfloat16, wg.float64, wg.int64, wg.bool_)] == \
        ["float32", "float32", "float64", "int64", "bool"]
    assert mpi.mpi_type_name(wg.bfloat16) == "FLOAT"


# ---------------------------------------------------------------- the launcher


def command(*argv, impl="Open MPI"):
    return run.command(run.parser().parse_args(list(argv)), run.IMPLEMENTATIONS[impl])


def test_launcher_command_on_this_machine():
    rank = [sys.executable, "-m", "webgrad.distributed.run"]
    assert command("--nproc", "4", "train.py", "--lr", "0.1") == \
        ["mpiexec", "-n", "4", "--oversubscribe", "--bind-to", "none", *rank, "train.py", "--lr", "0.1"]
    assert command("--nproc_per_node", "2", "-m", "pkg.train", impl="MPICH") == \
        ["mpiexec", "-n", "2", *rank, "-m", "pkg.train"]
    assert command("--nproc-per-node=auto", "t.py")[2] == str(run.os.cpu_count())
    assert command("t.py")[2] == "1"


def test_launcher_command_for_several_machines():
    assert command("--hosts", "a:4,b:2", "t.py")[:5] == ["mpiexec", "-n", "6", "-host", "a:4,b:2"]
    assert command("--hosts", "a,b", "--nproc", "3", "t.py", impl="MPICH")[:5] == \
        ["mpiexec", "-n", "6", "-hosts", "a:3,b:3"]


@pytest.mark.parametrize("argv", [["--nproc", "0", "t.py"], ["--nproc", "two", "t.py"], ["--hosts", "a:x", "t.py"]])
def test_launcher_rejects_bad_counts(argv):
    with pytest.raises(SystemExit, match="rank"):
        command(*argv)


def test_launcher_without_mpiexec_says_how_to_install():
    with pytest.raises(SystemExit, match="openmpi-bin"):
        run.main(["--mpiexec", "/nonexistent/mpiexec", "--nproc", "2", "t.py"])


def test_launcher_dry_run_prints_the_mpiexec_line():
    out = subprocess.run([sys.executable, "-m", "webgrad.distributed.run", "--nproc", "3", "--dry-run", "t.py", "x"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:3] == ["mpiexec", "-n", "3"] and out.stdout.split()[-2:] == ["t.py", "x"]


@pytest.mark.parametrize("environ, expected", [
    ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
      "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}, ("3", "8", "1", "4")),
    ({"PMI_RANK": "2", "PMI_SIZE": "4"}, ("2", "4", "2", "4")),
])
def test_rank_variables_from_mpis(environ, expected):
    assert tuple(run.rank_variables(environ).values()) == expected
    assert list(run.rank_variables(environ)) == ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"]


def test_no_rank_variables_outside_mpiexec():
    assert run.rank_variables({"RANK": "1"}) is None


# ---------------------------------------------------------------- DDP's buckets


def test_buckets_in_reverse_order_up_to_their_cap():
    ps = [wg.zeros(256), wg.zeros(256), wg.zeros(4), wg.zeros(300)]          # 1024, 1024, 16, 1200 bytes
    assert bucket_assignment(ps, [1000, 2048]) == [[3], [2, 1, 0]]
    assert bucket_assignment(ps, [1]) == [[3], [2], [1], [0]]
    assert bucket_assignment(ps, [10**9]) == [[3, 2, 1, 0]]


def test_buckets_split_at_dtype_changes():
    ps = [wg.zeros(2), wg.zeros(2, dtype=wg.float64), wg.zeros(2, dtype=wg.float64), wg.zeros(2)]
    assert bucket_assignment(ps, [10**9]) == [[3], [2, 1], [0]]


def test_reached_leaves_finds_the_parameters_an_output_depends_on():
    a, b, c = (wg.ones(2, requires_grad=True) for _ in range(3))
    out = {"x": (a * 2).sum(), "y": [b.exp()]}
    assert reached_leaves(out) == {id(a), id(b)}
    assert id(c) not in reached_leaves((c.detach() + 1, a))


# ---------------------------------------------------------------- post-accumulate-grad hooks


def grad_hook_on_output(fn):
    """A forward hook that registers ``fn`` as a gradient hook on the module's output."""
    def forward_hook(module, inputs, out):
        out.register_hook(fn)
    return forward_hook


def _events(lib, seed=0):
    """Which hooks fire, in which order, and what each post hook sees of the other parameters."""
    nn = lib.nn
    lib.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    events, params = [], dict(model.named_parameters())
    model[1].register_forward_hook(grad_hook_on_output(    # the gradient between the two layers
        lambda g: events.append(("activation", sorted(n for n, q in params.items() if q.grad is not None)))))
    for name, p in params.items():
        p.register_hook(lambda g, name=name: events.append(("pre", name)))
        p.register_post_accumulate_grad_hook(lambda t, name=name: events.append(
            ("post", name, t.grad is not None, sorted(n for n, q in params.items() if q.grad is not None))))
    model(lib.ones(5, 3)).sum().backward()
    return events


def test_post_accumulate_hooks_fire_mid_backward_as_pytorchs(backend):
    got, expected = _events(wg), _events(torch)
    assert got == expected
    first_post = got[1]
    assert first_post[:3] == ("post", "2.bias", True) and first_post[3] == ["2.bias"]   # before 0.* have grads
    assert ("activation", ["2.bias", "2.weight"]) in got      # the last layer's hooks ran before backward went on


def test_post_accumulate_hook_sees_the_accumulated_grad(backend):
    w = wg.ones(2, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (w * 3).sum().backward()
    (w * w).sum().backward()                  # accumulates: 3 + 2
    assert seen == [[3.0, 3.0], [5.0, 5.0]]
    handle.remove()
    (w * 1).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_hook_on_a_leaf_used_twice_fires_once_with_the_sum(backend):
    w = wg.tensor([2.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.item()))
    y = (w * 3) + (w * w).exp() * 0 + w
    y.sum().backward()
    assert seen == [4.0]


def test_post_accumulate_hook_with_create_graph_and_inputs():
    w = wg.tensor([2.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append((t.grad.item(), t.grad.requires_grad)))
    (w ** 3).sum().backward(create_graph=True)
    assert seen == [(12.0, True)]
    w.grad = None
    (w ** 2).sum().backward(inputs=[w])
    assert seen[-1] == (4.0, False)
    wg.autograd.grad((w ** 2).sum(), w)        # touches no .grad: no hook
    assert len(seen) == 2


def test_post_accumulate_hook_errors_as_pytorchs():
    for lib in (wg, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_hooks_leave_with_their_tensor():
    from webgrad.tensor import post_accumulate_hooks
    before = len(post_accumulate_hooks)
    w = wg.ones(2, requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda t: None)
    assert len(post_accumulate_hooks) == before + 1
    del w
    assert len(post_accumulate_hooks) == before


MISLAUNCHED = """
import os
import webgrad.distributed as dist
for env, kwargs in {cases!r}:
    for name in ("RANK", "WORLD_SIZE"):
        os.environ.pop(name, None)
    os.environ.update(env)
    try:
        dist.init_process_group(**kwargs)
    except RuntimeError as e:
        print("error:", e)
    else:
        print("joined", dist.get_rank(), dist.get_world_size())
        dist.destroy_process_group()
"""


def test_a_process_mpi_did_not_start_as_a_rank_is_told_how_to_launch():
    """Run alone, a process is a world of one (and may join, leave and join again); one started by
    a launcher MPI does not know (torchrun) claims a rank MPI did not give it, and is told how to
    start the ranks. (In a process of its own: this one never starts MPI.)"""
    cases = [({"WORLD_SIZE": "4", "RANK": "1"}, {"backend": "gloo"}), ({}, {"backend": "mpi", "rank": 2}),
             ({}, {"backend": "nccl", "world_size": 1, "rank": 0}), ({"RANK": "0", "WORLD_SIZE": "1"}, {})]
    out = subprocess.run([sys.executable, "-c", MISLAUNCHED.format(cases=cases)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 4, out.stdout
    assert lines[0].startswith("error: init_process_group: WORLD_SIZE=4 in the environment but MPI started this "
                               "process as world_size 1")
    assert lines[1].startswith("error: init_process_group: rank=2 but MPI started this process as rank 0")
    assert all("python -m webgrad.distributed.run --nproc N" in line for line in lines[:2])
    assert lines[2:] == ["joined 0 1", "joined 0 1"]
