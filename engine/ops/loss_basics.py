"""The checks every loss shares (reduction, input and target sizes) and the first three losses:
mse_loss, l1_loss and binary_cross_entropy, each one fused node with PyTorch's name. The
other losses (nll_loss, cross_entropy, ...) live in losses.py."""

import warnings

import numpy as np

from ._common import STATE, Node, Tensor, broadcast_error, const, track, wrap, xp
from .reduce import sum_to

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _size(shape):
    """A shape as PyTorch prints it in messages (torch.Size, not the engine's repr)."""
    return f"torch.Size({list(shape)})"


def _check_same_size(input, target, stacklevel=3):
    if input._data.shape != target._data.shape:
        want, got = _size(target.shape), _size(input.shape)
        warnings.warn(
            f"Using a target size ({want}) that is different to the input size "
            f"({got}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=stacklevel,
        )


class MseLossBackward0(Node):
    __slots__ = ("reduction", "shapes")

    def backward(self, g):
        x, t = self.unpack()
        diff = x - t
        scale = 2.0 / diff._data.size if self.reduction == "mean" else 2.0
        gd = g * diff * scale
        sx, st = self.shapes
        return (
            sum_to(gd, sx) if self.needs_grad(0) else None,
            sum_to(-gd, st) if self.needs_grad(1) else None,
        )


def mse_loss(input, target, reduction="mean"):
    _check_reduction(reduction)
    _check_same_size(input, target)
    xd, td = input._data, target._data
    try:
        sq = (xd - td) ** 2
    except ValueError:
        raise broadcast_error(xd.shape, td.shape) from None
    data = sq.mean() if reduction == "mean" else sq.sum() if reduction == "sum" else sq
    out = wrap(data)
    if STATE.enabled and (input._requires_grad or target._requires_grad):
        node = MseLossBackward0((input, target), (input, target))
        node.reduction, node.shapes = reduction, (xd.shape, td.shape)
        track(out, node)
    return out


def l1_loss(input, target, reduction="mean"):
    _check_reduction(reduction)
    _check_same_size(input, target)
    return _reduce((input - target).abs(), reduction)


class BinaryCrossEntropyBackward0(Node):
    __slots__ = ("reduction", "weight")

    def backward(self, g):
        x, t = self.unpack()
        n = x._data.size if self.reduction == "mean" else 1
        w = 1.0 if self.weight is None else self.weight
        gx = gt = None
        if self.needs_grad(0):
            denom = (x * (1 - x)).clamp(min=1e-12)
            gx = g * (x - t) / denom * w / n
        if self.needs_grad(1):
            gt = g * ((1 - x).log() - x.log()) * w / n
        return (gx, gt)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    _check_reduction(reduction)
    xd, td = input._data, target._data
    if xd.shape != td.shape:
        raise ValueError(
            f"Using a target size ({_size(target.shape)}) that is different to the input "
            f"size ({_size(input.shape)}) is deprecated. Please ensure they have the same "
            "size."
        )
    m = xp(xd)
    if bool(((xd < 0) | (xd > 1)).any()) or bool(m.isnan(xd).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if bool(((td < 0) | (td > 1)).any()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    # PyTorch clamps each log at -100 so that a confident wrong answer costs 100, not inf
    loss = -(td * m.maximum(m.log(xd), -100) + (1 - td) * m.maximum(m.log(1 - xd), -100))
    w = None
    if weight is not None:
        w = weight._data
        loss = loss * w
    data = loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    out = wrap(data.astype(xd.dtype, copy=False))
    if STATE.enabled and (input._requires_grad or target._requires_grad):
        node = BinaryCrossEntropyBackward0((input, target), (input, target))
        node.reduction, node.weight = reduction, None if w is None else const(w)
        track(out, node)
    return out


def _as_tensor(x, like):
    return x if isinstance(x, Tensor) else wrap(np.asarray(x, like._data.dtype))


__all__ = []
METHODS = {}
INPLACE = {}
FUNCTIONAL = {n: globals()[n] for n in ("mse_loss", "l1_loss", "binary_cross_entropy")}
