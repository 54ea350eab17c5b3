"""Source: the bigram language model of Andrej Karpathy's "Let's build GPT" lecture
(nn-zero-to-hero, gpt.py / bigram.py), written from memory in our own words.
Adapted: a vocabulary of 8 symbols and one batch of 2 x 4 token ids and their next tokens
written out instead of a text file read, encoded and sampled (get_batch); no training loop."""

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(1337)
vocab_size = 8
batch_size, block_size = 2, 4


class BigramLanguageModel(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        # each token reads off the logits for the next token from a lookup table
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets):
        logits = self.token_embedding_table(idx)  # (B, T, C)
        B, T, C = logits.shape
        logits = logits.view(B * T, C)
        targets = targets.view(B * T)
        loss = F.cross_entropy(logits, targets)
        return logits, loss


xb = torch.tensor([[1, 4, 2, 7], [3, 3, 5, 6]])
yb = torch.tensor([[4, 2, 7, 0], [3, 5, 6, 1]])
model = BigramLanguageModel(vocab_size)
logits, loss = model(xb, yb)
print(logits.shape, loss.item())
loss.backward()
