"""Train the digits MLP of digits_mlp.py data-parallel on several ranks (DistributedDataParallel).

    python -m webgrad.distributed.run --nproc 2 examples/ddp_digits.py     # 2 ranks on this machine
    python -m webgrad.distributed.run --nproc 4 examples/ddp_digits.py --quick
    python examples/ddp_digits.py                                          # one process, no MPI needed

Written as a PyTorch DDP script is (the launcher's RANK/WORLD_SIZE switch it on): every rank
holds a replica, reads its share of each batch through DistributedSampler (64 / world size
rows, so the global batch stays 64), and DDP averages the gradients during backward. Every
rank's sampler shuffles alike, so each step's global batch holds the rows the one process's
step holds: the ranks train as the one process does and reach its test accuracy (97.1% on 1, 2
and 4 ranks here). Rank 0 prints the progress and the accuracy. The default run, 30 epochs, takes
about 3 s as one process on a 2-core CPU, about 10 s on 2 ranks and about 15 s on 4 (most of it
starting the ranks); ``--quick`` (8 epochs) about 2 s as one process.
"""
import argparse
import os
import time

from common import accuracy, load_digits, progress

import webgrad as wg
import webgrad.distributed as dist
import webgrad.nn as nn
import webgrad.nn.functional as F
from webgrad.nn.parallel import DistributedDataParallel as DDP
from webgrad.utils.data import DataLoader, DistributedSampler, TensorDataset

GLOBAL_BATCH = 64


def build_model():
    """digits_mlp.py's model, seeded alike on every rank (DDP broadcasts rank 0's anyway)."""
    wg.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--quick", action="store_true", help="a short run (8 epochs)")
    p.add_argument("--bucket-cap-mb", type=float, default=None, help="DDP's bucket size (default: PyTorch's)")
    args = p.parse_args(argv)
    epochs = 8 if args.quick else args.epochs

    distributed = int(os.environ.get("RANK", -1)) != -1       # started by a launcher
    if distributed:
        dist.init_process_group("mpi")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    if GLOBAL_BATCH % world:
        raise SystemExit(f"the global batch {GLOBAL_BATCH} does not split over {world} ranks")

    x_train, y_train, x_test, y_test = load_digits()
    model = build_model()
    ddp = DDP(model, bucket_cap_mb=args.bucket_cap_mb) if distributed else model
    opt = wg.optim.Adam(ddp.parameters(), lr=3e-3)
    sched = wg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    data = TensorDataset(x_train, y_train)
    # every rank shuffles alike and takes every world-th index, so each step's global batch holds the
    # same 64 rows as the one process's step does (world 1): the ranks train as the one process does
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, seed=0)
    loader = DataLoader(data, batch_size=GLOBAL_BATCH // world, sampler=sampler)
    if rank == 0:
        print(f"ddp_digits: {epochs} epochs on {world} rank(s) (the default 30 take about 3 s as one process on a "
              f"2-core CPU; --quick, 8, about 2 s)")

    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)              # a new shuffle each epoch, the same on every rank
        ddp.train()
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = total + loss.detach()
        sched.step()
        if rank == 0:
            progress(epoch, epochs, f"loss {float(total) / len(loader):.4f} (rank 0's share)")
    if rank == 0:
        print(f"train time: {time.perf_counter() - start:.1f}s")
        print(f"test accuracy: {accuracy(model, x_test, y_test):.4f}")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
