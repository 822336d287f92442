"""A convolutional classifier of MNIST-shaped digits, written the way the PyTorch examples' MNIST
script is: two convolutions, max-pooling, dropout, two linear layers, ``log_softmax`` with
``nll_loss``, ``Adadelta`` with a ``StepLR`` schedule, ``DataLoader`` batches, a test pass under
``no_grad`` counting correct predictions, and the weights saved with ``torch.save``.

The images are synthetic (1x28x28 in [0, 1], drawn with numpy from a fixed seed) so the script
needs no download; the labels are a function of the images, so there is something to learn.

    python tests/compat/mnist_cnn.py --epochs 2

``main(steps, device, init, ...)`` trains ``steps`` batches (spread over the epochs) and returns
the losses and the initial weights (see tests/compat/harness.py).
"""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dropout1=0.25, dropout2=0.5):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(dropout1)
        self.dropout2 = nn.Dropout(dropout2)
        self.fc1 = nn.Linear(2304, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))
    return test_loss, correct


def digits(n, seed):
    """``n`` synthetic 28x28 images and labels: the label is which of ten bands is brightest."""
    rng = np.random.default_rng(seed)
    images = rng.random((n, 1, 28, 28), dtype=np.float32) * 0.5
    labels = rng.integers(0, 10, n)
    for i, label in enumerate(labels):
        images[i, 0, 2 + 2 * label:4 + 2 * label, 4:24] += 0.5
    images = (images - 0.1307) / 0.3081   # the usual MNIST normalisation
    return torch.from_numpy(images), torch.from_numpy(labels)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=8, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=16, metavar='N')
    parser.add_argument('--epochs', type=int, default=2, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--dry-run', action='store_true', default=False)
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=4, metavar='N')
    parser.add_argument('--save-model', action='store_true', default=False)
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, out_dir=None, dropout=None, argv=None):
    """Train (``steps`` batches in all when given); returns {"losses", "init", "test"}.
    ``dropout=0.0`` turns both dropout layers off (the comparison needs it)."""
    args = parse_args(argv if argv is not None else [])
    if steps is not None:
        args.save_model = True
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    if device is None:
        device = torch.device("cuda" if use_cuda else "cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)
    per_epoch = -(-steps // args.epochs) if steps is not None else 8
    dataset1 = TensorDataset(*digits(per_epoch * args.batch_size, args.seed))
    dataset2 = TensorDataset(*digits(2 * args.test_batch_size, args.seed + 1))
    train_loader = DataLoader(dataset1, **train_kwargs)
    test_loader = DataLoader(dataset2, **test_kwargs)

    model = Net(*(2 * [dropout] if dropout is not None else [])).to(device)
    if init is not None:
        model.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    losses, results = [], []
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        results.append(test(model, device, test_loader))
        scheduler.step()

    if args.save_model:
        path = os.path.join(out_dir or tempfile.mkdtemp(), "mnist_cnn.pt")
        torch.save(model.state_dict(), path)
        reloaded = Net()
        reloaded.load_state_dict(torch.load(path))
    return {"losses": losses[:steps], "init": init, "test": results}


if __name__ == '__main__':
    import sys
    main(argv=sys.argv[1:])
