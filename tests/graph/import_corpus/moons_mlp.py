"""Source: the classic "two moons" binary classifier of many PyTorch beginner tutorials
(an MLP with one hidden layer, BCEWithLogitsLoss, SGD), written in our own words.
Adapted: eight points of the two half-moons written out instead of sklearn's make_moons; one
step of the training loop (zero_grad, forward, loss, backward) without the optimizer step."""

import torch
from torch import nn

X = torch.tensor(
    [
        [1.00, 0.00], [0.71, 0.71], [0.00, 1.00], [-0.71, 0.71],
        [0.00, 0.50], [0.29, -0.21], [1.00, -0.50], [1.71, -0.21],
    ]
)
y = torch.tensor([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]).unsqueeze(1)

model = nn.Sequential(
    nn.Linear(2, 16),
    nn.ReLU(),
    nn.Linear(16, 16),
    nn.ReLU(),
    nn.Linear(16, 1),
)
loss_fn = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

model.train()
optimizer.zero_grad()
logits = model(X)
loss = loss_fn(logits, y)
loss.backward()
