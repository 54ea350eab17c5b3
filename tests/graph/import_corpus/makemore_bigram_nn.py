"""Source: karpathy/nn-zero-to-hero, lectures/makemore/makemore_part1_bigrams.ipynb (the
bigram model as a neural net, "makemore part 1"), written from the original.
Adapted: no names.txt: the bigrams of ".emma." written as index tensors (xs, ys) instead of
built from the words; one forward and backward (no gradient descent loop)."""

import torch
import torch.nn.functional as F

# create the dataset: the bigrams of ".emma."
xs = torch.tensor([0, 5, 13, 13, 1])
ys = torch.tensor([5, 13, 13, 1, 0])
num = xs.nelement()
print('number of examples: ', num)

# initialize the 'network'
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)

# forward pass
xenc = F.one_hot(xs, num_classes=27).float() # input to the network: one-hot encoding
logits = xenc @ W # predict log-counts
counts = logits.exp() # counts, equivalent to N
probs = counts / counts.sum(1, keepdims=True) # probabilities for next character
loss = -probs[torch.arange(num), ys].log().mean() + 0.01*(W**2).mean()
print(loss.item())

# backward pass
W.grad = None # set to zero the gradient
loss.backward()
