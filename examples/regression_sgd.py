"""Regression with the seed's two-layer network, now as an ``nn.Module`` trained by ``optim.SGD``
(momentum) on a noiseless linear target; prints the final mean squared error.

Run: ``python examples/regression_sgd.py`` (``--steps N``, ``--quick``, ``--backend NAME``). The default
run, 300 steps, takes about 1 s on a 2-core CPU (``--quick``: 150 steps); the loss curve goes to
``examples/regression_sgd.png``.
"""
import argparse

from common import progress_bar, save_plot

import webgrad as wg
import webgrad.nn as nn


class TwoLayerNet(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.hidden, self.out = nn.Linear(d_in, d_hidden), nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.out(self.hidden(x))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--quick", action="store_true", help="a short run (150 steps)")
    p.add_argument("--backend", default=None)
    args = p.parse_args(argv)
    steps = 150 if args.quick else args.steps
    if args.backend:
        wg.set_backend(args.backend)
    print(f"regression_sgd: {steps} steps (the default 300 take about 1 s on a 2-core CPU)")
    print(f"backend: {wg.get_backend().name!r}")
    wg.manual_seed(0)
    x = wg.randn(256, 10)
    y = x @ wg.randn(10, 1) + 0.5
    model = TwoLayerNet(10, 32, 1)
    opt = wg.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    loss_fn = nn.MSELoss()
    losses, every, bar = [], max(1, steps // 20), progress_bar(steps, "train", unit="step")
    for step in range(1, steps + 1):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0 or step == steps:     # a readback every few steps, not every step
            losses.append(loss.item())
            bar.set_postfix_str(f"mse {losses[-1]:.3g}", refresh=False)
            bar.update(step - bar.n)
    bar.close()
    print(f"final mse: {loss_fn(model(x), y).item():.6g}")
    save_plot(losses, "regression_sgd.png", "mse", xlabel=f"step / {every}", log_y=True)


if __name__ == "__main__":
    main()
