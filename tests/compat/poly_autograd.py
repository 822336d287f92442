"""The PyTorch tutorials' polynomial fit with tensors and autograd: y = sin(x) approximated by
a + b x + c x^2 + d x^3, the four coefficients ``requires_grad`` scalars, the loss's ``backward()``,
and the update written by hand under ``torch.no_grad()`` with ``a -= learning_rate * a.grad``
and ``a.grad = None``. The device comes from ``torch.accelerator`` and is made the default with
``torch.set_default_device``, as the tutorial does.

    python tests/compat/poly_autograd.py

``main(steps, device, init)`` returns the losses and the initial coefficients
(see tests/compat/harness.py).
"""
import math

import torch


def main(steps=2000, device=None, init=None):
    dtype = torch.float
    if device is None:
        device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    print(f"Using {device} device")
    previous = torch.get_default_device()
    torch.set_default_device(device)
    try:
        return fit(steps, dtype, init)
    finally:
        torch.set_default_device(previous)


def fit(steps, dtype, init):
    # Create Tensors to hold input and outputs.
    # By default, requires_grad=False, which indicates that we do not need to
    # compute gradients with respect to these Tensors during the backward pass.
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)

    # Create random Tensors for weights. For a third order polynomial, we need
    # 4 weights: y = a + b x + c x^2 + d x^3
    # Setting requires_grad=True indicates that we want to compute gradients with
    # respect to these Tensors during the backward pass.
    if init is None:
        a = torch.randn((), dtype=dtype, requires_grad=True)
        b = torch.randn((), dtype=dtype, requires_grad=True)
        c = torch.randn((), dtype=dtype, requires_grad=True)
        d = torch.randn((), dtype=dtype, requires_grad=True)
    else:
        a, b, c, d = (init[k].to(x.device).requires_grad_() for k in "abcd")
    init = {k: v.detach().clone() for k, v in zip("abcd", (a, b, c, d))}

    losses = []
    learning_rate = 1e-6
    for t in range(steps):
        # Forward pass: compute predicted y using operations on Tensors.
        y_pred = a + b * x + c * x ** 2 + d * x ** 3

        # Compute and print loss using operations on Tensors.
        # Now loss is a Tensor of shape (1,)
        # loss.item() gets the scalar value held in the loss.
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        if t % 100 == 99:
            print(t, loss.item())

        # Use autograd to compute the backward pass. This call will compute the
        # gradient of loss with respect to all Tensors with requires_grad=True.
        # After this call a.grad, b.grad. c.grad and d.grad will be Tensors holding
        # the gradient of the loss with respect to a, b, c, d respectively.
        loss.backward()

        # Manually update weights using gradient descent. Wrap in torch.no_grad()
        # because weights have requires_grad=True, but we don't need to track this
        # in autograd.
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad

            # Manually zero the gradients after updating weights
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
    return {"losses": losses, "init": init}


if __name__ == "__main__":
    main()
