"""The losses on class scores and probabilities: binary_cross_entropy and its with_logits form,
nll_loss and cross_entropy (any number of spatial dims, class weights, ignore_index, label
smoothing, class-probability targets), and kl_div between distributions.

Where PyTorch writes a loss as a composite of ops (kl_div, the probability targets of
cross_entropy, label smoothing) so do we, so the grad_fn is the node PyTorch shows; the fused
losses have their own node, its backward written with engine ops.
"""

import operator
import warnings

import numpy as np

from ._binary import binary
from ._common import (
    STATE,
    Node,
    broadcast_error,
    const,
    grad_casts,
    requires_grad,
    track,
    wrap,
    xp,
)
from ._loss_common import (
    REDUCTIONS,
    check_reduction,
    legacy_reduction,
    reduce_loss,
    torch_size,
    type_name_of,
)
from .arithmetic import MulBackward0
from .division import DivBackward0
from .exp_log import xlogy
from .reduce import sum_to
from .select import where
from .softmax import log_softmax

__all__ = []


# -- binary_cross_entropy -------------------------------------------------------------------------
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
    check_reduction(reduction)
    xd, td = input._data, target._data
    if xd.shape != td.shape:
        raise ValueError(
            f"Using a target size ({torch_size(target.shape)}) that is different to the input "
            f"size ({torch_size(input.shape)}) is deprecated. Please ensure they have the same "
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


class BinaryCrossEntropyWithLogitsBackward0(Node):
    __slots__ = ("reduction", "weight", "pos_weight")

    def backward(self, g):
        x, t = self.unpack()
        n = x._data.size if self.reduction == "mean" else 1
        w, pw = self.weight, self.pos_weight
        gx = gt = None
        if self.needs_grad(0):
            if pw is None:
                d = x.sigmoid() - t
            else:
                d = (1 - t) - ((pw - 1) * t + 1) * (-x).sigmoid()
            gx = g * d if w is None else g * d * w
            gx = gx / n if n != 1 else gx
            gx = sum_to(gx, x._data.shape) if gx._data.shape != x._data.shape else gx
        if self.needs_grad(1):
            d = -x if pw is None else (pw - 1) * _softplus_neg(x) - x
            gt = g * d if w is None else g * d * w
            gt = gt / n if n != 1 else gt
            gt = sum_to(gt, t._data.shape) if gt._data.shape != t._data.shape else gt
        return (gx, gt)


def _softplus_neg(x):
    """log(1 + exp(-x)) with engine ops (stable): max(-x, 0) + log(1 + exp(-|x|))."""
    return (-x).clamp(min=0) + ((-x.abs()).exp() + 1).log()


def _bce_logits_array(x, t, pw, m):
    sp = m.maximum(-x, 0) + m.log1p(m.exp(-m.abs(x)))  # log(1 + exp(-x)), never overflowing
    if pw is None:
        return (1 - t) * x + sp
    return (1 - t) * x + ((pw - 1) * t + 1) * sp


def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight=None,
):
    reduction = legacy_reduction(size_average, reduce, reduction)
    xd, td = input._data, target._data
    if td.shape != xd.shape:
        raise ValueError(
            f"Target size (torch.Size({list(td.shape)})) must be the same as input size "
            f"(torch.Size({list(xd.shape)}))"
        )
    if td.dtype.kind != "f":
        raise RuntimeError(
            f"result type {type_name_of(input)} can't be cast to the desired output type "
            f"{type_name_of(target)}"
        )
    dt = np.result_type(xd.dtype, td.dtype)
    x, t = xd.astype(dt, copy=False), td.astype(dt, copy=False)
    pw = None if pos_weight is None else pos_weight._data
    if pw is not None:
        try:
            np.broadcast_shapes(pw.shape, td.shape)
        except ValueError:
            raise broadcast_error(pw.shape, td.shape) from None
    m = xp(xd)
    loss = _bce_logits_array(x, t, pw, m)
    if weight is not None:
        try:
            np.broadcast_shapes(loss.shape, weight._data.shape)
        except ValueError:
            raise broadcast_error(loss.shape, weight._data.shape) from None
        loss = loss * weight._data
    data = loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    out = wrap(m.asarray(data, dtype=td.dtype))  # PyTorch writes the loss in target's dtype
    if requires_grad(input, target):
        node = BinaryCrossEntropyWithLogitsBackward0((input, target), (input, target))
        node.casts = grad_casts(out, input, target)
        node.reduction = reduction
        node.weight = None if weight is None else const(weight._data)
        node.pos_weight = None if pw is None else const(pw)
        track(out, node)
    return out


# -- the nodes of a number inside a composite loss ------------------------------------------------
class DivBackward1(DivBackward0):
    """Division by a number inside a composite loss (PyTorch's name for div by a Scalar)."""

    __slots__ = ()


class MulBackward1(MulBackward0):
    __slots__ = ()


def _div_number(t, number):
    return binary(t, number, operator.truediv, DivBackward1, True)


def _mul_number(t, number):
    return binary(t, number, operator.mul, MulBackward1, True)


# -- nll_loss -------------------------------------------------------------------------------------
class NllLossBackward0(Node):
    """The gradient is the incoming one times `picks`: -weight[target] (over the weights' total
    for 'mean') at each target class, 0 elsewhere. Linear in g, so it differentiates again."""

    __slots__ = ("picks", "reduction", "class_dim")

    def backward(self, g):
        if self.reduction == "none" and self.class_dim is not None:
            g = g.unsqueeze(self.class_dim)
        return (g * const(self.picks),)


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


def _check_long_target(target):
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {type_name_of(target)}"
        )


def _check_weight(weight, input, n_classes, message):
    if weight is None:
        return
    if weight._data.size != n_classes:
        raise RuntimeError(message)
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"expected scalar type {type_name_of(input)} but found {type_name_of(weight)}"
        )


def _nll(input, target, weight, ignore_index, reduction, node_cls):
    """The nll kernel for input (C,), (N, C) or (N, C, H, W) and a checked target."""
    xd, td = input._data, target._data
    m = xp(xd)
    n_classes = xd.shape[0] if xd.ndim == 1 else xd.shape[1]
    x2 = xd[None] if xd.ndim == 1 else m.moveaxis(xd, 1, -1).reshape(-1, n_classes)
    t1 = td.reshape(-1).astype(np.int64)
    valid = t1 != ignore_index
    bad = valid & ((t1 < 0) | (t1 >= n_classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(t1[bad][0])} is out of bounds.")
    safe_t = m.where(valid, t1, 0)
    w = weight._data if weight is not None else m.ones(n_classes, xd.dtype)
    wt = w[safe_t] * valid if t1.size else m.zeros(0, xd.dtype)
    rows = m.arange(x2.shape[0])
    losses = -x2[rows, safe_t] * wt
    total = wt.sum()
    if reduction == "mean":
        data = losses.sum() / total
    elif reduction == "sum":
        data = losses.sum()
    else:
        data = losses.reshape(td.shape if xd.ndim > 1 else ())
    out = wrap(m.asarray(data, dtype=xd.dtype))
    if requires_grad(input):
        picks = m.zeros(x2.shape, xd.dtype)
        picks[rows, safe_t] = -wt / total if reduction == "mean" else -wt
        if xd.ndim == 1:
            picks = picks[0]
        else:
            picks = m.moveaxis(picks.reshape((xd.shape[0], *xd.shape[2:], n_classes)), -1, 1)
        node = node_cls((input,))
        node.picks, node.reduction = picks, reduction
        node.class_dim = None if xd.ndim == 1 else 1
        track(out, node)
    return out


def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
):
    reduction = legacy_reduction(size_average, reduce, reduction)
    xd, td = input._data, target._data
    if xd.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {xd.ndim})")
    if xd.ndim != 1 and (td.ndim == 0 or xd.shape[0] != td.shape[0]):
        got = td.shape[0] if td.ndim else 1
        raise ValueError(
            f"Expected input batch_size ({xd.shape[0]}) to match target batch_size ({got})."
        )
    if xd.ndim <= 2:
        if td.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if xd.ndim == 1 and td.ndim == 1 and td.shape[0] != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {td.shape[0]}"
            )
        _check_long_target(target)
        n_classes = xd.shape[-1]
        shape = [] if weight is None else list(weight._data.shape)
        _check_weight(
            weight,
            input,
            n_classes,
            f"weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {shape}",
        )
        return _nll(input, target, weight, ignore_index, reduction, NllLossBackward0)
    spatial = (xd.shape[0], *xd.shape[2:])
    if xd.ndim == 4:
        if td.ndim != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {td.ndim}"
            )
        if td.shape != spatial:
            raise RuntimeError(
                f"size mismatch (got input: {list(xd.shape)} , target: {list(td.shape)}"
            )
    elif td.shape != spatial:
        raise RuntimeError(f"Expected target size {list(spatial)}, got {list(td.shape)}")
    _check_long_target(target)
    _check_weight(
        weight, input, xd.shape[1], "weight tensor should be defined either for all or no classes"
    )
    if xd.ndim == 4:
        return _nll(input, target, weight, ignore_index, reduction, NllLoss2DBackward0)
    # other spatial ranks go through the 2-d kernel, as in PyTorch: (N, C, 1, rest)
    n, c = xd.shape[:2]
    flat_in = input.reshape((n, c, 1, -1))
    flat_t = target.reshape((n, 1, -1))
    out = _nll(flat_in, flat_t, weight, ignore_index, reduction, NllLoss2DBackward0)
    return out.reshape(td.shape) if reduction == "none" else out


# -- cross_entropy --------------------------------------------------------------------------------
def _class_view(weight, ndim, class_dim):
    """The class weights shaped to broadcast along the class dim of an ndim-d input."""
    shape = [1] * ndim
    shape[class_dim] = -1
    return weight.reshape(tuple(shape))


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    reduction = legacy_reduction(size_average, reduce, reduction)
    xd, td = input._data, target._data
    class_dim = 0 if xd.ndim == 1 else 1
    if label_smoothing > 0 and label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    if xd.shape == td.shape:
        return _cross_entropy_probs(
            input, target, weight, ignore_index, reduction, label_smoothing, class_dim
        )
    logp = log_softmax(input, class_dim) if xd.ndim else input
    if label_smoothing <= 0:
        return nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    n_classes = xd.shape[class_dim]
    if weight is not None:
        smooth = -(logp * _class_view(weight, xd.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = td == ignore_index
    smooth = where(const(ignored), 0.0, smooth)
    if reduction == "mean":
        if weight is not None:
            kept = td[~ignored].astype(np.int64)
            total = weight._data[kept].sum()
        else:
            total = (~ignored).sum()
        ret = smooth.sum() / float(total)
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return _mul_number(nll, 1 - label_smoothing) + _mul_number(ret, label_smoothing / n_classes)


def _cross_entropy_probs(
    input, target, weight, ignore_index, reduction, label_smoothing, class_dim
):
    xd = input._data
    if target._data.dtype.kind != "f":
        raise RuntimeError(
            "Expected floating point type for target with class probabilities, got "
            f"{type_name_of(target)}"
        )
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    n_classes = xd.shape[class_dim] if xd.ndim else 1
    if weight is not None and weight._data.size != n_classes:
        raise RuntimeError(
            "cross_entropy: weight tensor should be defined either for all "
            f"{n_classes} classes or no classes but got weight tensor of shape: "
            f"{list(weight._data.shape)}"
        )
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    per = logp * target
    if weight is not None:
        per = per * _class_view(weight, xd.ndim, class_dim)
    if reduction == "none":
        return -per.sum(class_dim)
    if reduction == "sum":
        return -per.sum()
    return _div_number(-per.sum(), xd.size // n_classes if n_classes else 0)


# -- kl_div ---------------------------------------------------------------------------------------
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = legacy_reduction(size_average, reduce, reduction, (*REDUCTIONS, "batchmean"))
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input._data.shape[0] if input._data.ndim else total
    return reduce_loss(loss, reduction)


METHODS = {}
INPLACE = {}
FUNCTIONAL = {
    n: globals()[n]
    for n in (
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "nll_loss",
        "cross_entropy",
        "kl_div",
    )
}
