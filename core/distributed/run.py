"""``python -m webgrad.distributed.run``: start the ranks of a training script through ``mpiexec``
(PyTorch's ``torchrun``, on MPI).

    python -m webgrad.distributed.run --nproc 4 train.py --epochs 3      # 4 ranks on this machine
    python -m webgrad.distributed.run --hosts a:4,b:4 train.py           # 8 ranks on two machines
    mpiexec -n 8 -host a:4,b:4 python -m webgrad.distributed.run train.py   # the same, by hand

Run under ``mpiexec`` (MPI's rank variables in the environment, no ``--nproc``/``--hosts``), it is
each rank's first step instead: it sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and
``LOCAL_WORLD_SIZE`` from MPI's variables, as torchrun does, and runs the script (or ``-m module``)
as ``python`` would. On this machine the ranks may outnumber the cores (Open MPI is told
``--oversubscribe``), as root Open MPI is allowed to run (``OMPI_ALLOW_RUN_AS_ROOT``), and, as
torchrun does, ``OMP_NUM_THREADS`` is 1 unless set (numpy's BLAS threads follow it).
``--dry-run`` prints the ``mpiexec`` line instead of running it.
"""
from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
from typing import NamedTuple

from .mpi import INSTALL_HINT


class Implementation(NamedTuple):
    """What the launcher needs to know of one MPI implementation's ``mpiexec``."""
    marks: tuple          # words in `mpiexec --version` that name it
    local_flags: tuple    # flags for ranks on this machine only
    host_flag: str        # the flag that lists hosts (host:slots,...)
    root_env: dict        # environment that lets it run as root


IMPLEMENTATIONS = {
    "Open MPI": Implementation(("Open MPI", "OpenRTE"), ("--oversubscribe", "--bind-to", "none"), "-host",
                               {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}),
    "MPICH": Implementation(("HYDRA", "MPICH"), (), "-hosts", {}),
}

# The variables mpiexec gives each rank, per implementation: rank, world size, local rank, local world size.
RANK_VARIABLES = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
)
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m webgrad.distributed.run", description=__doc__.splitlines()[0])
    p.add_argument("--nproc", "--nproc_per_node", "--nproc-per-node", dest="nproc", default=None,
                   help="ranks to start (per host with --hosts); 'auto': one per core (default 1)")
    p.add_argument("--hosts", default=None, help="host[:ranks],... to start ranks on several machines")
    p.add_argument("--mpiexec", default="mpiexec", help="the mpiexec to run (default: mpiexec on PATH)")
    p.add_argument("--dry-run", action="store_true", help="print the mpiexec command line and exit")
    p.add_argument("--standalone", action="store_true", help="accepted as torchrun's; no effect")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module (python -m)")
    p.add_argument("script", help="the training script (or module, with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def rank_variables(environ=os.environ) -> dict | None:
    """torchrun's variables for this rank from MPI's, or None when not started by mpiexec.

    >>> rank_variables({"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"})
    {'RANK': '1', 'WORLD_SIZE': '2', 'LOCAL_RANK': '1', 'LOCAL_WORLD_SIZE': '2'}
    """
    for names in RANK_VARIABLES:
        if names[0] in environ and names[1] in environ:
            values = [environ.get(n) for n in names]
            values[2] = values[2] or values[0]          # no local rank given: one host
            values[3] = values[3] or values[1]
            return dict(zip(TORCHRUN_VARIABLES, values))
    return None


def implementation(mpiexec: str) -> Implementation:
    """The MPI implementation behind ``mpiexec`` (Open MPI's flags when it cannot tell)."""
    out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    return next((impl for impl in IMPLEMENTATIONS.values() if any(m in text for m in impl.marks)),
                IMPLEMENTATIONS["Open MPI"])


def _count(who: str, text) -> int:
    if text == "auto":
        return os.cpu_count() or 1
    n = int(text) if str(text).isdigit() else 0
    if n < 1:
        raise SystemExit(f"webgrad.distributed.run: {who} must be a positive number of ranks or 'auto', got {text!r}")
    return n


def hosts_and_total(hosts: str, nproc) -> tuple:
    """(host list for mpiexec, total ranks) from ``--hosts a:4,b`` (ranks per host: its count, else
    ``nproc``, else 1).

    >>> hosts_and_total("a:4,b", "2")
    ('a:4,b:2', 6)
    """
    per_host = _count("--nproc", nproc) if nproc is not None else 1
    entries = []
    for item in hosts.split(","):
        name, _, count = item.strip().partition(":")
        entries.append((name, _count(f"the rank count of host {name!r}", count) if count else per_host))
    return ",".join(f"{h}:{n}" for h, n in entries), sum(n for _, n in entries)


def command(args, impl: Implementation) -> list:
    """The ``mpiexec`` command line that starts the ranks."""
    if args.hosts:
        host_list, total = hosts_and_total(args.hosts, args.nproc)
        placement = [impl.host_flag, host_list]
    else:
        total = _count("--nproc", args.nproc) if args.nproc is not None else 1
        placement = list(impl.local_flags)
    rank = [sys.executable, "-m", "webgrad.distributed.run", *(["-m"] if args.module else []), args.script]
    return [args.mpiexec, "-n", str(total), *placement, *rank, *args.script_args]


def launch(args) -> int:
    """Start the ranks through mpiexec and return its exit status."""
    if shutil.which(args.mpiexec) is None:
        raise SystemExit(f"webgrad.distributed.run: {args.mpiexec!r} not found; {INSTALL_HINT}")
    impl = implementation(args.mpiexec)
    cmd = command(args, impl)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(impl.root_env)
    if int(cmd[2]) > 1 and "OMP_NUM_THREADS" not in env:   # as torchrun: ranks would fight over the cores
        env["OMP_NUM_THREADS"] = "1"
        print("webgrad.distributed.run: OMP_NUM_THREADS=1 for each rank (numpy's BLAS threads would oversubscribe "
              "the cores); set it to change that", file=sys.stderr)
    return subprocess.call(cmd, env=env)


def run_rank(args, variables: dict) -> None:
    """Be one rank: set torchrun's variables, then run the script as ``python`` would."""
    os.environ.update(variables)
    sys.argv = [args.script, *args.script_args]
    if args.module:
        runpy.run_module(args.script, run_name="__main__", alter_sys=True)
        return
    sys.path[0] = os.path.dirname(os.path.abspath(args.script))
    runpy.run_path(args.script, run_name="__main__")


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    variables = rank_variables()
    if variables is not None and args.nproc is None and args.hosts is None and not args.dry_run:
        run_rank(args, variables)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
