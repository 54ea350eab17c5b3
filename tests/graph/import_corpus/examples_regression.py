"""Source: pytorch/examples, regression/main.py (fitting a polynomial with one Linear layer),
written from the original.
Adapted: torch.manual_seed(0) before the target's draws and torch.manual_seed(1) before the
batch's (the original draws unseeded; a seed after fc is made keeps its init's draws out of
the batch's stream); the loop until
the loss is below 1e-3 cut to its first batch: zero_grad, forward, loss, backward, without the
update of fc's parameters and the prints after the loop."""

from __future__ import print_function
from itertools import count

import torch
import torch.nn.functional as F

torch.manual_seed(0)
POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = torch.nn.Linear(W_target.size(0), 1)

# Get data
torch.manual_seed(1)
batch_x, batch_y = get_batch()

# Reset gradients
fc.zero_grad()

# Forward pass
output = F.smooth_l1_loss(fc(batch_x), batch_y)
loss = output

# Backward pass
output.backward()
