"""Source: karpathy/nanoGPT, model.py, GPTConfig and class MLP
(https://github.com/karpathy/nanoGPT/blob/master/model.py), written from the original.
Adapted: n_embd 8 instead of 768 and dropout 0.0 (the config's sizes); one 1x2x8 input of
fixed values, and a loss, the mean of the MLP's output, added."""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 8
    dropout: float = 0.0
    bias: bool = True


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc    = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu    = nn.GELU()
        self.c_proj  = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


config = GPTConfig()
mlp = MLP(config)
x = (torch.arange(16, dtype=torch.float32).reshape(1, 2, 8) - 8.0) / 8.0
loss = mlp(x).mean()
loss.backward()
