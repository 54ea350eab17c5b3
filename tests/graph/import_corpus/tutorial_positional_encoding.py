"""Source: PyTorch tutorial "Language Modeling with nn.Transformer and torchtext", class
PositionalEncoding (https://pytorch.org/tutorials/beginner/transformer_tutorial.html), written
from the original.
Adapted: d_model 8, max_len 16 and dropout 0.0 (sizes for a test); one input of fixed values
of shape [seq_len 5, batch_size 1, embedding_dim 8] made to require grad, and a loss, the
mean of the square of the output, added."""

import math

import torch
from torch import nn, Tensor


class PositionalEncoding(nn.Module):

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        """
        Arguments:
            x: Tensor, shape ``[seq_len, batch_size, embedding_dim]``
        """
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


pos_encoder = PositionalEncoding(8, dropout=0.0, max_len=16)
x = ((torch.arange(40, dtype=torch.float32).reshape(5, 1, 8) - 20.0) / 20.0).requires_grad_()
loss = pos_encoder(x).pow(2).mean()
loss.backward()
