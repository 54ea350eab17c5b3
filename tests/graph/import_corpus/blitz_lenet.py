"""Source: PyTorch "Deep Learning with PyTorch: A 60 Minute Blitz", Neural Networks
(https://pytorch.org/tutorials/beginner/blitz/neural_networks_tutorial.html), class Net.
Adapted: the input is 1x1x32x32 of fixed values (an arange) instead of torch.randn (sizes as written); the
target is an arange instead of torch.randn(10); the loss is the tutorial's nn.MSELoss."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution
        # kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square, you can specify with a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # all dimensions except the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


net = Net()
print(net)

input = (torch.arange(1024, dtype=torch.float32).reshape(1, 1, 32, 32) - 512.0) / 512.0
output = net(input)
print(output)

target = torch.arange(10, dtype=torch.float32) / 10.0  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)
net.zero_grad()  # zeroes the gradient buffers of all parameters
loss.backward()
