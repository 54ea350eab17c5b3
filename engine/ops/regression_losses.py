"""The losses on the difference of input and target: mse_loss, l1_loss, huber_loss and
smooth_l1_loss. mse and the huber pair are fused nodes with PyTorch's names, their backward
written with engine ops; l1_loss is PyTorch's composite."""

import numpy as np

from ._common import STATE, Node, broadcast_error, grad_casts, requires_grad, track, wrap, xp
from ._loss_common import check_reduction, check_same_size, legacy_reduction, reduce_loss
from .reduce import sum_to

__all__ = []


# -- mse, l1 ---------------------------------------------------------------------------------------
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
    check_reduction(reduction)
    check_same_size(input, target)
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
    check_reduction(reduction)
    check_same_size(input, target)
    return reduce_loss((input - target).abs(), reduction)


# -- huber, smooth_l1 ------------------------------------------------------------------------------
class HuberLossBackward0(Node):
    """d loss / d input = (input - target) clipped to [-delta, delta] (scaled by 1/beta for
    smooth_l1, whose clip is [-1, 1])."""

    __slots__ = ("reduction", "delta", "scale", "shapes", "count")

    def backward(self, g):
        x, t = self.unpack()
        diff = x - t
        d = diff.clamp(-self.delta, self.delta)
        if self.scale != 1:
            d = d * self.scale
        gd = g * d
        if self.reduction == "mean":
            gd = gd / self.count
        sx, st = self.shapes
        return (
            sum_to(gd, sx) if self.needs_grad(0) else None,
            sum_to(-gd, st) if self.needs_grad(1) else None,
        )


class SmoothL1LossBackward0(HuberLossBackward0):
    __slots__ = ()


def _pointwise_loss(input, target, reduction, elementwise, node_cls, delta, scale, weight=None):
    xd, td = input._data, target._data
    dt = xd.dtype if xd.dtype.kind == "f" else np.result_type(xd.dtype, td.dtype)
    try:  # PyTorch casts the target to the input's floating dtype
        diff = xd.astype(dt, copy=False) - td.astype(dt, copy=False)
    except ValueError:
        raise broadcast_error(xd.shape, td.shape) from None
    m = xp(xd)
    loss = elementwise(m.abs(diff), m)
    if weight is not None:
        loss = loss * weight._data
    data = loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    out = wrap(m.asarray(data, dtype=dt))
    if requires_grad(input, target) and weight is None:
        node = node_cls((input, target), (input, target))
        node.reduction, node.delta, node.scale = reduction, delta, scale
        node.shapes, node.count = (xd.shape, td.shape), diff.size
        node.casts = grad_casts(out, input, target)
        track(out, node)
    return out


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    reduction = legacy_reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    check_same_size(input, target)
    if weight is not None:  # a weighted huber is the plain one, per element, times the weight
        return reduce_loss(huber_loss(input, target, "none", delta) * weight, reduction)

    def per(a, m):
        return m.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta))

    return _pointwise_loss(input, target, reduction, per, HuberLossBackward0, delta, 1)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    check_same_size(input, target)
    if beta == 0:  # PyTorch's own shortcut: it is l1_loss, and its graph is l1_loss's
        return reduce_loss((input - target).abs(), reduction)

    def per(a, m):
        return m.where(a < beta, 0.5 * a * a / beta, a - 0.5 * beta)

    return _pointwise_loss(input, target, reduction, per, SmoothL1LossBackward0, beta, 1 / beta)


METHODS = {}
INPLACE = {}
FUNCTIONAL = {n: globals()[n] for n in ("mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss")}
