"""Weights files in the safetensors format (never pickle): `save_safetensors(state_dict, path)`
and `load_safetensors(path)`. The files are the ones `safetensors.torch.save_file` writes and
`load_file` reads, so a model's weights move between PyTorch and the engine either way."""

import numpy as np

from . import _creation
from ._tensor import Tensor


def save_safetensors(state_dict, path, metadata=None):
    """Write a {name: tensor} mapping (a module's state_dict) to `path`. Tensors that share
    memory are written as separate copies, as safetensors stores no aliasing."""
    from safetensors.numpy import save_file

    arrays = {}
    for name, value in state_dict.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}: expected a Tensor, got {type(value).__name__}")
        # copy(order='C'), not ascontiguousarray: that one turns a 0-d tensor into shape [1]
        arrays[name] = np.asarray(value.detach().cpu().numpy()).copy(order="C")
    save_file(arrays, str(path), metadata=metadata)


def load_safetensors(path, device="cpu"):
    """Read a safetensors file into {name: engine tensor} (pass it to `load_state_dict`)."""
    from safetensors.numpy import load_file

    return {
        name: _creation.tensor(array, device=device) for name, array in load_file(str(path)).items()
    }
