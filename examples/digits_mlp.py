"""Train an MLP on scikit-learn's bundled 8x8 digits (no download) to >= 95% test accuracy.

The README's main job: ``python examples/digits_mlp.py`` runs on the best available backend
(``--backend cpu`` chooses one) and prints the test accuracy; its loss and accuracy curves go to
``examples/digits_mlp.png`` (matplotlib). The default run, 30 epochs, takes about 3 s on a
2-core CPU (about 20 s on wgpu over lavapipe, a CPU Vulkan); ``--quick`` (8 epochs) about 2 s.
``--compile`` runs the training step through ``wg.compile`` (same results: bit for bit on cpu).
"""
import argparse
import time

from common import accuracy, load_digits, progress_bar, report_compiled, save_plot

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--quick", action="store_true", help="a short run (8 epochs)")
    p.add_argument("--backend", default=None, help="cpu, wgpu, ... (default: the best available)")
    p.add_argument("--compile", action="store_true", help="compile the training step with wg.compile")
    args = p.parse_args(argv)
    epochs = 8 if args.quick else args.epochs
    if args.backend:
        wg.set_backend(args.backend)
    print(f"digits_mlp: {epochs} epochs (the default 30 take about 3 s on a 2-core CPU; --quick, 8, about 2 s)")
    print(f"backend: {wg.get_backend().name!r}")
    wg.manual_seed(0)

    x_train, y_train, x_test, y_test = load_digits()
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = wg.optim.Adam(model.parameters(), lr=3e-3)
    sched = wg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    loader = wg.data.DataLoader(wg.data.TensorDataset(x_train, y_train), batch_size=64, shuffle=True, generator=0)

    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    step = wg.compile(train_step) if args.compile else train_step
    losses, accuracies, start = [], [], time.perf_counter()
    bar = progress_bar(epochs, "train", unit="epoch")
    for epoch in range(1, epochs + 1):
        model.train()
        total = 0.0
        for x, y in loader:
            total = total + step(x, y)          # stays on the backend: one readback per epoch
        sched.step()
        losses.append(float(total) / len(loader))
        accuracies.append(accuracy(model, x_test, y_test))
        bar.set_postfix_str(f"loss {losses[-1]:.4f}, test accuracy {accuracies[-1]:.3f}", refresh=False)
        bar.update()
    bar.close()
    print(f"train time: {time.perf_counter() - start:.1f}s")
    print(f"train accuracy: {accuracy(model, x_train, y_train):.4f}")
    print(f"test accuracy: {accuracies[-1]:.4f}")
    print(f"losses: {losses}")
    report_compiled(step)
    save_plot({"train loss": losses, "test accuracy": accuracies}, "digits_mlp.png",
              title=f"digits MLP on {wg.get_backend().name}: {accuracies[-1]:.1%} test accuracy")


if __name__ == "__main__":
    main()
