"""The PyTorch tutorials' polynomial fit with ``nn``: the features (x, x^2, x^3) made with
``unsqueeze(-1).pow(p)``, an ``nn.Sequential`` of ``nn.Linear(3, 1)`` and ``nn.Flatten(0, 1)``,
``nn.MSELoss(reduction='sum')``; the update by hand (``param -= learning_rate * param.grad`` under
``no_grad``) as in the nn tutorial, or by ``torch.optim.RMSprop`` as in the optim tutorial; the
fitted polynomial read back through ``model[0]``.

    python tests/compat/poly_nn.py

``main(steps, device, init, optimizer=None | "RMSprop")`` returns the losses and the initial
weights (see tests/compat/harness.py).
"""
import math

import torch


def main(steps=2000, device=None, init=None, optimizer=None):
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000, device=device)
    y = torch.sin(x)

    # For this example, the output y is a linear function of (x, x^2, x^3), so
    # we can consider it as a linear layer neural network. Let's prepare the
    # tensor (x, x^2, x^3).
    p = torch.tensor([1, 2, 3], device=device)
    xx = x.unsqueeze(-1).pow(p)

    # In the above code, x.unsqueeze(-1) has shape (2000, 1), and p has shape
    # (3,), for this case, broadcasting semantics will apply to obtain a tensor
    # of shape (2000, 3)

    # Use the nn package to define our model as a sequence of layers. nn.Sequential
    # is a Module which contains other Modules, and applies them in sequence to
    # produce its output. The Linear Module computes output from input using a
    # linear function, and holds internal Tensors for its weight and bias.
    # The Flatten layer flatens the output of the linear layer to a 1D tensor,
    # to match the shape of `y`.
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    if init is not None:
        model.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.to(device)

    # The nn package also contains definitions of popular loss functions; in this
    # case we will use Mean Squared Error (MSE) as our loss function.
    loss_fn = torch.nn.MSELoss(reduction='sum')

    if optimizer == "RMSprop":
        learning_rate = 1e-3
        optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
    else:
        learning_rate = 1e-6
    losses = []
    for t in range(steps):
        # Forward pass: compute predicted y by passing x to the model.
        y_pred = model(xx)

        # Compute and print loss.
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        if t % 100 == 99:
            print(t, loss.item())

        if optimizer is None:
            # Zero the gradients before running the backward pass.
            model.zero_grad()
            loss.backward()
            # Update the weights using gradient descent. Each parameter is a Tensor, so
            # we can access its gradients like we did before.
            with torch.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
        else:
            # Before the backward pass, use the optimizer object to zero all of the
            # gradients for the variables it will update (which are the learnable
            # weights of the model).
            optimizer.zero_grad()
            loss.backward()
            # Calling the step function on an Optimizer makes an update to its parameters
            optimizer.step()

    # You can access the first layer of `model` like accessing the first item of a list
    linear_layer = model[0]

    # For linear layer, its parameters are stored as `weight` and `bias`.
    print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
          f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
    return {"losses": losses, "init": init}


if __name__ == "__main__":
    main()
