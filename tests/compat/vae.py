"""A variational autoencoder, written the way the PyTorch examples' VAE script is: a linear
encoder to a mean and a log-variance, the reparameterisation trick, a sigmoid decoder,
``F.binary_cross_entropy(..., reduction='sum')`` plus the KL divergence, ``Adam``, a test pass
under ``no_grad`` and samples decoded from ``torch.randn``.

The images are synthetic (28x28 in [0, 1], drawn with numpy). The reparameterisation draws its
noise with ``torch.randn_like`` unless it is given one: the comparison with webgrad passes the
same numpy draws to both runs (two random generators cannot agree otherwise).

    python tests/compat/vae.py --epochs 2

``main(steps, device, init, ...)`` trains ``steps`` batches and returns the losses and the
initial weights (see tests/compat/harness.py).
"""
import argparse

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

H, Z = 64, 8


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, H)
        self.fc21 = nn.Linear(H, Z)
        self.fc22 = nn.Linear(H, Z)
        self.fc3 = nn.Linear(Z, H)
        self.fc4 = nn.Linear(H, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps=None):
        std = torch.exp(0.5 * logvar)
        if eps is None:
            eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps=None):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    # see Appendix B from VAE paper: Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def images(n, seed):
    """``n`` synthetic 1x28x28 images in [0, 1]: blurred strokes on a dark background."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 1, 28, 28), dtype=np.float32)
    for i in range(n):
        r, c = rng.integers(4, 20, 2)
        x[i, 0, r:r + 6, c:c + 3] = 1.0
    return np.clip(x * 0.9 + rng.random(x.shape, dtype=np.float32) * 0.1, 0.0, 1.0)


def parse_args(argv):
    parser = argparse.ArgumentParser(description='VAE MNIST Example')
    parser.add_argument('--batch-size', type=int, default=16, metavar='N')
    parser.add_argument('--epochs', type=int, default=2, metavar='N')
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=2, metavar='N')
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, out_dir=None, argv=None):
    """Train (``steps`` batches in all when given); returns {"losses", "init", "test"}."""
    args = parse_args(argv if argv is not None else [])
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = device or torch.device("cuda" if args.cuda else "cpu")
    kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}

    per_epoch = -(-steps // args.epochs) if steps is not None else 6
    train_set = torch.utils.data.TensorDataset(torch.from_numpy(images(per_epoch * args.batch_size, args.seed)))
    test_set = torch.utils.data.TensorDataset(torch.from_numpy(images(2 * args.batch_size, args.seed + 1)))
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=False, **kwargs)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=args.batch_size, shuffle=False, **kwargs)
    noise = np.random.default_rng(args.seed + 2)

    model = VAE()
    if init is not None:
        model.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model = model.to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses = []

    def train(epoch):
        model.train()
        train_loss = 0
        for batch_idx, (data,) in enumerate(train_loader):
            data = data.to(device)
            eps = torch.from_numpy(noise.standard_normal((len(data), Z), dtype=np.float32)).to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data, eps)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            losses.append(loss.item() / len(data))
            if batch_idx % args.log_interval == 0:
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item() / len(data)))
        print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(train_loader.dataset)))

    def test(epoch):
        model.eval()
        test_loss = 0
        with torch.no_grad():
            for i, (data,) in enumerate(test_loader):
                data = data.to(device)
                eps = torch.from_numpy(noise.standard_normal((len(data), Z), dtype=np.float32)).to(device)
                recon_batch, mu, logvar = model(data, eps)
                test_loss += loss_function(recon_batch, data, mu, logvar).item()
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat([data[:n], recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                    assert comparison.shape == (2 * n, 1, 28, 28)
        test_loss /= len(test_loader.dataset)
        print('====> Test set loss: {:.4f}'.format(test_loss))
        return test_loss

    test_losses = []
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test_losses.append(test(epoch))
        with torch.no_grad():
            sample = torch.randn(64, Z).to(device)
            sample = model.decode(sample).cpu()
            assert sample.view(64, 1, 28, 28).shape == (64, 1, 28, 28)
            assert 0 <= sample.min().item() and sample.max().item() <= 1
            drawn = model.reparameterize(torch.zeros(4, Z), torch.zeros(4, Z))   # torch.randn_like's noise
            assert drawn.shape == (4, Z) and drawn.std().item() > 0
    return {"losses": losses[:steps], "init": init, "test": test_losses}


if __name__ == "__main__":
    import sys
    main(argv=sys.argv[1:])
