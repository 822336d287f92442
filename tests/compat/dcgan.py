"""A DCGAN, written the way the PyTorch examples' ``dcgan/main.py`` is: a generator of
``ConvTranspose2d`` + ``BatchNorm2d`` + ``ReLU`` ending in ``Tanh``, a discriminator of ``Conv2d`` +
``BatchNorm2d`` + ``LeakyReLU`` ending in ``Sigmoid``, ``weights_init`` through ``.data.normal_``,
``BCELoss`` against labels made with ``torch.full``, two ``Adam`` optimizers with ``betas=(0.5, 0.999)``,
``fake.detach()`` for the discriminator's step, ``output.mean().item()`` for the logs, and the fixed noise
drawn with ``torch.randn`` after ``torch.manual_seed`` (PyTorch's numbers on both libraries).

Smaller than the example (16x16 one-channel images, 8 feature maps, 16 latent dims) so a test runs it in
seconds; the images are synthetic (bright squares on a dark background, drawn with numpy).

    python tests/compat/dcgan.py --steps 4

``main(steps, device, init, ...)`` trains ``steps`` batches and returns the losses (the
discriminator's plus the generator's, per step), the initial weights and the generator's mean output on
the fixed noise after training (see tests/compat/harness.py).
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data

nc, nz, ngf, ndf = 1, 16, 8, 8


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            # input is Z, going into a convolution
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            # state size. (ngf*4) x 4 x 4
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # state size. (ngf*2) x 8 x 8
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh()
            # state size. (nc) x 16 x 16
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            # input is (nc) x 16 x 16
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf) x 8 x 8
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf*2) x 4 x 4
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


def images(n, seed):
    """``n`` synthetic 1x16x16 images in [-1, 1]: a bright square somewhere on a dark background."""
    rng = np.random.default_rng(seed)
    x = -np.ones((n, nc, 16, 16), dtype=np.float32)
    for i in range(n):
        r, c = rng.integers(0, 10, 2)
        x[i, :, r:r + 6, c:c + 6] = 1.0
    return x + rng.normal(0, 0.05, x.shape).astype(np.float32)


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument('--batchSize', type=int, default=8, help='input batch size')
    parser.add_argument('--steps', type=int, default=6)
    parser.add_argument('--lr', type=float, default=0.0002, help='learning rate, default=0.0002')
    parser.add_argument('--beta1', type=float, default=0.5, help='beta1 for adam. default=0.5')
    parser.add_argument('--manualSeed', type=int, default=999, help='manual seed')
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, argv=None):
    """Train ``steps`` batches; returns {"losses", "init", "fixed_mean", "scores"}."""
    opt = parse_args(argv if argv is not None else [])
    steps = steps or opt.steps
    torch.manual_seed(opt.manualSeed)
    device = torch.device(device or "cpu")

    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images(steps * opt.batchSize, opt.manualSeed)))
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize, shuffle=True)

    netG = Generator()
    netG.apply(weights_init)
    netD = Discriminator()
    netD.apply(weights_init)
    nets = {"G": netG, "D": netD}
    if init is not None:   # (one flat dict: "G.main.0.weight", ...)
        for name, net in nets.items():
            net.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith(name + ".")})
    init = {f"{name}.{k}": v.detach().clone() for name, net in nets.items() for k, v in net.state_dict().items()}
    netG, netD = netG.to(device), netD.to(device)

    criterion = nn.BCELoss()
    fixed_noise = torch.randn(opt.batchSize, nz, 1, 1, device=device)
    real_label = 1
    fake_label = 0

    # setup optimizer
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

    losses, scores = [], []
    for i, data in enumerate(dataloader, 0):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        # train with real
        netD.zero_grad()
        real_cpu = data[0].to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)

        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        # train with fake
        noise = torch.randn(batch_size, nz, 1, 1, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        print('[%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
              % (i, len(dataloader), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        losses.append(errD.item() + errG.item())
        scores.append(D_x)

    netG.eval()
    with torch.no_grad():
        fixed_mean = netG(fixed_noise).detach().cpu().mean().item()
    return {"losses": losses, "init": init, "fixed_mean": fixed_mean, "scores": scores}


if __name__ == "__main__":
    import sys
    main(argv=sys.argv[1:])
