"""Source: eriklindernoren/PyTorch-GAN, implementations/gan/gan.py (the original GAN of
Goodfellow et al. with MLPs), written from the original.
Adapted: no argparse and no MNIST: the options as a plain class (latent_dim 8, img_size 4,
channels 1); the layer sizes 128/256/512/1024 made 16/32/32/32 and the discriminator's
512/256 made 32/16 (sizes for a test); no CUDA, Variable or torch.FloatTensor: valid is
torch.ones, z a fixed batch of 4 instead of np.random.normal; one generator step (zero_grad,
forward, g_loss, backward) without optimizer_G.step(), g_loss bound to `loss` too."""

import numpy as np
import torch
import torch.nn as nn


class opt:
    latent_dim = 8
    img_size = 4
    channels = 1
    lr = 0.0002
    b1 = 0.5
    b2 = 0.999


img_shape = (opt.channels, opt.img_size, opt.img_size)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(
            *block(opt.latent_dim, 16, normalize=False),
            *block(16, 32),
            *block(32, 32),
            nn.Linear(32, int(np.prod(img_shape))),
            nn.Tanh()
        )

    def forward(self, z):
        img = self.model(z)
        img = img.view(img.size(0), *img_shape)
        return img


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()

        self.model = nn.Sequential(
            nn.Linear(int(np.prod(img_shape)), 32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(32, 16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(16, 1),
            nn.Sigmoid(),
        )

    def forward(self, img):
        img_flat = img.view(img.size(0), -1)
        validity = self.model(img_flat)

        return validity


# Loss function
adversarial_loss = torch.nn.BCELoss()

# Initialize generator and discriminator
generator = Generator()
discriminator = Discriminator()

# Optimizers
optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))

# Adversarial ground truths
valid = torch.ones(4, 1)

# -----------------
#  Train Generator
# -----------------

optimizer_G.zero_grad()

# Sample noise as generator input
z = (torch.arange(32, dtype=torch.float32).reshape(4, opt.latent_dim) - 16.0) / 16.0

# Generate a batch of images
gen_imgs = generator(z)

# Loss measures generator's ability to fool the discriminator
g_loss = adversarial_loss(discriminator(gen_imgs), valid)

g_loss.backward()
loss = g_loss
