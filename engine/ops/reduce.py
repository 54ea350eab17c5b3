"""Reductions: sum, mean, max/min (with indices), amax/amin, var/std, argmax/argmin, and
`sum_to`, a broadcast gradient summed back to its input's shape.

Each backward spreads the incoming gradient back over the reduced dims: `_spread` restores the
dims that keepdim=False removed, then expands, so the formulas stay differentiable."""

import math
import warnings
from collections import namedtuple

import numpy as np

from .._dtype import get
from ._common import STATE, Node, const, dims_of, float_data, track, wrap, wrap_dim, xp

values_indices = {name: namedtuple(name, ["values", "indices"]) for name in ("max", "min")}


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


__all__ = ["sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {}
FUNCTIONAL = {}
