"""Source: d2l.ai, "Dive into Deep Learning", chapter Multilayer Perceptrons, implementation
from scratch, the PyTorch tab (https://d2l.ai/chapter_multilayer-perceptrons/mlp-implementation.html),
written from the original (its earlier, function-based edition).
Adapted: num_inputs 784 made 16 and num_hiddens 256 made 8 (sizes for a test);
torch.manual_seed(0) before the draws; no Fashion-MNIST and no d2l.train_ch3: a batch of 2
fixed 4x4 images and labels [1, 7], one forward and backward; `loss` (the loss function's name)
rebound to the mean of its output, the name the corpus test reads."""

import torch
from torch import nn

num_inputs, num_outputs, num_hiddens = 16, 10, 8

torch.manual_seed(0)
W1 = nn.Parameter(torch.randn(
    num_inputs, num_hiddens, requires_grad=True) * 0.01)
b1 = nn.Parameter(torch.zeros(num_hiddens, requires_grad=True))
W2 = nn.Parameter(torch.randn(
    num_hiddens, num_outputs, requires_grad=True) * 0.01)
b2 = nn.Parameter(torch.zeros(num_outputs, requires_grad=True))

params = [W1, b1, W2, b2]


def relu(X):
    a = torch.zeros_like(X)
    return torch.max(X, a)


def net(X):
    X = X.reshape((-1, num_inputs))
    H = relu(X@W1 + b1)  # Here '@' stands for matrix multiplication
    return (H@W2 + b2)


loss = nn.CrossEntropyLoss(reduction='none')

X = torch.arange(32, dtype=torch.float32).reshape(2, 1, 4, 4) / 32.0
y = torch.tensor([1, 7])
l = loss(net(X), y)
loss = l.mean()
loss.backward()
