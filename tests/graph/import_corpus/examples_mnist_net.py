"""Source: pytorch/examples, mnist/main.py, class Net
(https://github.com/pytorch/examples/blob/main/mnist/main.py), written from the original.
Adapted: no MNIST loader, argparse or training loop; one 1x1x28x28 image of fixed values (an
arange) and label 3; model.eval() so that its two Dropout layers draw no mask (the original
trains with them on); one forward and backward of the original's F.nll_loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


if __name__ == "__main__":
    torch.manual_seed(1)
    model = Net()
    model.eval()
    data = (torch.arange(784, dtype=torch.float32).reshape(1, 1, 28, 28) - 392.0) / 392.0
    target = torch.tensor([3])
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    print("loss", loss.item())
