"""A small ResNet trained the way CIFAR-10 scripts (kuangliu/pytorch-cifar style) train one:
``BasicBlock`` with a 1x1 projection shortcut, ``F.relu(out + shortcut(x))``, ``F.avg_pool2d`` (or
``nn.AdaptiveAvgPool2d``) then ``view(out.size(0), -1)``, ``SGD`` with momentum, Nesterov and weight
decay, a ``CosineAnnealingLR`` stepped each batch, ``CrossEntropyLoss(label_smoothing=0.1)``, the
random-crop-and-flip augmentation written with ``F.pad``, ``torch.randint`` and ``torch.flip`` on the
batch, accuracy from ``outputs.max(1)`` and ``predicted.eq(targets).sum().item()``, and a test pass in
``eval()`` under ``torch.no_grad()``. After ``torch.manual_seed`` both libraries draw the same initial
weights, batches and augmentation.

Smaller than CIFAR's (8x8 three-channel synthetic images, 4 classes, 8-16 channels) so a test runs it in
seconds.

    python tests/compat/resnet.py --steps 4

``main(steps, device, init, ...)`` trains ``steps`` batches and returns the losses, the initial weights,
the training accuracies and the test accuracy (see tests/compat/harness.py).
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

CLASSES = 4


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(self.expansion * planes)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = F.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=CLASSES, adaptive=False):
        super(ResNet, self).__init__()
        self.in_planes = 8

        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = self._make_layer(block, 8, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 16, num_blocks[1], stride=2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1)) if adaptive else None
        self.linear = nn.Linear(16 * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.pool(out) if self.pool is not None else F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


def dataset(n, seed):
    """``n`` synthetic 3x8x8 images whose class is the quadrant holding a bright patch."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 0.3, (n, 3, 8, 8)).astype(np.float32)
    y = rng.integers(0, CLASSES, n)
    for i, c in enumerate(y):
        r, col = divmod(int(c), 2)
        x[i, :, 4 * r:4 * r + 4, 4 * col:4 * col + 4] += 1.0
    return torch.from_numpy(x), torch.from_numpy(y)


def augment(inputs):
    """Random crop (pad 1) and horizontal flip, drawn with torch's generator, per batch."""
    padded = F.pad(inputs, (1, 1, 1, 1))
    i, j = torch.randint(0, 3, (2,)).tolist()
    out = padded[:, :, i:i + 8, j:j + 8]
    if torch.rand(1).item() < 0.5:
        out = torch.flip(out, dims=[3])
    return out.contiguous()


def parse_args(argv):
    parser = argparse.ArgumentParser(description='PyTorch CIFAR10 Training')
    parser.add_argument('--lr', default=0.1, type=float, help='learning rate')
    parser.add_argument('--steps', default=6, type=int)
    parser.add_argument('--batch', default=16, type=int)
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, adaptive=False, argv=None):
    """Train ``steps`` batches; returns {"losses", "init", "train_acc", "test_acc"}."""
    args = parse_args(argv if argv is not None else [])
    steps = steps or args.steps
    torch.manual_seed(0)
    device = device or "cpu"

    trainloader = DataLoader(TensorDataset(*dataset(steps * args.batch, 1)), batch_size=args.batch, shuffle=True)
    testloader = DataLoader(TensorDataset(*dataset(2 * args.batch, 2)), batch_size=args.batch, shuffle=False)

    net = ResNet(BasicBlock, [1, 1], adaptive=adaptive)
    if init is not None:
        net.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in net.state_dict().items()}
    net = net.to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)

    losses, train_acc = [], []
    net.train()
    correct = total = 0
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = augment(inputs).to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        scheduler.step()

        losses.append(loss.item())
        _, predicted = outputs.max(1)
        total += targets.size(0)
        correct += predicted.eq(targets).sum().item()
        train_acc.append(100. * correct / total)
        print('%d | Loss: %.3f | Acc: %.3f%% (%d/%d) | lr %.4f'
              % (batch_idx, loss.item(), 100. * correct / total, correct, total, scheduler.get_last_lr()[0]))

    net.eval()
    correct = total = 0
    with torch.no_grad():
        for inputs, targets in testloader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = net(inputs)
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    return {"losses": losses, "init": init, "train_acc": train_acc, "test_acc": 100. * correct / total}


if __name__ == "__main__":
    import sys
    main(argv=sys.argv[1:])
