"""Source: the classic PyTorch training loop of the tutorials ("Optimizing Model Parameters",
https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html, and "Training a
Classifier"): a model, a loss, SGD, and for each batch zero_grad, forward, loss, backward,
step; written in our own words.
Adapted: the data a list of one batch (4 rows of 3 fixed values, labels) instead of a
DataLoader; epochs 1 (one step: the loss and gradients compared are those of the first
batch, before its step changes the weights)."""

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        return self.fc2(x)


net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

inputs = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.0, 1.0, 1.0], [-2.0, 0.5, 0.1]])
labels = torch.tensor([1, 0, 1, 0])
trainloader = [(inputs, labels)]

for epoch in range(1):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()

print('Finished Training')
