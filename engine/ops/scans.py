"""Reductions beyond engine/ops/reduce.py (prod, all/any, logsumexp, norm, std_mean/var_mean,
count_nonzero, aminmax) and scans (cumsum, cumprod, cummax/cummin, logcumsumexp); the
sorting ops (sort, argsort, topk, kthvalue, median, mode) live in engine/ops/_sorting.py and
are exported from here.

Backwards are written with engine ops (double backward works), constants from the forward's
arrays (masks, counts) entering as `const`. Ops that return values and indices return a small
namedtuple, as PyTorch's torch.return_types.*."""

import warnings
from collections import namedtuple

import numpy as np

from .._dtype import from_numpy, get
from ._common import STATE, Node, const, dims_of, float_data, grad_casts, track, wrap, wrap_dim, xp
from ._scatter import scatter_add
from ._sorting import argsort, kthvalue, median, mode, running, sort, topk
from .gather import index_select
from .reduce import _correction, _spread, _var_grad
from .select import where

__all__ = [
    "prod",
    "all",
    "any",
    "logsumexp",
    "norm",
    "std_mean",
    "var_mean",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "logcumsumexp",
    "sort",
    "argsort",
    "topk",
    "kthvalue",
    "median",
    "mode",
    "count_nonzero",
    "aminmax",
]

cummax_type = namedtuple("cummax", ["values", "indices"])
cummin_type = namedtuple("cummin", ["values", "indices"])
aminmax_type = namedtuple("aminmax", ["min", "max"])


def _np_dtype(dtype):
    return get(dtype).np


def _reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _count(shape, dims):
    return int(np.prod([shape[i] for i in dims])) if dims else 1


class _ReduceNode(Node):
    __slots__ = ("in_shape", "dims", "keepdim")

    def _init(self, x, dims, keepdim):
        self.in_shape, self.dims, self.keepdim = x._data.shape, dims, keepdim
        return self

    def spread(self, t):
        return _spread(t, self.in_shape, self.dims, self.keepdim)


# -- prod -----------------------------------------------------------------------------------------
class ProdBackward0(_ReduceNode):
    """d prod / d x_i is the product of the others: prod / x_i without zeros; with one zero in a
    slice only that zero's place gets (the product of the rest); with two, nothing does."""

    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        zero = x._data == 0
        zeros = zero.sum(axis=self.dims, keepdims=True)
        x1 = x.masked_fill(const(zero), 1.0)
        if len(self.dims) == len(self.in_shape):
            p1 = prod(x1).reshape((1,) * len(self.in_shape))
        else:
            p1 = prod(x1, self.dims[0], keepdim=True)
        dt = x._data.dtype
        factor = const((zeros == 0).astype(dt)) / x1 + const((zero & (zeros == 1)).astype(dt))
        return (self.spread(g) * p1.expand(self.in_shape) * factor,)


class ProdBackward1(ProdBackward0):
    __slots__ = ()


def prod(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if dtype is not None:
        d = d.astype(_np_dtype(dtype), copy=False)
    elif d.dtype.kind in "biu":
        d = d.astype(np.int64)
    if dim is None:
        dims, keepdim = tuple(range(d.ndim)), False
    else:
        if not isinstance(dim, int):
            raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
        dims = (wrap_dim(dim, d.ndim),) if d.ndim else ()
    r = d.prod(axis=dims, keepdims=keepdim) if dims else d.copy()
    out = wrap(r)
    if STATE.enabled and input._requires_grad:
        cls = ProdBackward0 if dim is None else ProdBackward1
        node = cls((input,), (input,))._init(input, dims, keepdim)
        node.casts = grad_casts(out, input)
        track(out, node)
    return out


# -- all, any, count_nonzero ----------------------------------------------------------------------
def _logical(input, dim, keepdim, fn):
    d = input._data
    dims = dims_of(dim, d.ndim) if d.ndim else ()
    r = fn(d != 0, axis=dims, keepdims=keepdim) if dims else (d != 0)
    return wrap(r.astype(np.uint8) if d.dtype == np.uint8 else r)


def all(input, dim=None, keepdim=False):
    return _logical(input, dim, keepdim, xp(input._data).all)


def any(input, dim=None, keepdim=False):
    return _logical(input, dim, keepdim, xp(input._data).any)


def count_nonzero(input, dim=None):
    d = input._data
    dims = dims_of(dim, d.ndim) if d.ndim else ()
    nz = d != 0
    return wrap((nz.sum(axis=dims) if dims else nz).astype(np.int64))


# -- logsumexp ------------------------------------------------------------------------------------
class LogsumexpBackward0(_ReduceNode):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        x, out = self.unpack()
        return (self.spread(g) * (x - self.spread(out)).exp(),)


def _lse(d, dims, keepdims):
    m = xp(d)
    mx = d.max(axis=dims, keepdims=True)
    mx = m.where(m.isfinite(mx), mx, 0)  # all -inf (or an inf) slices: no shift
    r = m.log(m.exp(d - mx).sum(axis=dims, keepdims=True)) + mx
    return r if keepdims else r.reshape(_reduced_shape(d.shape, dims, False))


def logsumexp(input, dim, keepdim=False):
    d = float_data(input)
    dims = dims_of(dim, d.ndim) if d.ndim else ()
    if not dims:  # a 0-d input
        r = d.copy()
    elif d.size == 0:
        r = xp(d).full(_reduced_shape(d.shape, dims, keepdim), -np.inf, d.dtype)
    else:
        r = _lse(d, dims, keepdim)
    out = wrap(r)
    if STATE.enabled and input._requires_grad:
        node = LogsumexpBackward0((input,), (input, out.detach()))._init(input, dims, keepdim)
        track(out, node)
    return out


# -- norm -----------------------------------------------------------------------------------------
class LinalgVectorNormBackward0(_ReduceNode):
    __slots__ = ("ord",)
    saves_output = True

    def backward(self, g):
        x, out = self.unpack()
        p = self.ord
        if p == 0:  # PyTorch gives no gradient at all here (not zeros)
            return (None,)
        if p == 1:
            return (self.spread(g) * x.sign(),)
        outs = self.spread(out)
        if p in (np.inf, -np.inf):
            hit = x._data.__abs__() == outs._data
            share = hit / hit.sum(axis=self.dims, keepdims=True)
            return (self.spread(g) * x.sign() * const(share.astype(x._data.dtype)),)
        dead = const(outs._data == 0)
        if p == 2:
            return (x * (self.spread(g) / outs).masked_fill(dead, 0.0),)
        scale = (self.spread(g) / outs ** (p - 1)).masked_fill(dead, 0.0)
        return (x.sign() * x.abs() ** (p - 1) * scale,)


def _vector_norm(d, p, dims, keepdim):
    m = xp(d)
    a = m.abs(d)
    if p == np.inf:
        return a.max(axis=dims, keepdims=keepdim)
    if p == -np.inf:
        return a.min(axis=dims, keepdims=keepdim)
    if p == 0:
        return (a != 0).sum(axis=dims, keepdims=keepdim).astype(d.dtype)
    if p == 1:
        return a.sum(axis=dims, keepdims=keepdim)
    if p == 2:
        return m.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
    return (a**p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector norms (p a number, 'fro' = 2) over `dim` (all dims by default); 'nuc' is a matrix
    norm and is not provided here."""
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(f"norm(p={p!r}) is not supported (only vector norms are)")
    d = input._data
    if d.dtype.kind != "f":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{input.dtype.legacy_name[:-6]}"
        )
    if dtype is not None:
        target = _np_dtype(dtype)
        if np.dtype(target).itemsize < d.dtype.itemsize:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input ({input.dtype.legacy_name[:-6]}) "
                "should be convertible without narrowing to the specified dtype "
                f"({from_numpy(np.dtype(target)).legacy_name[:-6]})"
            )
        d = d.astype(target)
    if isinstance(dim, int):
        dim = (dim,)
    dims = dims_of(dim, d.ndim) if d.ndim else ()
    p = float(p)
    if d.size == 0 and p in (np.inf, -np.inf):
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because the "
            "operation does not have an identity"
        )
    out = wrap(_vector_norm(d, p, dims, keepdim) if dims else _vector_norm(d, p, None, False))
    if STATE.enabled and input._requires_grad:
        node = LinalgVectorNormBackward0((input,), (input, out.detach()))
        node._init(input, dims, keepdim).ord = p
        node.casts = grad_casts(out, input)
        track(out, node)
    return out


# -- std_mean, var_mean ---------------------------------------------------------------------------
class VarMeanBackward0(_ReduceNode):
    """Two outputs (var or std, mean); a gradient may arrive for either or both."""

    __slots__ = ("denominator", "count", "full")
    num_outputs = 2
    single_output = False
    root = False

    def apply(self, grads):
        gv, gm = grads[0], grads[1]
        saved = self.unpack()
        x = saved[0]
        grad = None
        if gv is not None:
            if self.root:  # PyTorch's std_backward: var's of g / (2 std), 0 where std is 0
                std = saved[1]
                gv = (gv / (std * 2)).masked_fill(const(std._data == 0), 0)
            grad = _var_grad(self, x, self.spread(gv))
        if gm is not None:
            gmean = self.spread(gm) / self.count
            grad = gmean if grad is None else grad + gmean
        return (grad,)


class StdMeanBackward0(VarMeanBackward0):
    __slots__ = ()
    saves_output = True
    root = True


def _moments(name, input, dim, unbiased, keepdim, correction, node_cls):
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):  # std_mean(x, True): the old unbiased flag
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    d = input._data
    dims = dims_of(dim, d.ndim)
    n = _count(d.shape, dims)
    m = xp(d)
    mean = d.mean(axis=dims, keepdims=keepdim) if d.ndim else d.copy()
    if n - c > 0:
        var = d.var(axis=dims, keepdims=keepdim, ddof=c) if d.ndim else d * 0
    else:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
        # PyTorch divides the sum of squares by max(0, N - correction): inf, or nan for 0/0
        squares = ((d - d.mean(axis=dims, keepdims=True)) ** 2).sum(axis=dims, keepdims=keepdim)
        var = m.asarray(squares / d.dtype.type(0), dtype=d.dtype)
    first = wrap(m.sqrt(var) if node_cls is StdMeanBackward0 else var)
    second = wrap(mean)
    if STATE.enabled and input._requires_grad:
        saved = (input, first.detach()) if node_cls is StdMeanBackward0 else (input,)
        node = node_cls((input,), saved)._init(input, dims, keepdim)
        node.denominator, node.count = n - c, n
        node.full = dim is None or d.ndim == 0
        track(first, node)
        track(second, node)
        second._output_nr = 1
    return first, second


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("std_mean", input, dim, unbiased, keepdim, correction, StdMeanBackward0)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("var_mean", input, dim, unbiased, keepdim, correction, VarMeanBackward0)


# -- aminmax --------------------------------------------------------------------------------------
class AminmaxBackward0(_ReduceNode):
    """Each output's gradient is shared evenly among the elements that tie for it."""

    __slots__ = ("shares",)
    num_outputs = 2
    single_output = False

    def apply(self, grads):
        grad = None
        for g, share in zip(grads, self.shares):
            if g is not None:
                part = self.spread(g) * const(share)
                grad = part if grad is None else grad + part
        return (grad,)


def aminmax(input, *, dim=None, keepdim=False):
    d = input._data
    dims = tuple(range(d.ndim)) if dim is None else (wrap_dim(dim, d.ndim),) if d.ndim else ()
    if d.size == 0 and (dim is None or 0 in [d.shape[i] for i in dims]):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
            "identity."
        )
    lo, hi = d.min(axis=dims, keepdims=True), d.max(axis=dims, keepdims=True)
    shape = _reduced_shape(d.shape, dims, keepdim) if d.ndim else ()
    outs = [wrap(lo.reshape(shape)), wrap(hi.reshape(shape))]
    if STATE.enabled and input._requires_grad:
        node = AminmaxBackward0((input,))._init(input, dims, keepdim)
        shares = []
        for r in (lo, hi):
            hit = (d == r).astype(d.dtype)
            shares.append(hit / hit.sum(axis=dims, keepdims=True))
        node.shares = tuple(shares)
        for nr, o in enumerate(outs):
            track(o, node)
            o._output_nr = nr
    return aminmax_type(*outs)


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
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{input.dtype.legacy_name[:-6]}'"
        )
    dim = wrap_dim(dim, d.ndim)
    r = d.copy() if d.ndim == 0 or d.size == 0 else _logcumsumexp_array(d, dim)
    out = wrap(r)
    if STATE.enabled and input._requires_grad:
        node = LogcumsumexpBackward0((input,), (input, out.detach()))
        node.dim = dim
        track(out, node)
    return out


METHODS = {name: globals()[name] for name in __all__ if name not in ("std_mean", "var_mean")}
INPLACE = {"cumsum": cumsum, "cumprod": cumprod}
FUNCTIONAL = {}
