"""Source: PyTorch tutorial "NLP From Scratch: Classifying Names with a Character-Level RNN"
(https://pytorch.org/tutorials/intermediate/char_rnn_classification_tutorial.html, its
earlier edition with i2h / i2o), written from the original.
Adapted: no names files: n_categories 4 instead of the 18 languages, n_hidden 8 instead of
128; the body of train() written at the top level for one name ("Albert", category 1), the
update of the parameters (p.data.add_) left out."""

import string

import torch
import torch.nn as nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
n_categories = 4


# Find letter index from all_letters, e.g. "a" = 0
def letterToIndex(letter):
    return all_letters.find(letter)


# Turn a line into a <line_length x 1 x n_letters>,
# or an array of one-hot letter vectors
def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()

        self.hidden_size = hidden_size

        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 8
rnn = RNN(n_letters, n_hidden, n_categories)

criterion = nn.NLLLoss()
learning_rate = 0.005  # If you set this too high, it might explode. If too low, it might not learn

category_tensor = torch.tensor([1], dtype=torch.long)
line_tensor = lineToTensor("Albert")

hidden = rnn.initHidden()

rnn.zero_grad()

for i in range(line_tensor.size()[0]):
    output, hidden = rnn(line_tensor[i], hidden)

loss = criterion(output, category_tensor)
loss.backward()
