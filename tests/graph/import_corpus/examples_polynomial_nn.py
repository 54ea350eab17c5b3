"""Source: PyTorch tutorial "Learning PyTorch with Examples", nn module
(https://pytorch.org/tutorials/beginner/pytorch_with_examples.html, polynomial_nn.py), written
from the original. Adapted: 20 points instead of 2000; one forward and backward of the
original's loss (no loop of 2000 steps, no manual update)."""

import torch
import math


# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 20)
y = torch.sin(x)

# For this example, the output y is a linear function of (x, x^2, x^3), so
# we can consider it as a linear layer neural network. Let's prepare the
# tensor (x, x^2, x^3).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)

loss_fn = torch.nn.MSELoss(reduction='sum')

y_pred = model(xx)
loss = loss_fn(y_pred, y)
model.zero_grad()
loss.backward()
