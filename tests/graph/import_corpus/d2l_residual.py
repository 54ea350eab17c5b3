"""Source: Dive into Deep Learning, 8.6 Residual Networks (ResNet), class Residual (PyTorch)
(https://d2l.ai/chapter_convolutional-modern/resnet.html), the edition with explicit input
channels (nn.Conv2d rather than nn.LazyConv2d), written from the original.
Adapted: d2l's own imports left out; the chapter's shape check (a 4x3x6x6 random X through
Residual(3, 3)) made a 1x3x6x6 X of fixed values, and a loss, the mean of Y, added."""

import torch
from torch import nn
from torch.nn import functional as F


class Residual(nn.Module):  #@save
    """The Residual block of ResNet."""
    def __init__(self, input_channels, num_channels, use_1x1conv=False,
                 strides=1):
        super().__init__()
        self.conv1 = nn.Conv2d(input_channels, num_channels, kernel_size=3,
                               padding=1, stride=strides)
        self.conv2 = nn.Conv2d(num_channels, num_channels, kernel_size=3,
                               padding=1)
        if use_1x1conv:
            self.conv3 = nn.Conv2d(input_channels, num_channels,
                                   kernel_size=1, stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.BatchNorm2d(num_channels)
        self.bn2 = nn.BatchNorm2d(num_channels)

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


blk = Residual(3, 3)
X = (torch.arange(108, dtype=torch.float32).reshape(1, 3, 6, 6) - 54.0) / 54.0
Y = blk(X)
loss = Y.mean()
loss.backward()
