"""The model the notebook benches trace (bench/notebook.py, bench/notebook_page.py): `Deep(n)`,
a residual stack of n `Block`s (LayerNorm, Linear, tanh, a half-weighted skip) and a Linear
head; 100 blocks unpack to about 700 graph nodes, 70 to about 500."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc, self.ln = nn.Linear(d, d), nn.LayerNorm(d)

    def forward(self, x):
        return x + torch.tanh(self.fc(self.ln(x))) * 0.5


class Deep(nn.Module):
    def __init__(self, n, d=16):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)
