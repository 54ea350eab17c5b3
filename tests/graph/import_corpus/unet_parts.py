"""Source: milesial/Pytorch-UNet, unet/unet_parts.py, DoubleConv, Down and OutConv
(https://github.com/milesial/Pytorch-UNet/blob/master/unet/unet_parts.py), written from the
original.
Adapted: Up (its Upsample / ConvTranspose2d and F.pad) left out; one 1x2x8x8 input of fixed
values through Down(2, 4) and OutConv(4, 3), and a loss, the mean of the output, added."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Module):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    """Downscaling with maxpool then double conv"""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(
            nn.MaxPool2d(2),
            DoubleConv(in_channels, out_channels)
        )

    def forward(self, x):
        return self.maxpool_conv(x)


class OutConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(OutConv, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        return self.conv(x)


down = Down(2, 4)
outc = OutConv(4, 3)
x = (torch.arange(128, dtype=torch.float32).reshape(1, 2, 8, 8) - 64.0) / 64.0
loss = outc(down(x)).mean()
loss.backward()
