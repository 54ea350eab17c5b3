"""Source: the Transformer block of Andrej Karpathy's "Let's build GPT" lecture (Head,
MultiHeadAttention, FeedForward, Block with pre-norm residuals), written from memory in our
own words; the hyperparameters are module-level constants as in the lecture's gpt.py.
Adapted: sizes n_embd 8, 2 heads, block 4 instead of 384 / 6 / 256; dropout 0.0; one 1x4x8
input of fixed values and a loss, the mean square of the block's output, added. The lecture's
heads are causal (a tril buffer and masked_fill); this one attends over all positions, as an
encoder block does (the causal form is nanogpt_attention.py's, not read yet)."""

import torch
import torch.nn as nn
from torch.nn import functional as F

n_embd = 8
n_head = 2
block_size = 4
dropout = 0.0


class Head(nn.Module):
    """one head of self-attention"""

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)  # (B, T, hs)
        q = self.query(x)  # (B, T, hs)
        wei = q @ k.transpose(-2, -1) * C**-0.5  # (B, T, T), scaled as in the lecture
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)
        out = wei @ v  # (B, T, hs)
        return out


class MultiHeadAttention(nn.Module):
    """several heads of self-attention side by side"""

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out


class FeedForward(nn.Module):
    """a linear layer followed by a non-linearity"""

    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """communication followed by computation"""

    def __init__(self, n_embd, n_head):
        super().__init__()
        head_size = n_embd // n_head
        self.sa = MultiHeadAttention(n_head, head_size)
        self.ffwd = FeedForward(n_embd)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x


block = Block(n_embd, n_head)
x = (torch.arange(block_size * n_embd, dtype=torch.float32).reshape(1, block_size, n_embd) - 16.0) / 16.0
loss = block(x).pow(2).mean()
loss.backward()
