"""gather and the scatter family (scatter, scatter_add, scatter_reduce), with the index checks
the other indexing ops (engine/ops/gather.py) share.

Forwards work on raw arrays; every backward is written with these same ops (a gather's
gradient is a scatter_add, a scatter's source gradient is a gather ...) so double backward works.
Repeated indices add up through `_device.scatter_add` (numpy's add.at, cupyx's scatter_add).
"""

import warnings

import numpy as np

from .._device import scatter_add as _add_at
from ._common import (
    STATE,
    Node,
    NotImplementedBackward,
    Tensor,
    const,
    track,
    wrap,
    wrap_dim,
    xp,
)
from .shape import index_put


def _zeros(shape, like):
    return const(xp(like).zeros(shape, like.dtype))


def _as_index(index, name, message):
    """The index's array as int64; `message` is raised for another dtype."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    i = index._data
    if i.dtype not in (np.int64, np.int32):
        raise RuntimeError(message)
    return i.astype(np.int64, copy=False)


def _first_bad(idx, bad):
    return int(idx.ravel()[int(bad.ravel().argmax())])


def _check_range(idx, size, error, negative=False):
    """Raise error(first bad index) for any index outside [0, size) (or [-size, size) with
    negative=True); returns the indices with negative ones wrapped."""
    if idx.size == 0:
        return idx
    bad = (idx < (-size if negative else 0)) | (idx >= size)
    if bad.any():
        raise error(_first_bad(idx, bad))
    return xp(idx).where(idx < 0, idx + size, idx) if negative else idx


def _coords(idx, dim):
    """An open-mesh index tuple: element k of idx addresses out[k0, .., idx[k], .., kn]."""
    m = xp(idx)
    n = idx.ndim
    return tuple(
        idx if i == dim else m.arange(s).reshape([-1 if j == i else 1 for j in range(n)])
        for i, s in enumerate(idx.shape)
    )


# -- gather ---------------------------------------------------------------------------------------
class GatherBackward0(Node):
    __slots__ = ("dim", "index", "in_shape")

    def backward(self, g):
        z = _zeros(self.in_shape, g._data)
        return (scatter_add(z, self.dim, self.index, g),)


def _gather_checks(d, dim, idx):
    if max(idx.ndim, 1) != max(d.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ds, ids = d.shape or (1,), idx.shape or (1,)
    for i in range(len(ds)):
        if i != dim and ids[i] > ds[i]:
            raise RuntimeError(
                f"Size does not match at dimension {i} expected index {list(idx.shape)} to be no "
                f"larger than self {list(d.shape)} apart from dimension {dim}"
            )
    _check_range(idx, ds[dim], _out_of_bounds(dim, ds[dim]))


def _out_of_bounds(dim, size, prefix="", cls=RuntimeError):
    return lambda i: cls(f"{prefix}index {i} is out of bounds for dimension {dim} with size {size}")


def gather(input, dim, index, *, sparse_grad=False):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    idx = _as_index(index, "gather", "gather(): Expected dtype int32/int64 for index")
    _gather_checks(d, dim, idx)
    d1, i1 = d.reshape(d.shape or (1,)), idx.reshape(idx.shape or (1,))
    src = d1[tuple(slice(None) if k == dim else slice(0, s) for k, s in enumerate(i1.shape))]
    out = wrap(xp(d).take_along_axis(src, i1, axis=dim).reshape(idx.shape))
    if STATE.enabled and input._requires_grad:
        node = GatherBackward0((input,))
        node.dim, node.index, node.in_shape = dim, const(idx), d.shape
        track(out, node)
    return out


# -- scatter family -------------------------------------------------------------------------------
def _scatter_setup(name, input, dim, index, src):
    """Checks shared by scatter/scatter_add/scatter_reduce; returns (self array as >= 1-d, dim,
    coords into it, the source values matching the index (an array or a number))."""
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    idx = _as_index(index, name, "scatter(): Expected dtype int32/int64 for index")
    is_tensor = isinstance(src, Tensor)
    if is_tensor and src._data.dtype != d.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if max(idx.ndim, 1) != max(d.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if is_tensor and max(idx.ndim, 1) != max(src._data.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    d1, i1 = d.reshape(d.shape or (1,)), idx.reshape(idx.shape or (1,))
    s1 = src._data.reshape(src._data.shape or (1,)) if is_tensor else None
    for k in range(d1.ndim):
        if (k != dim and i1.shape[k] > d1.shape[k]) or (is_tensor and i1.shape[k] > s1.shape[k]):
            msg = (
                f"Expected index {list(idx.shape)} to be no larger than self {list(d.shape)} "
                f"apart from dimension {dim}"
            )
            if is_tensor:
                msg += f" and to be no larger size than src {list(src._data.shape)}"
            raise RuntimeError(msg)
    _check_range(i1, d1.shape[dim], _out_of_bounds(dim, d1.shape[dim]))
    if is_tensor:
        vals = s1[tuple(slice(0, s) for s in i1.shape)]
    else:
        vals = src.item() if isinstance(src, np.generic) else src
    return d1, dim, idx, _coords(i1, dim), vals


class ScatterBackward0(Node):
    """scatter with a src tensor: self loses the overwritten places, src gets them."""

    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g):
        gs = scatter(g, self.dim, self.index, 0.0) if self.needs_grad(0) else None
        gsrc = None
        if self.needs_grad(1):
            gsrc = _pad_to(gather(g, self.dim, self.index), self.src_shape)
        return (gs, gsrc)


class ScatterBackward1(Node):
    __slots__ = ("dim", "index")

    def backward(self, g):
        return (scatter(g, self.dim, self.index, 0.0),)


def _pad_to(t, shape):
    """A gradient for a src larger than the index: zeros beyond the index's extent."""
    ts = t._data.shape
    if ts == shape:
        return t
    if len(shape) == 0:
        return t.reshape(())
    return index_put(_zeros(shape, t._data), tuple(slice(0, s) for s in ts), t)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    if reduce is not None:
        return _scatter_reduce_legacy(input, dim, index, src, reduce)
    d1, dim, idx, coords, vals = _scatter_setup("scatter", input, dim, index, src)
    out_arr = d1.copy()
    out_arr[coords] = vals
    out = wrap(out_arr.reshape(input._data.shape))
    is_tensor = isinstance(src, Tensor)
    if STATE.enabled and (input._requires_grad or (is_tensor and src._requires_grad)):
        if is_tensor:
            node = ScatterBackward0((input, src))
            node.src_shape = src._data.shape
        else:
            node = ScatterBackward1((input,))
        node.dim, node.index = dim, const(idx)
        track(out, node)
    return out


def _scatter_reduce_legacy(input, dim, index, src, reduce):
    """scatter(..., reduce='add'|'multiply'), PyTorch's older form: repeats accumulate; it has no
    derivative (its grad_fn raises in backward, as PyTorch's NotImplemented node does)."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warnings.warn(
            "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
            "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
            "reduction options.",
            UserWarning,
            stacklevel=3,
        )
    d1, dim, idx, coords, vals = _scatter_setup("scatter", input, dim, index, src)
    out_arr = d1.copy()
    if not isinstance(vals, Tensor) and not hasattr(vals, "shape"):
        vals = xp(out_arr).full(idx.shape, vals, out_arr.dtype)
    (_add_at if reduce == "add" else _mul_at)(out_arr, coords, vals)
    out = wrap(out_arr.reshape(input._data.shape))
    is_tensor = isinstance(src, Tensor)
    if STATE.enabled and (input._requires_grad or (is_tensor and src._requires_grad)):
        node = NotImplementedBackward((input, src) if is_tensor else (input,))
        node.op = "scatter"
        track(out, node)
    return out


class ScatterAddBackward0(Node):
    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g):
        gsrc = None
        if self.needs_grad(1):
            gsrc = _pad_to(gather(g, self.dim, self.index), self.src_shape)
        return (g if self.needs_grad(0) else None, gsrc)


def scatter_add(input, dim, index, src):
    if not isinstance(src, Tensor):
        raise TypeError(
            f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}"
        )
    d1, dim, idx, coords, vals = _scatter_setup("scatter", input, dim, index, src)
    out_arr = d1.copy()
    _add_at(out_arr, coords, vals)
    out = wrap(out_arr.reshape(input._data.shape))
    if STATE.enabled and (input._requires_grad or src._requires_grad):
        node = ScatterAddBackward0((input, src))
        node.dim, node.index, node.src_shape = dim, const(idx), src._data.shape
        track(out, node)
    return out


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def _mul_at(a, coords, vals):
    """a[coords] *= vals with repeats multiplying. numpy has multiply.at; cupyx offers only
    scatter_add/scatter_max/scatter_min, so on cupy the product is built from sums: of
    log|v|, of negative signs and of zeros."""
    if type(a) is np.ndarray:
        np.multiply.at(a, coords, vals)
        return
    m = xp(a)
    vals = m.broadcast_to(vals, np.broadcast_shapes(*(c.shape for c in coords)))
    logs, negs, zeros = m.zeros(a.shape), m.zeros(a.shape), m.zeros(a.shape)
    _add_at(logs, coords, m.log(m.abs(m.where(vals == 0, 1, vals)).astype(np.float64)))
    _add_at(negs, coords, (vals < 0).astype(np.float64))
    _add_at(zeros, coords, (vals == 0).astype(np.float64))
    factor = m.exp(logs) * m.where(negs % 2 == 1, -1.0, 1.0) * (zeros == 0)
    a[...] = (a * factor).astype(a.dtype) if a.dtype.kind == "f" else m.rint(a * factor)


def _extreme_at(a, coords, vals, reduce):
    """a[coords] = max/min(a[coords], vals) with repeats; numpy's maximum.at / minimum.at.
    Not cupyx's scatter_max / scatter_min: their float64 atomics compare in float32 (fmaxf,
    CuPy 14), and they refuse float16, bool and 8/16-bit integers. On cupy: sort the values by
    target place, then by value, and take each place's last (amax) or first (amin) value."""
    if type(a) is np.ndarray:
        (np.maximum if reduce == "amax" else np.minimum).at(a, coords, vals)
        return
    m = xp(a)
    shape = np.broadcast_shapes(*(c.shape for c in coords))
    place = 0
    for c, n in zip(coords, a.shape):  # the flat (C-order) place each value goes to
        place = place * n + c
    place = m.broadcast_to(place, shape).ravel()
    if place.size == 0:
        return
    v = m.broadcast_to(vals, shape).ravel()
    order = m.argsort(v, kind="stable")  # NaN last, so a place's last value is NaN if any is
    order = order[m.argsort(place[order], kind="stable")]
    place, v = place[order], v[order]
    last = m.ones(place.shape, bool)
    last[:-1] = place[1:] != place[:-1]
    first = m.ones(place.shape, bool)
    first[1:] = last[:-1]
    top = v[last] if reduce == "amax" else v[first]
    if reduce == "amin" and v.dtype.kind == "f":
        top = m.where(m.isnan(v[last]), v[last], top)  # NaN wins, as numpy's minimum
    flat, where = a.reshape(-1), place[last]
    flat[where] = (m.maximum if reduce == "amax" else m.minimum)(flat[where], top)


def _scatter_reduce_array(d1, coords, vals, reduce, include_self):
    """The forward on arrays: (result, count of contributions per place or None)."""
    m = xp(d1)
    out = d1.copy()
    if not include_self:
        out[coords] = _identity(reduce, d1.dtype)
    count = None
    if reduce in ("sum", "mean"):
        _add_at(out, coords, vals)
        if reduce == "mean":
            count = m.ones(d1.shape) if include_self else m.zeros(d1.shape)
            _add_at(count, coords, m.ones(vals.shape))
            count = m.maximum(count, 1)
            if out.dtype.kind == "f":
                out = out / count.astype(out.dtype)
            else:
                out = m.floor_divide(out, count.astype(out.dtype))
    elif reduce == "prod":
        _mul_at(out, coords, vals)
    else:
        _extreme_at(out, coords, vals, reduce)
    return out, count


class ScatterReduceBackward0(Node):
    __slots__ = ("dim", "index", "src_shape", "reduce", "include_self", "count", "touched")
    saves_output = True

    def backward(self, g):
        x, src, out = self.unpack()
        dim, index, reduce = self.dim, self.index, self.reduce
        kept = None if self.include_self else const(~self.touched)  # self's places still in
        gs = gsrc = None
        if reduce == "sum":
            gs = g if kept is None else g * kept
            gsrc = gather(g, dim, index)
        elif reduce == "mean":
            gc = g / const(self.count.astype(g._data.dtype))
            gs = gc if kept is None else g * kept
            gsrc = gather(gc, dim, index)
        elif reduce == "prod":
            gs = self._prod_self(g, x, src, kept)
            gsrc = self._prod_src(g, x, src, out)
        else:
            xd, od = x._data, out._data
            self_hit = xp(od).asarray(xd == od)  # an array also for 0-d (== gives a scalar)
            if kept is not None:
                self_hit &= ~self.touched
            src_hit = _sliced_like(src, index)._data == _picked(out, dim, index)
            n = self_hit.astype(od.dtype)
            _add_at(n.reshape(n.shape or (1,)), _coords1(index, dim), src_hit.astype(od.dtype))
            gn = g / const(n)
            gs = gn * const(self_hit.astype(od.dtype))
            gsrc = gather(gn, dim, index) * const(src_hit.astype(od.dtype))
        if gsrc is not None:
            gsrc = _pad_to(gsrc, self.src_shape)
        return (gs if self.needs_grad(0) else None, gsrc if self.needs_grad(1) else None)

    def _prod_self(self, g, x, src, kept):
        if kept is not None:
            return g * kept
        # the product of the other contributors: out / x, or, where x is 0, the result with x as 1
        x1 = x.masked_fill(const(x._data == 0), 1.0)
        return g * scatter_reduce(x1, self.dim, self.index, src, "prod") / x1

    def _prod_src(self, g, x, src, out):
        dim, index = self.dim, self.index
        src_g = _sliced_like(src, index)
        zero = src_g._data == 0
        zeros = xp(zero).zeros(out._data.shape or (1,))
        _add_at(zeros, _coords1(index, dim), zero.astype(zeros.dtype))
        zeros = zeros.reshape(out._data.shape)
        lone = zero & (_picked(const(zeros), dim, index) == 1)  # its place's only zero source
        lone_t = const(lone)
        alt = scatter_reduce(
            x, dim, index, src_g.masked_fill(lone_t, 1.0), "prod", include_self=self.include_self
        )
        plain = gather(g * out, dim, index) / src_g.masked_fill(const(zero), 1.0)
        return plain.masked_fill(lone_t, 0.0) + gather(g * alt, dim, index) * const(
            lone.astype(zeros.dtype)
        )


def _picked(t, dim, index):
    """The array of t's values that gather(t, dim, index) reads."""
    return gather(t.detach(), dim, index)._data


def _coords1(index, dim):
    i = index._data
    return _coords(i.reshape(i.shape or (1,)), dim)


def _sliced_like(src, index):
    """src cut to index's extent (the part a scatter reads), differentiably."""
    ss, ids = src._data.shape, index._data.shape
    return src if ss == ids else src[tuple(slice(0, s) for s in ids)]


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch takes these too
    if reduce not in _REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    d1, dim, idx, coords, vals = _scatter_setup("scatter", input, dim, index, src)
    out_arr, count = _scatter_reduce_array(d1, coords, vals, reduce, include_self)
    out = wrap(out_arr.reshape(input._data.shape))
    if STATE.enabled and (input._requires_grad or src._requires_grad):
        node = ScatterReduceBackward0((input, src), (input, src, out.detach()))
        node.dim, node.index, node.src_shape = dim, const(idx), src._data.shape
        node.reduce, node.include_self = reduce, include_self
        node.count = None if count is None else count.reshape(input._data.shape)
        node.touched = None
        if not include_self:
            touched = xp(d1).zeros(d1.shape, bool)
            touched[coords] = True
            node.touched = touched.reshape(input._data.shape)
        track(out, node)
    return out


__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = {n: globals()[n] for n in ("scatter", "scatter_add", "scatter_reduce")}
FUNCTIONAL = {}
