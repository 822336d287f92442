"""Train an MLP on scikit-learn's bundled 8x8 digits (no download) to >= 95% test accuracy.

The README's main job: ``python examples/digits_mlp.py`` runs on the best available backend
(``--backend cpu`` chooses one; ``--quick`` is a short run) and prints the test accuracy.
"""
import argparse
import time

from common import accuracy, load_digits, progress, save_plot

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--quick", action="store_true", help="a short run (8 epochs)")
    p.add_argument("--backend", default=None, help="cpu, wgpu, ... (default: the best available)")
    args = p.parse_args(argv)
    epochs = 8 if args.quick else args.epochs
    if args.backend:
        wg.set_backend(args.backend)
    print(f"backend: {wg.get_backend().name!r}")
    wg.manual_seed(0)

    x_train, y_train, x_test, y_test = load_digits()
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = wg.optim.Adam(model.parameters(), lr=3e-3)
    sched = wg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    loader = wg.data.DataLoader(wg.data.TensorDataset(x_train, y_train), batch_size=64, shuffle=True, generator=0)

    losses, start = [], time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = total + loss.detach()       # stays on the backend: one readback per epoch
        sched.step()
        losses.append(float(total) / len(loader))
        progress(epoch, epochs, f"loss {losses[-1]:.4f}")
    print(f"train time: {time.perf_counter() - start:.1f}s")
    print(f"train accuracy: {accuracy(model, x_train, y_train):.4f}")
    print(f"test accuracy: {accuracy(model, x_test, y_test):.4f}")
    save_plot(losses, "digits_mlp_loss.png")


if __name__ == "__main__":
    main()
