"""Source: d2l.ai, "Dive into Deep Learning", chapter Linear Neural Networks for
Classification, softmax regression from scratch, the PyTorch tab
(https://d2l.ai/chapter_linear-classification/softmax-regression-scratch.html), written from
the original (its earlier, function-based edition).
Adapted: num_inputs 784 made 16 (4x4 images); torch.manual_seed(0) before the draw; no
Fashion-MNIST and no d2l.train_ch3: a batch of 2 fixed images and labels [0, 2], one forward
and backward of the mean of cross_entropy (the `loss` the corpus test reads)."""

import torch

num_inputs = 16
num_outputs = 10

torch.manual_seed(0)
W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
b = torch.zeros(num_outputs, requires_grad=True)


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdim=True)
    return X_exp / partition  # The broadcasting mechanism is applied here


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


def cross_entropy(y_hat, y):
    return - torch.log(y_hat[range(len(y_hat)), y])


X = torch.arange(32, dtype=torch.float32).reshape(2, 1, 4, 4) / 32.0
y = torch.tensor([0, 2])
loss = cross_entropy(net(X), y).mean()
loss.backward()
