"""softmax and log_softmax, with PyTorch's node names and its implicit-dim warning."""

import warnings

import numpy as np

from .. import _threads
from . import _fused_kernels
from ._common import STATE, Node, float_data, track, wrap, wrap_dim, xp


class SoftmaxBackward0(Node):
    __slots__ = ("dim",)
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        gd, yd = g._data, y._data
        if STATE.enabled or not gd.ndim or not _threads.can_split(gd, yd) or gd.dtype != yd.dtype:
            return (y * (g - (g * y).sum(self.dim, keepdim=True)),)
        # the same steps on the arrays, in one scratch array instead of three
        r = np.multiply(gd, yd)
        total = r.sum(axis=self.dim, keepdims=True)
        np.subtract(gd, total, out=r)
        r *= yd
        return (wrap(r),)


def softmax(input, dim=None, dtype=None):
    if dtype is not None:  # PyTorch casts the input first
        input = input.to(dtype)
    d = float_data(input)
    dim = _softmax_dim(dim, d.ndim)
    m = xp(d)
    if d.size == 0:  # nothing to normalise (and no maximum to subtract)
        out = wrap(d.copy())
    elif dim == d.ndim - 1 and d.size >= _threads.MIN_WORK and _threads.can_split(d):
        rows = d.reshape(-1, d.shape[-1])
        e = np.empty_like(rows)
        _threads.over_rows(lambda s, t: _softmax_rows(e[s:t], rows[s:t]), rows.shape[0], d.size)
        out = wrap(e.reshape(d.shape))
    else:
        e = m.exp(d - d.max(axis=dim, keepdims=True)) if d.ndim else m.ones_like(d)
        out = wrap(e / e.sum(axis=dim, keepdims=True))
    if STATE.enabled and input._requires_grad:
        node = SoftmaxBackward0((input,), (out.detach(),))
        node.dim = dim
        track(out, node)
    return out


def _softmax_rows(out, d):
    """softmax along the last axis of the rows d, into out: the same steps as softmax's own
    (rows are independent, so any split of them gives the same bits)."""
    if _fused_kernels.takes(d) and d.shape[-1]:
        # numpy's maximum along short rows is slow (a quarter of the attention's softmax); the
        # kernel's maximum is the same value (a maximum is exact), but for the zero it picks
        # in a row holding -0 and +0, which x - max and so the result do not see, and NaN,
        # which it skips: a row holding one sums to NaN and is done again the numpy way
        mx = np.empty(d.shape[:-1] + (1,), d.dtype)
        _fused_kernels.kernels.row_max(d, mx, d.shape[-1])
        np.subtract(d, mx, out=out)
        np.exp(out, out=out)
        total = out.sum(axis=-1, keepdims=True)
        if not np.isnan(total).any():
            out /= total
            return
    np.subtract(d, d.max(axis=-1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=-1, keepdims=True)


class LogSoftmaxBackward0(Node):
    __slots__ = ("dim",)
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g - y.exp() * g.sum(self.dim, keepdim=True),)


def log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    d = float_data(input)
    dim = _softmax_dim(dim, d.ndim)
    m = xp(d)
    if d.ndim == 0:
        data = d * 0
    elif d.size == 0:
        data = d.copy()
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
    dim = wrap_dim(dim, ndim)
    return dim if ndim else None  # a 0-d tensor: over no axis at all


__all__ = ["softmax", "log_softmax"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {}
FUNCTIONAL = {name: globals()[name] for name in __all__}
