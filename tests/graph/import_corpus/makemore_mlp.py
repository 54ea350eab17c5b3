"""Source: karpathy/nn-zero-to-hero, lectures/makemore/makemore_part2_mlp.ipynb (the MLP of
Bengio et al. 2003, "makemore part 2"), written from the original.
Adapted: no names.txt: a batch of 4 contexts of 3 character indices (block_size 3) and their
next characters, fixed; the parameters drawn with torch.randn(..., generator=g) as the notebook
does; one forward and backward of a minibatch (no training loop)."""

import torch
import torch.nn.functional as F
import random

block_size = 3
g = torch.Generator().manual_seed(2147483647)  # for reproducibility
C = torch.randn((27, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))  # number of parameters in total
for p in parameters:
    p.requires_grad = True

Xb = torch.tensor([[0, 0, 5], [0, 5, 13], [5, 13, 13], [13, 13, 1]])
Yb = torch.tensor([13, 13, 1, 0])
emb = C[Xb]  # (32, 3, 10)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 200)
logits = h @ W2 + b2  # (32, 27)
loss = F.cross_entropy(logits, Yb)
for p in parameters:
    p.grad = None
loss.backward()
