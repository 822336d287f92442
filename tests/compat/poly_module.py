"""The PyTorch tutorials' polynomial fits with custom ``nn.Module``s: ``Polynomial3`` holding
four ``nn.Parameter`` scalars trained by ``torch.optim.SGD``, and ``DynamicNet``, whose forward
pass reuses a parameter a random number of times (Python's ``random``) and is trained with SGD
and momentum; both print themselves through a ``string()`` method.

    python tests/compat/poly_module.py

``main(steps, device, init, net="Polynomial3" | "DynamicNet")`` returns the losses and the
initial weights (see tests/compat/harness.py).
"""
import math
import random

import torch


class Polynomial3(torch.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate four parameters and assign them as
        member parameters.
        """
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """
        In the forward function we accept a Tensor of input data and we must return
        a Tensor of output data. We can use Modules defined in the constructor as
        well as arbitrary operators on Tensors.
        """
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        """
        Just like any class in Python, you can also define custom method on PyTorch modules
        """
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


class DynamicNet(torch.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate five parameters and assign them as members.
        """
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """
        For the forward pass of the model, we randomly choose either 4, 5
        and reuse the e parameter to compute the contribution of these orders.

        Since each forward pass builds a dynamic computation graph, we can use normal
        Python control-flow operators like loops or conditional statements when
        defining the forward pass of the model.

        Here we also see that it is perfectly safe to reuse the same parameter many
        times when defining a computational graph.
        """
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        """
        Just like any class in Python, you can also define custom method on PyTorch modules
        """
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


def main(steps=2000, device=None, init=None, net="Polynomial3"):
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    random.seed(0)
    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000).to(device)
    y = torch.sin(x)

    # Construct our model by instantiating the class defined above
    model = Polynomial3() if net == "Polynomial3" else DynamicNet()
    if init is not None:
        model.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.to(device)

    # Construct our loss function and an Optimizer. The call to model.parameters()
    # in the SGD constructor will contain the learnable parameters (defined
    # with torch.nn.Parameter) which are members of the model.
    criterion = torch.nn.MSELoss(reduction='sum')
    if net == "Polynomial3":
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for t in range(steps):
        # Forward pass: Compute predicted y by passing x to the model
        y_pred = model(x)

        # Compute and print loss
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        if t % 100 == 99:
            print(t, loss.item())

        # Zero gradients, perform a backward pass, and update the weights.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    print(f'Result: {model.string()}')
    return {"losses": losses, "init": init}


if __name__ == "__main__":
    main()
