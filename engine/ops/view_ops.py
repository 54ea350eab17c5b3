"""Views that split a tensor or read it at new strides: split, chunk, unbind, diagonal,
movedim/swapdims, Tensor.unfold, as_strided (reshape, transpose and indexing are in shape.py).
Each returns views of its input (see engine/_views.py); the ops returning several views mark
them, as PyTorch forbids writing into those in place."""

import numpy as np

from .._views import _place, make_view, mark_multi_output, positions
from ._common import STATE, Node, Tensor, track, wrap, wrap_dim, xp
from .shape import _shape_arg, cat, permute, stack, transpose

__all__ = [
    "split",
    "chunk",
    "unbind",
    "diagonal",
    "movedim",
    "moveaxis",
    "swapaxes",
    "swapdims",
    "as_strided",
]


# -- split, chunk, unbind: one node, several views ------------------------------------------------
class _PiecesNode(Node):
    """The gradients of the pieces, put back together along `dim` (zeros for missing ones)."""

    __slots__ = ("dim", "sizes", "in_shape", "in_dtype")
    single_output = False
    is_view = True

    def apply(self, grads):
        parts = []
        for g, size in zip(grads, self.sizes):
            if g is None:
                shape = list(self.in_shape)
                if self.sizes_are_slices():
                    shape[self.dim] = size
                else:
                    del shape[self.dim]
                g = wrap(np.zeros(shape, self.in_dtype))
            parts.append(g)
        if self.sizes_are_slices():
            return (cat(parts, self.dim),)
        return (stack(parts, self.dim),)

    def sizes_are_slices(self):
        return True


class SplitBackward0(_PiecesNode):
    __slots__ = ()


class SplitWithSizesBackward0(_PiecesNode):
    __slots__ = ()


class UnbindBackward0(_PiecesNode):
    __slots__ = ()

    def sizes_are_slices(self):
        return False


def _pieces(input, dim, bounds, cls, squeeze=False):
    d = input._data
    index = [slice(None)] * d.ndim
    outs = []
    for lo, hi in bounds:
        index[dim] = lo if squeeze else slice(lo, hi)
        outs.append(make_view(input, d[(*index, Ellipsis)]))
    if STATE.enabled and input._requires_grad:
        node = cls((input,))
        node.num_outputs = len(outs)
        node.dim, node.in_shape, node.in_dtype = dim, d.shape, d.dtype
        node.sizes = [hi - lo for lo, hi in bounds]
        for nr, out in enumerate(outs):
            track(out, node)
            out._output_nr = nr
    mark_multi_output(outs)
    return tuple(outs)


def split(tensor, split_size_or_sections, dim=0):
    d = tensor._data
    if d.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = wrap_dim(dim, d.ndim)
    n = d.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sizes}"
            )
        cls = SplitWithSizesBackward0
    else:
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                if size == 0
                else f"split expects split_size be non-negative, but got split_size={size}"
            )
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
        cls = SplitBackward0
    bounds, at = [], 0
    for s in sizes:
        bounds.append((at, at + s))
        at += s
    return _pieces(tensor, dim, bounds, cls)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = input._data
    if d.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = d.shape[wrap_dim(dim, d.ndim)]
    size = -(-n // chunks) if n else 1
    return split(input, max(size, 1) if n else 0, dim) if n else split(input, [0] * 1, dim)


def unbind(input, dim=0):
    d = input._data
    if d.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, d.ndim)
    bounds = [(i, i + 1) for i in range(d.shape[dim])]
    return _pieces(input, dim, bounds, UnbindBackward0, squeeze=True)


# -- diagonal -------------------------------------------------------------------------------------
class DiagonalBackward0(Node):
    __slots__ = ("in_shape", "offset", "dim1", "dim2")
    is_view = True

    def backward(self, g):
        # where each element of the diagonal sits in the input, read from a diagonal of indices
        n = 1
        for s in self.in_shape:
            n *= s
        m = xp(g._data)
        ids = m.arange(n, dtype=np.int64).reshape(self.in_shape)
        pos = m.diagonal(ids, self.offset, self.dim1, self.dim2)
        return (_place(g, pos, self.in_shape),)


def _diagonal_view(d, offset, dim1, dim2):
    """A writable diagonal view (numpy's own diagonal is read-only): the two dims moved last,
    then one stride that steps along both."""
    m = xp(d)
    rest = [i for i in range(d.ndim) if i not in (dim1, dim2)]
    a = d.transpose(*rest, dim1, dim2)
    a = a[..., :, offset:] if offset >= 0 else a[..., -offset:, :]
    n = max(0, min(a.shape[-2], a.shape[-1]))
    if n == 0:
        return m.zeros(a.shape[:-2] + (0,), d.dtype)
    st = a.strides
    return m.lib.stride_tricks.as_strided(
        a, shape=a.shape[:-2] + (n,), strides=st[:-2] + (st[-2] + st[-1],)
    )


def diagonal(input, offset=0, dim1=0, dim2=1):
    d = input._data
    dim1, dim2 = wrap_dim(dim1, d.ndim), wrap_dim(dim2, d.ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = make_view(input, _diagonal_view(d, offset, dim1, dim2))
    if STATE.enabled and input._requires_grad:
        node = DiagonalBackward0((input,))
        node.in_shape, node.offset, node.dim1, node.dim2 = d.shape, offset, dim1, dim2
        track(out, node)
    return out


# -- movedim --------------------------------------------------------------------------------------
def movedim(input, source, destination):
    n = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({src} dims) should contain the same number of dims as destination ({dst} dims)"
        )
    src = [wrap_dim(s, n) for s in src]
    dst = [wrap_dim(s, n) for s in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [None] * n
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, *order)


moveaxis = movedim


def swapdims(input, dim0, dim1):
    return transpose(input, dim0, dim1)


def swapaxes(input, axis0, axis1):
    """numpy's name for transpose, with numpy's argument names (as torch.swapaxes has them)."""
    return transpose(input, axis0, axis1)


# -- Tensor.unfold, as_strided --------------------------------------------------------------------
class UnfoldBackward0(Node):
    __slots__ = ("in_shape", "positions")
    is_view = True

    def backward(self, g):
        return (_place(g, self.positions, self.in_shape),)


def _strided(input, shape, strides, offset=0):
    """A view of input's memory with element strides `strides` from element `offset`."""
    d = input._data
    item = d.itemsize
    base = d.reshape(-1) if d.flags.c_contiguous else None
    if base is None or not _shares(base, d):
        raise RuntimeError("as_strided is only supported on contiguous tensors by Wiregrad")
    m = xp(d)
    data = m.lib.stride_tricks.as_strided(
        base[offset:], shape=tuple(shape), strides=tuple(s * item for s in strides)
    )
    return data


def _shares(a, b):
    return (a.base if a.base is not None else a) is (b.base if b.base is not None else b)


def _unfold_positions(in_shape, dim, size, step, m):
    n = 1
    for s in in_shape:
        n *= s
    ids = m.arange(n, dtype=np.int64).reshape(in_shape)
    count = (in_shape[dim] - size) // step + 1
    win = m.arange(count)[:, None] * step + m.arange(size)[None, :]
    picked = m.take(ids, win, axis=dim)  # dims: ..., count, size, ...
    return m.moveaxis(picked, dim + 1, -1)


def unfold(input, dimension, size, step):
    d = input._data
    dim = wrap_dim(dimension, max(d.ndim, 1))
    length = d.shape[dim] if d.ndim else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {dim} is {length} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    m = xp(d)
    count = (length - size) // step + 1
    if d.ndim == 0:
        data = d.reshape(1)
    else:
        st = d.strides
        shape = d.shape[:dim] + (count,) + d.shape[dim + 1 :] + (size,)
        strides = st[:dim] + (st[dim] * step,) + st[dim + 1 :] + (st[dim],)
        data = m.lib.stride_tricks.as_strided(d, shape=shape, strides=strides)
    out = make_view(input, data)
    if STATE.enabled and input._requires_grad:
        node = UnfoldBackward0((input,))
        node.in_shape = d.shape
        node.positions = (
            _unfold_positions(d.shape, dim, size, step, m) if d.ndim else m.zeros((1,), np.int64)
        )
        track(out, node)
    return out


class AsStridedBackward0(UnfoldBackward0):
    __slots__ = ()


def as_strided(input, size, stride, storage_offset=0):
    size, stride = _shape_arg((size,)), _shape_arg((stride,))
    data = _strided(input, size, stride, storage_offset)
    out = make_view(input, data)
    if STATE.enabled and input._requires_grad:
        node = AsStridedBackward0((input,))
        node.in_shape = input._data.shape
        node.positions = positions(out, input if input._base is None else input._base)
        track(out, node)
    return out


def _is_contiguous(self, memory_format=None):
    return bool(self._data.flags.c_contiguous)


def _tensor_split_dispatch(self, split_size, dim=0):
    return split(self, split_size, dim)


METHODS = {
    "split": _tensor_split_dispatch,
    "chunk": chunk,
    "unbind": unbind,
    "diagonal": diagonal,
    "movedim": movedim,
    "moveaxis": movedim,
    "swapdims": swapdims,
    "swapaxes": swapaxes,
    "unfold": unfold,
    "as_strided": as_strided,
    "is_contiguous": _is_contiguous,
}
_ = Tensor  # the methods above are bound onto Tensor by engine/_methods.py
