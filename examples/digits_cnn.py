"""A small CNN on scikit-learn's bundled 8x8 digits (no download): conv -> pool -> conv -> linear.

Run: ``python examples/digits_cnn.py`` (``--epochs N``, ``--quick``, ``--backend NAME``). The default
run, 15 epochs, takes about 3 s on a 2-core CPU, ``--quick`` (4 epochs) about 2 s; the loss and
accuracy curves go to ``examples/digits_cnn.png``. ``--compile`` runs the model through ``wg.compile``:
its forward and, through the outputs' compiled backward node, its backward (same results: bit for
bit on cpu); the optimizer step stays eager, as OneCycleLR changes AdamW's betas at every step (a
compiled step would be traced again for each).
"""
import argparse

from common import accuracy, load_digits, progress_bar, report_compiled, save_plot

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32 * 2 * 2, 10))

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))      # [N, 16, 4, 4]
        x = self.pool(F.relu(self.conv2(x)))                 # [N, 32, 2, 2]
        return self.head(x)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--quick", action="store_true", help="a short run (4 epochs)")
    p.add_argument("--backend", default=None)
    p.add_argument("--compile", action="store_true", help="compile the training step with wg.compile")
    args = p.parse_args(argv)
    epochs = 4 if args.quick else args.epochs
    if args.backend:
        wg.set_backend(args.backend)
    print(f"digits_cnn: {epochs} epochs (the default 15 take about 3 s on a 2-core CPU; --quick, 4, about 2 s)")
    print(f"backend: {wg.get_backend().name!r}")
    wg.manual_seed(0)
    x_train, y_train, x_test, y_test = load_digits(image=True)
    model = DigitsCNN()
    opt = wg.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=1e-4)
    loader = wg.data.DataLoader(wg.data.TensorDataset(x_train, y_train), batch_size=64, shuffle=True, generator=0)
    sched = wg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=epochs * len(loader))

    forward = wg.compile(model) if args.compile else model

    def step(x, y):
        loss = F.cross_entropy(forward(x), y)
        opt.zero_grad()
        loss.backward()                         # compiled: the model's part replays its traced backward
        opt.step()
        return loss.detach()
    losses, accuracies, bar = [], [], progress_bar(epochs, "train", unit="epoch")
    for epoch in range(1, epochs + 1):
        model.train()
        total = 0.0
        for x, y in loader:
            total = total + step(x, y)
            sched.step()
        losses.append(float(total) / len(loader))
        accuracies.append(accuracy(model, x_test, y_test))
        bar.set_postfix_str(f"loss {losses[-1]:.4f}, test accuracy {accuracies[-1]:.3f}", refresh=False)
        bar.update()
    bar.close()
    print(f"test accuracy: {accuracies[-1]:.4f}")
    print(f"losses: {losses}")
    report_compiled(getattr(forward, "_compiled", None))
    save_plot({"train loss": losses, "test accuracy": accuracies}, "digits_cnn.png")


if __name__ == "__main__":
    main()
