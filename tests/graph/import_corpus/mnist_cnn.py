"""Source: the small convolutional classifier of the PyTorch beginner tutorials on MNIST-like
images (two conv + pool stages, a flatten and two linear layers, cross entropy), written in
our own words.
Adapted: a batch of 2 single-channel 12x12 images made from an arange instead of the
dataset's 28x28 images (sizes scaled down), labels written out."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(8 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))  # 12x12 -> 6x6
        x = self.pool(F.relu(self.conv2(x)))  # 6x6 -> 3x3
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


net = ConvNet()
images = torch.arange(288, dtype=torch.float32).reshape(2, 1, 12, 12) / 288.0
labels = torch.tensor([3, 7])
criterion = nn.CrossEntropyLoss()
outputs = net(images)
loss = criterion(outputs, labels)
loss.backward()
