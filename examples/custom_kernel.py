"""A new op with a kernel and a gradient of its own: Swish with a learnable beta,

    swish(x, beta) = x * sigmoid(beta * x)

* the kernel ``Swish`` is a numpy function registered for the ``cpu`` backend, and a
  WGSL expression registered once for both GPU backends (``wgpu`` natively, ``webgpu``
  in the browser);
* its gradient is registered once, written with ops, so it runs on every backend and
  can be differentiated again;
* the op ``swish`` runs the kernel through ``run_kernel``, so the model below trains on
  every backend webgrad finds here.

The script checks the gradient against central finite differences (float64, cpu),
then trains a small regression model with a learnable beta on each backend.

Run: python examples/custom_kernel.py (about 5 s on a 2-core CPU with lavapipe's wgpu; ``--quick``
trains 60 steps instead of 300)
"""
import argparse

import numpy as np

import webgrad as wg
from webgrad.ops.common import binary_operands

SWISH = "Swish"  # the kernel's name: the key into both registries


@wg.register_kernel(SWISH, "cpu")
def swish_cpu(x, beta):
    """The cpu kernel: numpy arrays of one dtype in (broadcasting), the same dtype out.
    sigmoid(z) = (1 + tanh(z / 2)) / 2 does not overflow for large |z|."""
    return np.asarray(x * 0.5 * (1 + np.tanh(0.5 * beta * x)), dtype=x.dtype)


# The GPU kernel: a WGSL expression over the named inputs; webgrad broadcasts them.
wg.wgsl_elementwise(SWISH, "x / (1.0 + exp(-beta * x))", inputs=("x", "beta"))


@wg.register_gradient(SWISH, inputs_to_save=[0, 1])
def swish_grad(dy, saved, attrs):
    """d/dx = s + beta x s (1 - s),  d/dbeta = x^2 s (1 - s),  with s = sigmoid(beta x).
    The engine sums beta's gradient back to beta's shape when beta was broadcast."""
    x, beta = saved
    s = (beta * x).sigmoid()
    ds = s * (1 - s)
    return dy * (s + beta * x * ds), dy * x * x * ds


def swish(x, beta):
    """``x * sigmoid(beta * x)``; ``beta`` a tensor (broadcast against ``x``) or a number.

    >>> swish(wg.tensor([0.0, 1.0]), 1.0).tolist()  # doctest: +ELLIPSIS
    [0.0, 0.73105...]
    """
    x, beta = binary_operands("swish", x, beta)
    if not x.dtype.is_floating:
        raise TypeError(f"swish: expected floating tensors, got {x.dtype.name}")
    return wg.run_kernel(SWISH, x, beta)


def gradient_error(seed: int = 0, eps: float = 1e-6) -> float:
    """Largest difference between backward's gradients and central finite differences of
    sum(swish(x, beta) * w), in float64 on cpu."""
    rng = np.random.default_rng(seed)
    xs, b, w = rng.standard_normal((3, 4)), np.array(0.7), rng.standard_normal((3, 4))
    x = wg.tensor(xs, backend="cpu", requires_grad=True)
    beta = wg.tensor(b, backend="cpu", requires_grad=True)
    (swish(x, beta) * wg.tensor(w, backend="cpu")).sum().backward()

    def loss(xv, bv):
        with wg.no_grad():
            return float((swish(wg.tensor(xv, backend="cpu"), wg.tensor(bv, backend="cpu")).numpy() * w).sum())

    fd_x = np.zeros_like(xs)
    for i in np.ndindex(xs.shape):
        d = np.zeros_like(xs)
        d[i] = eps
        fd_x[i] = (loss(xs + d, b) - loss(xs - d, b)) / (2 * eps)
    fd_b = (loss(xs, b + eps) - loss(xs, b - eps)) / (2 * eps)
    return max(float(np.abs(x.grad.numpy() - fd_x).max()), abs(beta.grad.item() - fd_b))


class SwishMLP(wg.nn.Module):
    """1 -> hidden -> 1 with a swish activation whose beta (one per hidden unit) is learned."""

    def __init__(self, hidden: int = 16):
        super().__init__()
        self.fc1, self.fc2 = wg.nn.Linear(1, hidden), wg.nn.Linear(hidden, 1)
        self.beta = wg.nn.Parameter(wg.ones(hidden))

    def forward(self, x):
        return self.fc2(swish(self.fc1(x), self.beta))


def train(backend: str, steps: int = 300) -> tuple:
    """Fit y = sin(3x) on [-1, 1] on ``backend``; return (first loss, last loss, mean beta)."""
    wg.manual_seed(0)
    x = wg.linspace(-1, 1, 64, backend=backend).reshape(64, 1)
    y = (3 * x).sin()
    model = SwishMLP().to(backend)
    opt = wg.optim.Adam(model.parameters(), lr=0.03)
    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses[0], losses[-1], model.beta.mean().item()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a short run (60 training steps per backend)")
    steps = 60 if p.parse_args(argv).quick else 300
    print(f"custom_kernel: {steps} steps per backend (the default 300 take about 5 s on a 2-core CPU)")
    print("gradient max error:", gradient_error())
    for name in wg.backends():
        via = "numpy kernel" if name == "cpu" else "WGSL kernel"
        first, last, beta = train(name, steps)
        print(f"{name} ({via}) first loss: {first}")
        print(f"{name} ({via}) last loss: {last}")
        print(f"{name} ({via}) mean beta: {beta}")


if __name__ == "__main__":
    main()
