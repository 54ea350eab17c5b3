"""softmax, log_softmax and the losses, with PyTorch's node names and argument checks."""

import warnings

import numpy as np

from ._common import STATE, Node, Tensor, const, float_data, sum_to, track, wrap, wrap_dim, xp


class SoftmaxBackward0(Node):
    __slots__ = ("dim",)
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (y * (g - (g * y).sum(self.dim, keepdim=True)),)


def softmax(input, dim=None, dtype=None):
    d = float_data(input)
    dim = _softmax_dim(dim, d.ndim)
    m = xp(d)
    e = m.exp(d - d.max(axis=dim, keepdims=True)) if d.ndim else m.ones_like(d)
    out = wrap(e / e.sum(axis=dim, keepdims=True))
    if STATE.enabled and input._requires_grad:
        node = SoftmaxBackward0((input,), (out.detach(),))
        node.dim = dim
        track(out, node)
    return out


class LogSoftmaxBackward0(Node):
    __slots__ = ("dim",)
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g - y.exp() * g.sum(self.dim, keepdim=True),)


def log_softmax(input, dim=None, dtype=None):
    d = float_data(input)
    dim = _softmax_dim(dim, d.ndim)
    m = xp(d)
    if d.ndim == 0:
        data = d * 0
    else:
        shifted = d - d.max(axis=dim, keepdims=True)
        data = shifted - m.log(m.exp(shifted).sum(axis=dim, keepdims=True))
    out = wrap(data)
    if STATE.enabled and input._requires_grad:
        node = LogSoftmaxBackward0((input,), (out.detach(),))
        node.dim = dim
        track(out, node)
    return out


def _softmax_dim(dim, ndim):
    if dim is None:  # PyTorch's legacy implicit choice (it warns; so do we)
        warnings.warn(
            "Implicit dimension choice for softmax has been deprecated. Change the "
            "call to include dim=X as an argument.",
            UserWarning,
            stacklevel=3,
        )
        dim = 0 if ndim in (0, 1, 3) else 1
    return wrap_dim(dim, ndim)


# -- losses ---------------------------------------------------------------------------------------
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


def _check_same_size(input, target, stacklevel=3):
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
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
        from ._common import broadcast_error

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
            f"Using a target size ({target.shape}) that is different to the input "
            f"size ({input.shape}) is deprecated. Please ensure they have the same "
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


class NllLossBackward0(Node):
    __slots__ = ("picks", "reduction")

    def backward(self, g):
        # picks holds -1/N (or -1) at each target class and 0 elsewhere: the local derivative
        if self.reduction == "none" and g._data.ndim:
            g = g.unsqueeze(1)
        return (g * const(self.picks), None)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    _check_reduction(reduction)
    xd, td = input._data, target._data
    if td.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.legacy_name[:-6]}")
    if xd.ndim not in (1, 2):
        raise ValueError(
            f"Expected 1D or 2D input to nll_loss, got {xd.ndim}D (use "
            "cross_entropy over dim 1 after moving classes there)"
        )
    batched = xd.ndim == 2
    x2 = xd if batched else xd[None]
    t1 = td.reshape(-1) if batched else td.reshape(1)
    if batched and td.ndim != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x2.shape[0] != t1.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({x2.shape[0]}) to match target batch_size ({t1.shape[0]})."
        )
    n_classes = x2.shape[1]
    valid = t1 != ignore_index
    bad = (t1 < 0) | (t1 >= n_classes)
    bad &= valid
    if bool(bad.any()):
        raise IndexError(f"Target {int(t1[bad][0])} is out of bounds.")
    m = xp(xd)
    safe_t = m.where(valid, t1, 0)
    w = weight._data if weight is not None else m.ones(n_classes, xd.dtype)
    wt = w[safe_t] * valid
    rows = m.arange(x2.shape[0])
    losses = -x2[rows, safe_t] * wt
    if reduction == "mean":
        total = wt.sum()
        data = losses.sum() / total
    elif reduction == "sum":
        data = losses.sum()
    else:
        data = losses if batched else losses[0]
    out = wrap(m.asarray(data, dtype=xd.dtype))
    if STATE.enabled and input._requires_grad:
        picks = m.zeros(x2.shape, xd.dtype)
        picks[rows, safe_t] = -wt / (wt.sum() if reduction == "mean" else 1)
        node = NllLossBackward0((input, target))
        node.picks = picks if batched else picks[0]
        node.reduction = reduction
        track(out, node)
    return out


def cross_entropy(
    input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    _check_reduction(reduction)
    class_dim = 1 if input._data.ndim >= 2 else 0
    logp = log_softmax(input, class_dim)
    if target._data.dtype.kind == "f":  # class probabilities
        if target._data.shape != input._data.shape:
            raise RuntimeError(
                f"expected target dtype to be Long or Byte, but got {target.dtype.legacy_name[:-6]}"
            )
        probs = target
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / input._data.shape[class_dim]
        per = -(logp * probs)
        if weight is not None:
            per = per * weight
        loss = per.sum(class_dim)
        return (
            _reduce(loss, reduction)
            if reduction != "mean" or loss._data.ndim == 0
            else loss.sum() / loss._data.shape[0]
        )
    if label_smoothing:
        n_classes = input._data.shape[class_dim]
        smooth = -(logp.sum(class_dim)) / n_classes
        nll = nll_loss(logp, target, weight, ignore_index, "none")
        valid = const((target._data != ignore_index).astype(logp._data.dtype))
        loss = ((1 - label_smoothing) * nll + label_smoothing * smooth) * valid
        if reduction == "mean":
            return loss.sum() / float(valid._data.sum())
        return _reduce(loss, reduction)
    return nll_loss(logp, target, weight, ignore_index, reduction)


def _as_tensor(x, like):
    return x if isinstance(x, Tensor) else wrap(np.asarray(x, like._data.dtype))
