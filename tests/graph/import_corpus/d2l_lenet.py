"""Source: d2l.ai, "Dive into Deep Learning", chapter Convolutional Neural Networks (LeNet),
the PyTorch tab (https://d2l.ai/chapter_convolutional-neural-networks/lenet.html), written
from the original.
Adapted: the input a fixed 1x1x28x28 image (an arange scaled) instead of torch.rand, and a
label [3]; the loss (nn.CrossEntropyLoss) of the last output and its backward added."""

import torch
from torch import nn

net = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
    nn.Linear(120, 84), nn.Sigmoid(),
    nn.Linear(84, 10))

X = torch.arange(784, dtype=torch.float32).reshape(1, 1, 28, 28) / 784.0
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape: \t', X.shape)

loss = nn.CrossEntropyLoss()(X, torch.tensor([3]))
loss.backward()
