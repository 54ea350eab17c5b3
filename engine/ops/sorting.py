"""Sorting and order statistics: sort, argsort, topk, kthvalue, median, mode. Each returns
values and int64 indices as a small namedtuple like PyTorch's torch.return_types.*; the
values' gradient goes back to the places the indices name.

Sorting is always stable (numpy's kind='stable'; cupy's sort is stable too)."""

from collections import namedtuple

import numpy as np

from ._common import STATE, Node, const, track, wrap, wrap_dim, xp
from .scatter import scatter

_types = {
    name: namedtuple(name, ["values", "indices"])
    for name in ("sort", "topk", "kthvalue", "median", "mode")
}


class SortBackward0(Node):
    """Values picked along `dim` at `indices`: the gradient is put back at those places."""

    __slots__ = ("dim", "indices", "in_shape", "keepdim")

    def backward(self, g):
        if not self.in_shape:
            return (g.reshape(()),)
        idx = self.indices
        if not self.keepdim:
            g = g.unsqueeze(self.dim)
        z = const(xp(g._data).zeros(self.in_shape, g._data.dtype))
        return (scatter(z, self.dim, idx, g),)


class TopkBackward0(SortBackward0):
    __slots__ = ()


class KthvalueBackward0(SortBackward0):
    __slots__ = ()


class MedianBackward1(SortBackward0):
    __slots__ = ()


class ModeBackward0(SortBackward0):
    __slots__ = ()


class MedianBackward0(Node):
    """median() without dim: the gradient is shared evenly among the elements equal to it."""

    __slots__ = ("share",)

    def backward(self, g):
        return (g * const(self.share),)


def _argsort(d, dim, descending):
    m = xp(d)
    if not descending:
        return m.argsort(d, axis=dim, kind="stable")
    # stable descending: sort the reversed slice ascending, reverse back, and renumber; equal
    # elements then keep their order and NaN comes first, as in PyTorch
    n = d.shape[dim]
    rev = m.flip(d, axis=dim)
    return (n - 1) - m.flip(m.argsort(rev, axis=dim, kind="stable"), axis=dim)


def _pick(input, dim, idx, keepdim, node_cls, result):
    """The values at idx (taken along dim; keepdim=False drops dim from idx first)."""
    d = input._data
    m = xp(d)
    idx = idx.astype(np.int64, copy=False)
    full = idx if keepdim else m.expand_dims(idx, dim)
    values = m.take_along_axis(d, full, axis=dim)
    out = wrap(values if keepdim else values.squeeze(dim))
    if STATE.enabled and input._requires_grad:
        node = node_cls((input,))
        node.dim, node.indices, node.in_shape, node.keepdim = dim, const(full), d.shape, keepdim
        track(out, node)
    return result(out, wrap(idx))


def _scalar(input, node_cls, result):
    """The 0-d case of the ops below: the value itself at index 0."""
    d = input._data
    out = wrap(d.copy())
    if STATE.enabled and input._requires_grad:
        node = node_cls((input,))
        node.dim, node.indices, node.in_shape, node.keepdim = 0, None, (), True
        track(out, node)
    return result(out, wrap(xp(d).zeros((), np.int64)))


def sort(input, dim=-1, descending=False, stable=False):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        return _scalar(input, SortBackward0, _types["sort"])
    return _pick(input, dim, _argsort(d, dim, descending), True, SortBackward0, _types["sort"])


def argsort(input, dim=-1, descending=False, stable=False):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        return wrap(xp(d).zeros((), np.int64))
    return wrap(_argsort(d, dim, descending).astype(np.int64))


def topk(input, k, dim=-1, largest=True, sorted=True):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    size = d.shape[dim] if d.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if d.ndim == 0:
        return _scalar(input, TopkBackward0, _types["topk"])
    order = _argsort(d, dim, largest)
    idx = order[(slice(None),) * dim + (slice(0, k),)]
    return _pick(input, dim, idx, True, TopkBackward0, _types["topk"])


def kthvalue(input, k, dim=-1, keepdim=False):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    size = d.shape[dim] if d.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if d.ndim == 0:
        return _scalar(input, KthvalueBackward0, _types["kthvalue"])
    idx = _argsort(d, dim, False)[(slice(None),) * dim + (slice(k - 1, k),)]
    return _pick(
        input,
        dim,
        idx if keepdim else idx.squeeze(dim),
        keepdim,
        KthvalueBackward0,
        _types["kthvalue"],
    )


def median(input, dim=None, keepdim=False):
    d = input._data
    m = xp(d)
    if dim is None:
        if d.size == 0:
            return wrap(m.full((), np.nan, d.dtype))
        flat = d.reshape(-1)
        v = m.sort(flat)[(flat.size - 1) // 2]
        out = wrap(m.asarray(v).reshape(()))
        if STATE.enabled and input._requires_grad:
            node = MedianBackward0((input,))
            hit = (d == v).astype(d.dtype)
            node.share = hit / hit.sum()
            track(out, node)
        return out
    dim = wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        return _scalar(input, MedianBackward1, _types["median"])
    n = d.shape[dim]
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    j = (n - 1) // 2
    idx = _argsort(d, dim, False)[(slice(None),) * dim + (slice(j, j + 1),)]
    return _pick(
        input, dim, idx if keepdim else idx.squeeze(dim), keepdim, MedianBackward1, _types["median"]
    )


def running(m, name, a, axis):
    """numpy's `maximum`/`minimum` (name) accumulated along `axis`. cupy's ufuncs accumulate
    only add and multiply (NotImplementedError otherwise), so there it is a doubling scan:
    log2(n) elementwise passes, each reading the previous pass's values."""
    f = getattr(m, name)
    if m is np:
        return f.accumulate(a, axis=axis)
    out, n, shift = a.copy(), a.shape[axis], 1
    while shift < n:
        hi, lo = [slice(None)] * a.ndim, [slice(None)] * a.ndim
        hi[axis], lo[axis] = slice(shift, None), slice(0, n - shift)
        out[tuple(hi)] = f(out[tuple(hi)], out[tuple(lo)])
        shift *= 2
    return out


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest of equally frequent ones) and the last
    index holding it."""
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        return _scalar(input, ModeBackward0, _types["mode"])
    m = xp(d)
    order = _argsort(d, dim, False)
    s = m.take_along_axis(d, order, axis=dim)
    n = d.shape[dim]
    pos = m.arange(n).reshape([-1 if i == dim else 1 for i in range(d.ndim)])
    lead = [slice(None)] * d.ndim
    lead[dim] = slice(1, None)
    tail = list(lead)
    tail[dim] = slice(0, -1)
    new = m.ones(s.shape, bool)
    new[tuple(lead)] = s[tuple(lead)] != s[tuple(tail)]  # a run of equal values starts here
    start = running(m, "maximum", m.where(new, pos, 0), dim)
    last = m.ones(s.shape, bool)  # a run ends where the next one starts, or at the end
    last[tuple(tail)] = new[tuple(lead)]
    end = (n - 1) - m.flip(
        running(m, "maximum", m.where(m.flip(last, axis=dim), pos, 0), dim), axis=dim
    )
    length = end - start + 1
    first = m.argmax(length, axis=dim)  # the earliest longest run: the smallest value
    first = m.expand_dims(first, dim)
    at = m.take_along_axis(end, first, axis=dim)  # its last element: the largest index
    idx = m.take_along_axis(order, at, axis=dim)
    return _pick(
        input, dim, idx if keepdim else idx.squeeze(dim), keepdim, ModeBackward0, _types["mode"]
    )


__all__ = ["sort", "argsort", "topk", "kthvalue", "median", "mode"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {}
FUNCTIONAL = {}
