"""Source: PyTorch tutorial "Quickstart" (https://pytorch.org/tutorials/beginner/basics/quickstart_tutorial.html),
the model NeuralNetwork and one step of its train(), written from the original.
Adapted: no FashionMNIST or DataLoader: a batch of 2 fixed 28x28 images and labels [9, 2];
the hidden width 512 made 16 (a size for a test); no CUDA/MPS device pick; train() written
as one batch at the top level (zero_grad, forward, loss, backward) without optimizer.step()."""

import torch
from torch import nn

device = "cpu"
print(f"Using {device} device")


# Define model
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 16),
            nn.ReLU(),
            nn.Linear(16, 16),
            nn.ReLU(),
            nn.Linear(16, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

X = torch.arange(1568, dtype=torch.float32).reshape(2, 1, 28, 28) / 1568.0
y = torch.tensor([9, 2])
model.train()
X, y = X.to(device), y.to(device)

# Compute prediction error
pred = model(X)
loss = loss_fn(pred, y)

# Backpropagation
loss.backward()
