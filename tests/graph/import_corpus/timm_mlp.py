"""Source: huggingface/pytorch-image-models (timm), timm/layers/mlp.py Mlp and
timm/layers/helpers.py to_2tuple (their 0.6 edition), written from the original.
Adapted: in_features 8, hidden_features 16 (sizes for a test), drop 0.1 as ViT's blocks pass
it, in eval() so that dropout passes values through; one 2x3x8 input of fixed values, and a
loss, the mean of the square of the output, added."""

import collections.abc
from itertools import repeat

import torch
from torch import nn


# From PyTorch internals
def _ntuple(n):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    return parse


to_2tuple = _ntuple(2)


class Mlp(nn.Module):
    """ MLP as used in Vision Transformer, MLP-Mixer and related networks
    """
    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, bias=True, drop=0.):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        bias = to_2tuple(bias)
        drop_probs = to_2tuple(drop)

        self.fc1 = nn.Linear(in_features, hidden_features, bias=bias[0])
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop_probs[0])
        self.fc2 = nn.Linear(hidden_features, out_features, bias=bias[1])
        self.drop2 = nn.Dropout(drop_probs[1])

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop1(x)
        x = self.fc2(x)
        x = self.drop2(x)
        return x


mlp = Mlp(8, hidden_features=16, drop=0.1)
mlp.eval()
x = (torch.arange(48, dtype=torch.float32).reshape(2, 3, 8) - 24.0) / 24.0
loss = mlp(x).pow(2).mean()
loss.backward()
