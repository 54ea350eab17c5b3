"""Indexing ops that pick or place elements by an index tensor: index_select / index_add /
index_fill / index_copy, masked_select / masked_scatter, take, take_along_dim, nonzero, argwhere
(gather and the scatter family are in engine/ops/scatter.py).

Forwards work on raw arrays; each backward is written with these same ops so double backward
works. Repeated indices add up through `_device.scatter_add` (numpy's add.at, cupyx's
scatter_add)."""

import numpy as np

from .._device import scatter_add as _add_at
from ._common import (
    STATE,
    Node,
    Tensor,
    broadcast_error,
    const,
    track,
    type_name,
    wrap,
    wrap_dim,
    xp,
)
from .reduce import sum_to
from .scatter import (
    _check_range,
    _out_of_bounds,
    _zeros,
    gather,
)
from .shape import cat

__all__ = [
    "index_select",
    "index_add",
    "index_fill",
    "index_copy",
    "masked_select",
    "masked_scatter",
    "take",
    "take_along_dim",
    "nonzero",
    "argwhere",
]


# -- index_select, index_add, index_fill, index_copy ---------------------------------------------
def _vector_index(index, name, dtype_msg, dim_error, int64_only=False):
    """An index_* op's index as a 1-d int64 array."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    i = index._data
    if i.dtype not in ((np.int64,) if int64_only else (np.int64, np.int32)):
        raise dtype_msg(i.dtype)
    if i.ndim > 1:
        raise dim_error(i)
    return i.astype(np.int64, copy=False).reshape(-1)


def _moved(a, dim):
    """a with `dim` first (a view), a 0-d array seen as 1-d."""
    return xp(a).moveaxis(a.reshape(a.shape or (1,)), dim, 0)


class IndexSelectBackward0(Node):
    __slots__ = ("dim", "index", "in_shape")

    def backward(self, g):
        return (index_add(_zeros(self.in_shape, g._data), self.dim, self.index, g),)


def index_select(input, dim, index):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    idx = _vector_index(
        index,
        "index_select",
        lambda _: RuntimeError("index_select(): Expected dtype int32 or int64 for index"),
        lambda _: IndexError("index_select(): Index is supposed to be a vector"),
    )
    size = d.shape[dim] if d.ndim else 1
    if d.ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
        )
    _check_range(
        idx,
        size,
        lambda i: RuntimeError(f"INDICES element is out of DATA bounds, id={i} axis_dim={size}"),
    )
    out = wrap(xp(d).take(d, idx, axis=dim) if d.ndim else d.copy())
    if STATE.enabled and input._requires_grad:
        node = IndexSelectBackward0((input,))
        node.dim, node.index, node.in_shape = dim, const(idx), d.shape
        track(out, node)
    return out


class IndexAddBackward0(Node):
    __slots__ = ("dim", "index", "alpha", "src_shape")

    def backward(self, g):
        gsrc = None
        if self.needs_grad(1):
            gsrc = index_select(g, self.dim, self.index).reshape(self.src_shape)
            if self.alpha != 1:
                gsrc = gsrc * self.alpha
        return (g if self.needs_grad(0) else None, gsrc)


def _source_checks(name, d, dim, idx, s):
    if s.ndim and d.ndim and dim >= s.ndim:
        raise RuntimeError(
            f"{name}(): Indexing dim {dim} is out of bounds of the source tensor with dim {s.ndim}"
        )
    n = s.shape[dim] if s.ndim else 1
    if idx.size != n:
        raise RuntimeError(
            f"{name}(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({n}), for dim: {dim}"
        )
    if (
        s.ndim
        and d.ndim
        and (
            s.ndim != d.ndim
            or any(a != b for k, (a, b) in enumerate(zip(d.shape, s.shape)) if k != dim)
        )
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(d.shape)} source.shape = {list(s.shape)}"
        )
    if (not d.ndim) != (not s.ndim) and s.size != 1:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(d.shape)} source.shape = {list(s.shape)}"
        )


def index_add(input, dim, index, source, *, alpha=1):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    idx = _vector_index(
        index,
        "index_add_",
        lambda dt: RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {type_name(dt)}"
        ),
        lambda i: IndexError(
            "index_add_(): Index is supposed to be a vector, but got dim: "
            f"{i.ndim} with type: {type_name(i.dtype)} and size: {list(i.shape)}"
        ),
    )
    s = source._data
    if s.dtype != d.dtype:
        raise RuntimeError(
            f"index_add_(): self ({type_name(d.dtype)}) and source ({type_name(s.dtype)}) "
            "must have the same scalar type"
        )
    _source_checks("index_add_", d, dim, idx, s)
    size = d.shape[dim] if d.ndim else 1
    _check_range(idx, size, _out_of_bounds(dim, size))
    out_arr = d.copy()
    vals = _moved(s, dim) if s.ndim else s.reshape(1)
    _add_at(_moved(out_arr, dim), idx, vals if alpha == 1 else vals * alpha)
    out = wrap(out_arr)
    if STATE.enabled and (input._requires_grad or source._requires_grad):
        node = IndexAddBackward0((input, source))
        node.dim, node.index, node.alpha, node.src_shape = dim, const(idx), alpha, s.shape
        track(out, node)
    return out


class IndexFillBackward0(Node):
    __slots__ = ("dim", "index")

    def backward(self, g):
        return (index_fill(g, self.dim, self.index, 0.0),)


class IndexFillBackward1(IndexFillBackward0):
    def backward(self, g):
        gv = None
        if self.needs_grad(1):  # a place filled twice still holds the value once
            unique = const(xp(self.index._data).unique(self.index._data))
            gv = index_select(g, self.dim, unique).sum()
        return (index_fill(g, self.dim, self.index, 0.0) if self.needs_grad(0) else None, gv)


def index_fill(input, dim, index, value):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    idx = _vector_index(
        index,
        "index_fill_",
        lambda _: IndexError("index_fill_(): Expected dtype int64 for index."),
        lambda _: RuntimeError("Index has to be a vector/scalar"),
        int64_only=True,
    )
    is_tensor = isinstance(value, Tensor)
    if is_tensor and value._data.ndim:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    size = d.shape[dim] if d.ndim else 1
    idx = _check_range(idx, size, _out_of_bounds(dim, size, cls=IndexError), negative=True)
    out_arr = d.copy()
    v = value._data if is_tensor else value
    _moved(out_arr, dim)[idx] = v
    out = wrap(out_arr)
    if STATE.enabled and (input._requires_grad or (is_tensor and value._requires_grad)):
        node = IndexFillBackward1((input, value)) if is_tensor else IndexFillBackward0((input,))
        node.dim, node.index = dim, const(idx)
        track(out, node)
    return out


class IndexCopyBackward0(Node):
    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g):
        gs = index_fill(g, self.dim, self.index, 0.0) if self.needs_grad(0) else None
        gsrc = None
        if self.needs_grad(1):
            gsrc = index_select(g, self.dim, self.index).reshape(self.src_shape)
        return (gs, gsrc)


def index_copy(input, dim, index, source):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    idx = _vector_index(
        index,
        "index_copy_",
        lambda dt: RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {type_name(dt)}"
        ),
        lambda i: IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {i.ndim})"),
        int64_only=True,
    )
    s = source._data
    if s.dtype != d.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{type_name(d.dtype)} and (source) {type_name(s.dtype)}"
        )
    if s.ndim and d.ndim and s.ndim != d.ndim:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({s.ndim}), destination dimensionality ({d.ndim})"
        )
    n = s.shape[dim] if s.ndim else 1
    if idx.size != n:
        raise IndexError(
            f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
            f"({n})"
        )
    if s.ndim and any(a != b for k, (a, b) in enumerate(zip(d.shape, s.shape)) if k != dim):
        rest = [k for k in range(d.ndim) if k != dim]
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(str(d.shape[k]) for k in rest)} at dimension {dim} and "
            f"source slice shape: {' '.join(str(s.shape[k]) for k in rest)} at dimension 0."
        )
    size = d.shape[dim] if d.ndim else 1
    _check_range(idx, size, _out_of_bounds(dim, size, "index_copy_(): ", IndexError))
    out_arr = d.copy()
    _moved(out_arr, dim)[idx] = _moved(s, dim) if s.ndim else s
    out = wrap(out_arr)
    if STATE.enabled and (input._requires_grad or source._requires_grad):
        node = IndexCopyBackward0((input, source))
        node.dim, node.index, node.src_shape = dim, const(idx), s.shape
        track(out, node)
    return out


# -- masked_select, masked_scatter ---------------------------------------------------------------
def _broadcast(a, b):
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None


class MaskedSelectBackward0(Node):
    __slots__ = ("mask", "in_shape")

    def backward(self, g):
        mask = self.mask
        z = _zeros(mask._data.shape, g._data)
        return (sum_to(masked_scatter(z, mask, g), self.in_shape),)


def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask._data.dtype != bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    d, md = input._data, mask._data
    shape = _broadcast(md, d)  # PyTorch names the mask "tensor a"
    m = xp(d)
    mb = m.broadcast_to(md, shape)
    out = wrap(m.broadcast_to(d, shape)[mb])
    if STATE.enabled and input._requires_grad:
        node = MaskedSelectBackward0((input,))
        node.mask, node.in_shape = const(mb), d.shape
        track(out, node)
    return out


class MaskedScatterBackward0(Node):
    __slots__ = ("mask", "in_shape", "src_shape")

    def backward(self, g):
        gs = gsrc = None
        if self.needs_grad(0):
            gs = sum_to(g.masked_fill(self.mask, 0.0), self.in_shape)
        if self.needs_grad(1):
            picked = masked_select(g, self.mask)
            numel = int(np.prod(self.src_shape))
            rest = numel - picked._data.size
            if rest:
                picked = cat([picked, _zeros((rest,), g._data)])
            gsrc = picked.reshape(self.src_shape)
        return (gs, gsrc)


def masked_scatter(input, mask, source):
    d, md, s = input._data, mask._data, source._data
    if md.dtype != bool:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{type_name(md.dtype)}"
        )
    if s.dtype != d.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{type_name(d.dtype)} and {type_name(s.dtype)}"
        )
    shape = _broadcast(d, md)
    m = xp(d)
    mb = m.broadcast_to(md, shape)
    count = int(mb.sum())
    if count > s.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out_arr = m.broadcast_to(d, shape).copy()
    out_arr[mb] = s.reshape(-1)[:count]
    out = wrap(out_arr)
    if STATE.enabled and (input._requires_grad or source._requires_grad):
        node = MaskedScatterBackward0((input, source))
        node.mask, node.in_shape, node.src_shape = const(mb), d.shape, s.shape
        track(out, node)
    return out


# -- take, take_along_dim -------------------------------------------------------------------------
class TakeBackward0(Node):
    __slots__ = ("index", "in_shape")

    def backward(self, g):
        n = int(np.prod(self.in_shape))
        z = _zeros((n,), g._data)
        return (index_add(z, 0, self.index, g.reshape(-1)).reshape(self.in_shape),)


def take(input, index):
    d = input._data
    i = index._data
    if i.dtype != np.int64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {type_name(i.dtype)}"
        )
    n = d.size
    i = _check_range(
        i,
        n,
        lambda k: IndexError(
            f"out of range: tried to access index {k} on a tensor of {n} elements."
        ),
        negative=True,
    )
    out = wrap(d.reshape(-1)[i])
    if STATE.enabled and input._requires_grad:
        node = TakeBackward0((input,))
        node.index, node.in_shape = const(i.reshape(-1)), d.shape
        track(out, node)
    return out


def take_along_dim(input, indices, dim=None):
    """A gather after broadcasting input and indices (PyTorch's grad_fn is GatherBackward0).
    With a dim, negative indices count from the end (PyTorch 2.13 on CPU also wraps indices
    past the end silently, where this raises gather's out-of-bounds error); without one,
    PyTorch wraps none, and neither does this."""
    i = indices._data
    if i.dtype != np.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {type_name(i.dtype)}"
        )
    if dim is None:
        flat = input.reshape(-1)
        return gather(flat, 0, const(i.reshape(-1)))  # PyTorch wraps no negatives here
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    if i.ndim != d.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {d.ndim} dimensions for input, and {i.ndim} dimensions for "
            "indices"
        )
    if d.ndim == 0:
        return gather(input, 0, indices)
    da, ia = list(d.shape), list(i.shape)
    da[dim] = ia[dim] = 1
    try:
        shape = list(np.broadcast_shapes(tuple(da), tuple(ia)))
    except ValueError:
        raise broadcast_error(da, ia) from None
    in_shape, idx_shape = list(shape), list(shape)
    in_shape[dim], idx_shape[dim] = d.shape[dim], i.shape[dim]
    x = input if list(d.shape) == in_shape else input.expand(in_shape)
    i = xp(i).broadcast_to(i, idx_shape)
    return gather(x, dim, const(_wrap_negative(i, d.shape[dim])))


def _wrap_negative(i, n):
    return xp(i).where((i < 0) & (i >= -n), i + n, i)


# -- nonzero, argwhere ---------------------------------------------------------------------------
def nonzero(input, *, as_tuple=False):
    d = input._data
    m = xp(d)
    if d.ndim == 0:
        hit = int(bool(d))
        if as_tuple:
            return (wrap(m.zeros(hit, np.int64)),)
        return wrap(m.zeros((hit, 0), np.int64))
    where = m.nonzero(d)
    if as_tuple:
        return tuple(wrap(w.astype(np.int64)) for w in where)
    return wrap(m.stack(where, axis=1).astype(np.int64))


def argwhere(input):
    return nonzero(input)


METHODS = {name: globals()[name] for name in __all__}
INPLACE = {
    name: globals()[name]
    for name in (
        "index_add",
        "index_fill",
        "index_copy",
        "masked_scatter",
    )
}
FUNCTIONAL = {}
