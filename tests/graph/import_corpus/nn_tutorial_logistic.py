"""Source: PyTorch tutorial "What is torch.nn really?", Neural net from scratch
(https://pytorch.org/tutorials/beginner/nn_tutorial.html), written from the original.
Adapted: no MNIST download: a batch of 2 rows of 784 fixed values and labels [5, 0]; the
weights are fixed values (an arange scaled by 1/sqrt(784)) instead of torch.randn(784, 10)."""

import math

import torch

weights = (torch.arange(7840, dtype=torch.float32).reshape(784, 10) / 7840.0 - 0.5) / math.sqrt(784)
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 2  # batch size

xb = torch.arange(1568, dtype=torch.float32).reshape(2, 784) / 1568.0  # a mini-batch from x
preds = model(xb)  # predictions
print(preds[0], preds.shape)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll

yb = torch.tensor([5, 0])
loss = loss_func(preds, yb)
print(loss)
loss.backward()
