"""Regression with the seed's two-layer network, now as an ``nn.Module`` trained by ``optim.SGD``
(momentum) on a noiseless linear target; prints the final mean squared error.

Run: ``python examples/regression_sgd.py`` (``--steps N``).
"""
import argparse

from common import progress, save_plot

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
    p.add_argument("--backend", default=None)
    args = p.parse_args(argv)
    if args.backend:
        wg.set_backend(args.backend)
    print(f"backend: {wg.get_backend().name!r}")
    wg.manual_seed(0)
    x = wg.randn(256, 10)
    y = x @ wg.randn(10, 1) + 0.5
    model = TwoLayerNet(10, 32, 1)
    opt = wg.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    loss_fn = nn.MSELoss()
    losses = []
    for step in range(1, args.steps + 1):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % max(1, args.steps // 20) == 0 or step == args.steps:
            losses.append(loss.item())
            progress(step, args.steps, f"mse {losses[-1]:.6f}")
    print(f"final mse: {loss_fn(model(x), y).item():.6g}")
    save_plot(losses, "regression_sgd_loss.png", "mse")


if __name__ == "__main__":
    main()
