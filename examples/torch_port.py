"""A PyTorch training script ported to webgrad by changing its imports only.

The three import lines below are the port; with ``import torch``, ``import torch.nn as nn``
and ``import torch.nn.functional as F`` the same file runs on PyTorch (a test checks both).
It trains an MLP to classify the quadrant sign of 2-D points (XOR-like) with SGD + momentum:
40 epochs, about 1 s on a 2-core CPU (``--quick``: 10 epochs).
"""
import argparse

import webgrad as torch
import webgrad.nn as nn
import webgrad.nn.functional as F

EPOCHS = 40
BATCH = 64


class MLP(nn.Module):
    def __init__(self, d_in=2, hidden=32, classes=2):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.fc3(x)


def make_data(n):
    x = torch.randn(n, 2)
    y = (x[:, 0] * x[:, 1] > 0).long()
    return x, y


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a short run (10 epochs)")
    epochs = 10 if p.parse_args(argv).quick else EPOCHS
    print(f"torch_port: {epochs} epochs (the default {EPOCHS} take about 1 s on a 2-core CPU)")
    torch.manual_seed(0)
    x_train, y_train = make_data(1024)
    x_test, y_test = make_data(512)
    model = MLP()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.5)
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for i in range(0, x_train.shape[0], BATCH):
            xb, yb = x_train[i:i + BATCH], y_train[i:i + BATCH]
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            running += loss.item()
        scheduler.step()
        if epoch % 10 == 9:
            print(f"epoch {epoch + 1}: loss {running / (x_train.shape[0] // BATCH):.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
    print(f"test accuracy: {accuracy:.4f}")


if __name__ == "__main__":
    main()
