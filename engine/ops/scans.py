"""Scans: the cumulative ops cumsum, cumprod, cummax/cummin and logcumsumexp along one dim.

Backwards are written with engine ops (double backward works), constants from the forward's
arrays (masks, counts) entering as `const`. Ops that return values and indices return a small
namedtuple, as PyTorch's torch.return_types.*."""

from collections import namedtuple

import numpy as np

from ._common import STATE, Node, const, grad_casts, not_implemented, track, wrap, wrap_dim, xp
from .gather import index_select
from .reduce import _np_dtype
from .scatter import scatter_add
from .select import where
from .sorting import running

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]

cummax_type = namedtuple("cummax", ["values", "indices"])
cummin_type = namedtuple("cummin", ["values", "indices"])


# -- scans ----------------------------------------------------------------------------------------
def _flip(t, dim):
    n = t._data.shape[dim]
    return index_select(t, dim, const(xp(t._data).arange(n - 1, -1, -1)))


def _reverse_cumsum(t, dim):
    """sum over k >= i along dim, with engine ops."""
    if t._data.ndim == 0:
        return t
    return _flip(cumsum(_flip(t, dim), dim), dim)


class CumsumBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        return (_reverse_cumsum(g, self.dim),)


def _scan_dtype(d, dtype):
    if dtype is not None:
        return d.astype(_np_dtype(dtype), copy=False)
    return d.astype(np.int64) if d.dtype.kind in "biu" else d


def cumsum(input, dim, *, dtype=None):
    d = _scan_dtype(input._data, dtype)
    dim = wrap_dim(dim, d.ndim)
    out = wrap(xp(d).cumsum(d, axis=dim) if d.ndim else d.copy())
    if STATE.enabled and input._requires_grad:
        node = CumsumBackward0((input,))
        node.dim, node.casts = dim, grad_casts(out, input)
        track(out, node)
    return out


class CumprodBackward0(Node):
    """d out_k / d x_i = prod_{j<=k, j!=i} x_j. Before a slice's first zero that is
    out_k / x_i; at the first zero it is the scan with that zero read as 1; after it, 0."""

    __slots__ = ("dim",)
    saves_output = True

    def backward(self, g):
        x, out = self.unpack()
        dim = self.dim
        if x._data.ndim == 0:
            return (g,)
        xd = x._data
        m = xp(xd)
        zero = xd == 0
        seen = m.cumsum(zero, axis=dim)  # zeros at or before each place
        before = seen == 0
        first = zero & (seen == 1)
        dt = xd.dtype
        safe = x.masked_fill(const(~before), 1.0)
        grad = _reverse_cumsum(g * out, dim) / safe * const(before.astype(dt))
        if first.any():
            out1 = cumprod(x.masked_fill(const(first), 1.0), dim)
            grad = grad + _reverse_cumsum(g * out1, dim) * const(first.astype(dt))
        return (grad,)


def cumprod(input, dim, *, dtype=None):
    d = _scan_dtype(input._data, dtype)
    dim = wrap_dim(dim, d.ndim)
    out = wrap(xp(d).cumprod(d, axis=dim) if d.ndim else d.copy())
    if STATE.enabled and input._requires_grad:
        node = CumprodBackward0((input,), (input, out.detach()))
        node.dim, node.casts = dim, grad_casts(out, input)
        track(out, node)
    return out


class CummaxBackward0(Node):
    """The gradient goes to the element each running extreme came from (added up)."""

    __slots__ = ("dim", "indices")

    def backward(self, g):
        if g._data.ndim == 0:
            return (g,)
        z = const(xp(g._data).zeros(g._data.shape, g._data.dtype))
        return (scatter_add(z, self.dim, self.indices, g),)


class CumminBackward0(CummaxBackward0):
    __slots__ = ()


def _cum_extreme(input, dim, ufunc, node_cls, result):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    m = xp(d)
    if d.ndim == 0:
        values, idx = d.copy(), m.zeros((), np.int64)
    else:
        values = running(m, ufunc, d, dim)
        pos = m.arange(d.shape[dim]).reshape([-1 if i == dim else 1 for i in range(d.ndim)])
        # the latest place holding the running extreme (PyTorch picks the last of equals)
        idx = running(m, "maximum", m.where(d == values, pos, 0), dim).astype(np.int64)
    out = wrap(values)
    if STATE.enabled and input._requires_grad:
        node = node_cls((input,))
        node.dim, node.indices = dim, const(idx)
        track(out, node)
    return result(out, wrap(idx))


def cummax(input, dim):
    return _cum_extreme(input, dim, "maximum", CummaxBackward0, cummax_type)


def cummin(input, dim):
    return _cum_extreme(input, dim, "minimum", CumminBackward0, cummin_type)


class LogcumsumexpBackward0(Node):
    """PyTorch's formula: the gradient's positive and negative parts each summed in log space,
    grad_i = exp(x_i + rlcse(log g+ - out)_i) - exp(x_i + rlcse(log g- - out)_i), where rlcse is
    logcumsumexp taken from the end. No exponential of a raw difference of inputs, so a large
    spread ([0, 100]) gives finite gradients; written with engine ops (double backward works)."""

    __slots__ = ("dim",)
    saves_output = True

    def backward(self, g):
        x, out = self.unpack()
        if x._data.ndim == 0:
            return (g,)
        dim = self.dim
        lowest = float(np.finfo(g._data.dtype).min)
        log_abs = g.abs().log()
        pos = where(const(g._data > 0), log_abs, lowest)
        neg = where(const(g._data < 0), log_abs, lowest)

        def from_end(t):
            return _flip(logcumsumexp(_flip(t, dim), dim), dim)

        return ((from_end(pos - out) + x).exp() - (from_end(neg - out) + x).exp(),)


def _logcumsumexp_array(d, dim):
    """Each prefix's log-sum-exp, added pairwise (logaddexp) along dim as PyTorch's CPU kernel
    does, so no prefix is shifted by a maximum it has not seen yet."""
    m = xp(d)
    accumulate = getattr(m.logaddexp, "accumulate", None)
    if accumulate is not None:
        try:
            return accumulate(d, axis=dim)
        except NotImplementedError:  # an array library without ufunc.accumulate
            pass
    r = m.moveaxis(d.copy(), dim, 0)
    for i in range(1, r.shape[0]):
        r[i] = m.logaddexp(r[i - 1], r[i])
    return m.moveaxis(r, 0, dim)


def logcumsumexp(input, dim):
    d = input._data
    if d.dtype.kind != "f":
        raise not_implemented("logcumsumexp_out_cpu", d.dtype)
    dim = wrap_dim(dim, d.ndim)
    r = d.copy() if d.ndim == 0 or d.size == 0 else _logcumsumexp_array(d, dim)
    out = wrap(r)
    if STATE.enabled and input._requires_grad:
        node = LogcumsumexpBackward0((input,), (input, out.detach()))
        node.dim = dim
        track(out, node)
    return out


METHODS = {name: globals()[name] for name in __all__}
INPLACE = {"cumsum": cumsum, "cumprod": cumprod}
FUNCTIONAL = {}
