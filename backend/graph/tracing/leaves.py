"""Tensors of the traced run as the params of a leaf node (`tensor`, `parameter`) or a layer's
state: nested lists of the dtypes a graph document holds."""

import torch

from .capture import CaptureError

_DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.bool: "bool",
}


def tensor_params(t, what):
    """The `value` and `dtype` params a leaf holding tensor `t` needs."""
    dtype = _DTYPES.get(t.dtype)
    if dtype is None:
        raise CaptureError(
            f"{what} is a {str(t.dtype).removeprefix('torch.')} tensor; the graph holds "
            "float32, float64, int64 and bool tensors"
        )
    if t.device.type != "cpu":
        t = t.cpu()
    return {"value": t.detach().tolist(), "dtype": dtype}
