"""Source: huggingface/pytorch-image-models (timm), timm/layers/patch_embed.py PatchEmbed and
timm/layers/helpers.py to_2tuple (its 0.6 edition), written from the original.
Adapted: _assert written as assert; img_size 8, patch_size 4, in_chans 2, embed_dim 8 (sizes
for a test) with norm_layer nn.LayerNorm; one 1x2x8x8 input of fixed values, and a loss, the
mean of the output weighted by arange(8) along the embedding (a plain mean of a LayerNorm's
output is 0), added."""

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


class PatchEmbed(nn.Module):
    """ 2D Image to Patch Embedding
    """
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768, norm_layer=None, flatten=True):
        super().__init__()
        img_size = to_2tuple(img_size)
        patch_size = to_2tuple(patch_size)
        self.img_size = img_size
        self.patch_size = patch_size
        self.grid_size = (img_size[0] // patch_size[0], img_size[1] // patch_size[1])
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        self.flatten = flatten

        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()

    def forward(self, x):
        B, C, H, W = x.shape
        assert H == self.img_size[0], f"Input image height ({H}) doesn't match model ({self.img_size[0]})."
        assert W == self.img_size[1], f"Input image width ({W}) doesn't match model ({self.img_size[1]})."
        x = self.proj(x)
        if self.flatten:
            x = x.flatten(2).transpose(1, 2)  # BCHW -> BNC
        x = self.norm(x)
        return x


embed = PatchEmbed(img_size=8, patch_size=4, in_chans=2, embed_dim=8, norm_layer=nn.LayerNorm)
x = (torch.arange(128, dtype=torch.float32).reshape(1, 2, 8, 8) - 64.0) / 64.0
loss = (embed(x) * torch.arange(8, dtype=torch.float32)).mean()
loss.backward()
