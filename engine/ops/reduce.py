"""Reductions: sum, mean, max/min (with indices), amax/amin, var/std, argmax/argmin, prod,
all/any, count_nonzero, logsumexp, norm, std_mean/var_mean, aminmax; and `sum_to`, a broadcast
gradient summed back to its input's shape.

Each backward spreads the incoming gradient back over the reduced dims: `_spread` restores the
dims that keepdim=False removed, then expands, so the formulas stay differentiable."""

import math
import warnings
from collections import namedtuple

import numpy as np

from .._dtype import from_numpy, get
from ._common import STATE, Node, const, dims_of, float_data, grad_casts, track, wrap, wrap_dim, xp

values_indices = {name: namedtuple(name, ["values", "indices"]) for name in ("max", "min")}
aminmax_type = namedtuple("aminmax", ["min", "max"])


def _np_dtype(dtype):
    return get(dtype).np


def _reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _count(shape, dims):
    return int(np.prod([shape[i] for i in dims])) if dims else 1


def _spread(g, in_shape, dims, keepdim):
    """Broadcast a reduced gradient back to the input's shape."""
    if not keepdim and dims:
        kept = list(in_shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(tuple(kept))
    return g.expand(in_shape)


class _ReduceNode(Node):
    __slots__ = ("in_shape", "dims", "keepdim")

    def _init(self, x, dims, keepdim):
        self.in_shape, self.dims, self.keepdim = x._data.shape, dims, keepdim
        return self

    def spread(self, t):
        return _spread(t, self.in_shape, self.dims, self.keepdim)


class SumBackward0(_ReduceNode):
    __slots__ = ()

    def backward(self, g):
        return (_spread(g, self.in_shape, self.dims, self.keepdim),)


class SumBackward1(SumBackward0):
    __slots__ = ()


def sum(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    dims = dims_of(dim, d.ndim)
    out_dtype = None
    if dtype is not None:
        out_dtype = get(dtype).np
    elif d.dtype.kind in "biu":
        out_dtype = np.int64
    out = wrap(d.sum(axis=dims, keepdims=keepdim, dtype=out_dtype))
    if STATE.enabled and input._requires_grad:
        cls = SumBackward0 if dim is None else SumBackward1
        node = cls((input,))._init(input, dims, keepdim)
        if out._data.dtype != d.dtype:  # sum(dtype=float64) of float32: a float32 gradient
            node.casts = (d.dtype,)
        track(out, node)
    return out


def sum_to(grad, shape):
    """Reduce a gradient back to an input's shape: the reverse of broadcasting it (every
    broadcasting op's backward)."""
    gs = grad._data.shape
    if gs == shape:
        return grad
    lead = len(gs) - len(shape)
    dims = [*range(lead)] + [i + lead for i, s in enumerate(shape) if s == 1 and gs[i + lead] != 1]
    r = sum(grad, tuple(dims), True) if dims else grad
    return r if r._data.shape == shape else r.reshape(shape)


class MeanBackward0(_ReduceNode):
    __slots__ = ("count",)

    def backward(self, g):
        return (_spread(g, self.in_shape, self.dims, self.keepdim) / self.count,)


class MeanBackward1(MeanBackward0):
    __slots__ = ()


def mean(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if d.dtype.kind != "f" and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a "
            "floating point or complex dtype. Got: "
            f"{input.dtype.legacy_name[:-6]}"
        )
    dims = dims_of(dim, d.ndim)
    out = wrap(d.mean(axis=dims, keepdims=keepdim))
    if STATE.enabled and input._requires_grad:
        node = (MeanBackward0 if dim is None else MeanBackward1)((input,))._init(
            input, dims, keepdim
        )
        node.count = int(np.prod([d.shape[i] for i in dims])) if dims else 1
        track(out, node)
    return out


class _EvenlyNode(_ReduceNode):
    """max()/min()/amax/amin: the gradient is shared evenly among the elements that tie."""

    __slots__ = ("share",)

    def backward(self, g):
        return (_spread(g, self.in_shape, self.dims, self.keepdim) * const(self.share),)


class MaxBackward1(_EvenlyNode):
    __slots__ = ()


class MinBackward1(_EvenlyNode):
    __slots__ = ()


class AmaxBackward0(_EvenlyNode):
    __slots__ = ()


class AminBackward0(_EvenlyNode):
    __slots__ = ()


def _evenly(input, dims, keepdim, reduce, node_cls):
    d = input._data
    if d.size == 0:
        raise RuntimeError(
            f"{node_cls.__name__[:4].lower()}(): Expected reduction dim to be "
            "specified for input.numel() == 0. Specify the reduction dim with the "
            "'dim' argument."
        )
    r = reduce(d, axis=dims, keepdims=True)
    out = wrap(r if keepdim else r.reshape([s for i, s in enumerate(d.shape) if i not in dims]))
    if STATE.enabled and input._requires_grad:
        node = node_cls((input,))._init(input, dims, keepdim)
        hit = (d == r).astype(d.dtype)
        node.share = hit / hit.sum(axis=dims, keepdims=True)
        track(out, node)
    return out


class MaxBackward0(_ReduceNode):
    """max(dim)/min(dim): the gradient goes to the element whose index was returned."""

    __slots__ = ("onehot",)

    def backward(self, g):
        return (_spread(g, self.in_shape, self.dims, self.keepdim) * const(self.onehot),)


class MinBackward0(MaxBackward0):
    __slots__ = ()


def _with_indices(input, dim, keepdim, arg, name, node_cls):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        out, idx = d.copy(), np.zeros((), np.int64)
    else:
        if d.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        idx = arg(d, axis=dim, keepdims=True)
        out = xp(d).take_along_axis(d, idx, axis=dim)
        if not keepdim:
            out, idx = out.squeeze(dim), idx.squeeze(dim)
    values = wrap(out)
    if STATE.enabled and input._requires_grad:
        node = node_cls((input,))._init(input, (dim,) if d.ndim else (), keepdim)
        if d.ndim:
            ar = xp(d).arange(d.shape[dim]).reshape([-1 if i == dim else 1 for i in range(d.ndim)])
            node.onehot = (ar == (idx if keepdim else xp(d).expand_dims(idx, dim))).astype(d.dtype)
        else:
            node.onehot = np.ones((), d.dtype)
        track(values, node)
    return values_indices[name](values, wrap(idx.astype(np.int64)))


def max(input, dim=None, keepdim=False):
    if dim is None:
        return _evenly(input, tuple(range(input._data.ndim)), False, _amax, MaxBackward1)
    if not isinstance(dim, int):  # max(a, b) is maximum
        from .select import maximum  # here, not at the top: select.py imports this module

        return maximum(input, dim)
    return _with_indices(input, dim, keepdim, _argmax, "max", MaxBackward0)


def min(input, dim=None, keepdim=False):
    if dim is None:
        return _evenly(input, tuple(range(input._data.ndim)), False, _amin, MinBackward1)
    if not isinstance(dim, int):  # min(a, b) is minimum
        from .select import minimum  # here, not at the top: select.py imports this module

        return minimum(input, dim)
    return _with_indices(input, dim, keepdim, _argmin, "min", MinBackward0)


def amax(input, dim=(), keepdim=False):
    return _evenly(input, dims_of(dim, input._data.ndim), keepdim, _amax, AmaxBackward0)


def amin(input, dim=(), keepdim=False):
    return _evenly(input, dims_of(dim, input._data.ndim), keepdim, _amin, AminBackward0)


def argmax(input, dim=None, keepdim=False):
    d = input._data
    if dim is None:
        return wrap(np.asarray(d.argmax()).astype(np.int64))
    return wrap(_argmax(d, axis=wrap_dim(dim, d.ndim), keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim=False):
    d = input._data
    if dim is None:
        return wrap(np.asarray(d.argmin()).astype(np.int64))
    return wrap(_argmin(d, axis=wrap_dim(dim, d.ndim), keepdims=keepdim).astype(np.int64))


def _amax(d, axis, keepdims):
    return d.max(axis=axis, keepdims=keepdims)


def _amin(d, axis, keepdims):
    return d.min(axis=axis, keepdims=keepdims)


def _argmax(d, axis, keepdims):
    return d.argmax(axis=axis, keepdims=keepdims)


def _argmin(d, axis, keepdims):
    return d.argmin(axis=axis, keepdims=keepdims)


# -- var, std -------------------------------------------------------------------------------------
def _var_grad(node, x, g):
    """PyTorch's var_backward, g already spread to x's shape. Without degrees of freedom left
    (correction >= N) a whole-tensor reduction's gradient is inf (nan where x equals the mean);
    a reduction over named dims keeps the formula, so 2 / 0 = inf or a negative factor."""
    centred = x - x.mean(node.dims, keepdim=True)
    dof = node.denominator
    if dof <= 0 and node.full:
        m = xp(x._data)
        fill = m.where(centred._data == 0, m.nan, m.inf).astype(x._data.dtype)
        return g * const(fill)
    return g * centred * (2.0 / dof if dof != 0 else math.inf)


class VarBackward0(_ReduceNode):
    __slots__ = ("denominator", "full")

    def backward(self, g):
        (x,) = self.unpack()
        return (_var_grad(self, x, _spread(g, self.in_shape, self.dims, self.keepdim)),)


class StdBackward0(_ReduceNode):
    __slots__ = ("denominator", "full")
    saves_output = True

    def backward(self, g):
        x, std = self.unpack()
        # PyTorch's std_backward: var's gradient of g / (2 std), with no gradient where the std
        # is 0 (all values equal) rather than 0/0
        g_var = (g / (std * 2)).masked_fill(const(std._data == 0), 0)
        return (_var_grad(self, x, _spread(g_var, self.in_shape, self.dims, self.keepdim)),)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moment(input, dim, _correction(unbiased, correction), keepdim, VarBackward0, False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moment(input, dim, _correction(unbiased, correction), keepdim, StdBackward0, True)


def _moment(input, dim, correction, keepdim, node_cls, root):
    if isinstance(dim, bool):  # var(True) is the old var(unbiased=True)
        correction, dim = int(dim), None
    d = float_data(input)
    dims = dims_of(dim, d.ndim)
    n = int(np.prod([d.shape[i] for i in dims])) if dims else 1
    if n - correction > 0:
        r = d.var(axis=dims, keepdims=keepdim, ddof=correction)
    else:
        # PyTorch divides the sum of squares by max(0, N - correction): inf, or nan for 0/0
        name = "std" if root else "var"
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
        mean = d.mean(axis=dims, keepdims=True)
        squares = ((d - mean) ** 2).sum(axis=dims, keepdims=keepdim)
        r = xp(d).asarray(squares / d.dtype.type(0), dtype=d.dtype)
    out = wrap(xp(d).sqrt(r) if root else r)
    if STATE.enabled and input._requires_grad:
        node = node_cls((input,), (input, out.detach()) if root else (input,))
        node._init(input, dims, keepdim)
        node.denominator = n - correction
        node.full = dim is None or d.ndim == 0
        track(out, node)
    return out


# -- prod ---------------------------------------------------------------------------------------
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


# -- all, any, count_nonzero -------------------------------------------------------------------
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


# -- logsumexp ---------------------------------------------------------------------------------
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


# -- norm --------------------------------------------------------------------------------------
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


# -- std_mean, var_mean ------------------------------------------------------------------------
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


# -- aminmax -----------------------------------------------------------------------------------
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


# -- exports ---------------------------------------------------------------------------------------
__all__ = [
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "prod",
    "all",
    "any",
    "count_nonzero",
    "logsumexp",
    "norm",
    "std_mean",
    "var_mean",
    "aminmax",
]
METHODS = {name: globals()[name] for name in __all__ if name not in ("std_mean", "var_mean")}
INPLACE = {}
FUNCTIONAL = {}
