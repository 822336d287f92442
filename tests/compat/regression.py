"""Regression written the way the old PyTorch tutorials and examples wrote it, through ``.data``.

Part one, a two-layer network fitted with hand-written updates in the 0.3-era tutorial style:
``Variable`` wrappers, ``.mm``/``.clamp(min=0)``, ``w.data -= lr * w.grad.data`` and
``w.grad.data.zero_()``. Part two, the examples' polynomial regression: a target polynomial,
``make_features`` with ``unsqueeze``/``cat``, an ``nn.Linear`` fitted with ``F.smooth_l1_loss``
and ``param.data.add_(-lr * param.grad)``, until the loss is small.

    python tests/compat/regression.py

``main(steps, device, init)`` runs ``steps`` updates of each part and returns the losses (both
parts, one after the other) and the initial weights (see tests/compat/harness.py).
"""
from __future__ import print_function

from itertools import count

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import Variable

POLY_DEGREE = 4


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        # AVOIDED IDIOM: '{:+.2f}'.format(w) with w a 0-d tensor (Tensor.__format__ is another helper's work)
        result += '{:+.2f} x^{} '.format(w.item(), i + 1)
    result += '{:+.2f}'.format(b[0].item())
    return result


def two_layer_net(steps, device, init, rng):
    dtype = torch.FloatTensor
    N, D_in, H, D_out = 16, 20, 12, 4
    x = Variable(torch.from_numpy(rng.standard_normal((N, D_in), dtype=np.float32)).type(dtype).to(device),
                 requires_grad=False)
    y = Variable(torch.from_numpy(rng.standard_normal((N, D_out), dtype=np.float32)).type(dtype).to(device),
                 requires_grad=False)
    if init is None:
        init = {"w1": torch.randn(D_in, H).type(dtype) * 0.3, "w2": torch.randn(H, D_out).type(dtype) * 0.3}
    w1 = Variable(init["w1"].clone().to(device), requires_grad=True)
    w2 = Variable(init["w2"].clone().to(device), requires_grad=True)
    learning_rate = 1e-3
    losses = []
    for t in range(steps):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        print(t, loss.data.item())
        losses.append(loss.item())
        loss.backward()
        w1.data -= learning_rate * w1.grad.data
        w2.data -= learning_rate * w2.grad.data
        w1.grad.data.zero_()
        w2.grad.data.zero_()
    return losses, init


def polynomial(steps, device, init, rng):
    if init is None:
        init = {"W_target": torch.randn(POLY_DEGREE, 1) * 5, "b_target": torch.randn(1) * 5,
                "fc.weight": torch.nn.Linear(POLY_DEGREE, 1).weight.data.clone(),
                "fc.bias": torch.zeros(1)}
    W_target, b_target = init["W_target"].to(device), init["b_target"].to(device)

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def get_batch(batch_size=32):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = torch.from_numpy(rng.standard_normal(batch_size, dtype=np.float32)).to(device)
        x = make_features(random)
        y = f(x)
        return x, y

    fc = torch.nn.Linear(W_target.size(0), 1).to(device)
    with torch.no_grad():
        fc.weight.copy_(init["fc.weight"])
        fc.bias.copy_(init["fc.bias"])
    losses = []
    for batch_idx in count(1):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        losses.append(loss)
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.01 * param.grad)
        if loss < 1e-3 or batch_idx == steps:
            break
    print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
    print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
    return losses, init


def main(steps=10, device=None, init=None):
    """Both fits, ``steps`` updates each; returns {"losses", "init"}."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    rng = np.random.default_rng(0)
    init = init or {}
    net_losses, net_init = two_layer_net(steps, device, {k[4:]: v for k, v in init.items() if k.startswith("net.")}
                                         or None, rng)
    poly_losses, poly_init = polynomial(steps, device, {k[5:]: v for k, v in init.items() if k.startswith("poly.")}
                                        or None, rng)
    init = {**{"net." + k: v for k, v in net_init.items()}, **{"poly." + k: v for k, v in poly_init.items()}}
    return {"losses": net_losses + poly_losses, "init": init}


if __name__ == '__main__':
    main()
