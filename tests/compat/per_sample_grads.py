"""PyTorch's torch.func tutorials, as a training program: per-sample gradients and model ensembling.

Part one follows the per-sample-gradients tutorial: a small CNN's per-sample gradients by
``vmap(grad(compute_loss), in_dims=(None, None, 0, 0))`` over ``functional_call``, checked
against the tutorial's loop of one ``backward()`` per sample, then used as DP-SGD uses them
(each sample's gradient clipped to norm ``clip``, averaged, a plain SGD step; no noise, so the
run repeats). Part two follows the model-ensembling tutorial: copies of the trained model with
perturbed weights, ``stack_module_state`` and ``vmap(fmodel, in_dims=(0, 0, None))`` over a
minibatch, and each model's own minibatch with ``in_dims=0``.

    python tests/compat/per_sample_grads.py

``main(steps, device, init)`` returns the losses (one per step), the initial weights, whether
vmap's per-sample gradients matched the loop's, and the ensemble's mean log-probabilities
(see tests/compat/harness.py).
"""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.fc1 = nn.Linear(36, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


def main(steps=20, device=None, init=None, batch_size=8, clip=1.0, lr=0.5):
    device = device or "cpu"
    rng = np.random.default_rng(0)
    model = SimpleCNN().to(device)
    if init is not None:
        model.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    losses, matches = [], True
    for step in range(steps):
        data = torch.tensor(rng.standard_normal((batch_size, 1, 8, 8)).astype(np.float32), device=device)
        targets = torch.tensor(rng.integers(0, 10, batch_size), device=device)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}
        ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
        if step == 0:
            per_sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
            per_sample_grads = zip(*per_sample_grads)
            per_sample_grads = [torch.stack(shards) for shards in per_sample_grads]
            for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
                matches = matches and torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
        norms = torch.sqrt(sum((g.reshape(batch_size, -1) ** 2).sum(1) for g in ft_per_sample_grads.values()))
        scale = (clip / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for name, p in model.named_parameters():
                g = (ft_per_sample_grads[name] * scale.reshape(-1, *[1] * p.dim())).mean(0)
                p -= lr * g
            loss = loss_fn(model(data), targets)
        print(step, loss.item())
        losses.append(loss.item())
    return {"losses": losses, "init": init, "per_sample_matches": bool(matches),
            "ensemble": ensemble(model, rng, device)}


def ensemble(trained, rng, device, num_models=3):
    models = []
    for i in range(num_models):
        member = copy.deepcopy(trained)
        with torch.no_grad():
            for p in member.parameters():
                p.mul_(1.0 + 0.1 * i)
        models.append(member)
    minibatches = torch.tensor(rng.standard_normal((num_models, 4, 1, 8, 8)).astype(np.float32), device=device)
    minibatch = minibatches[0]
    params, buffers = stack_module_state(models)
    # AVOIDED IDIOM: the tutorial's copy.deepcopy(models[0]).to('meta') (webgrad has no meta device)
    base_model = models[0]

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))
    predictions1_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    predictions2_vmap = vmap(fmodel)(params, buffers, minibatches)
    expected = [model(minibatch) for model in models]
    same = all(torch.allclose(p, e, atol=1e-5, rtol=1e-4) for p, e in zip(predictions1_vmap, expected))
    return bool(same), predictions1_vmap.mean(dim=(1, 2)).tolist(), predictions2_vmap.mean(dim=(1, 2)).tolist()


if __name__ == "__main__":
    main()
