"""Ops that copy their input's elements into a new order or a new layout: flip, roll, repeat,
repeat_interleave, tile, tril/triu, diag, diag_embed, rot90, one_hot and nn.functional.pad.

Several of them move elements by an index array along one dim. `_take` (gather along a dim) and
`_put` (scatter-add along a dim) are each other's backward, so every order of gradient works.
"""

import numpy as np

from .._device import scatter_add
from ._common import (
    Node,
    Tensor,
    not_implemented,
    requires_grad,
    track,
    wrap,
    wrap_dim,
    xp,
)

__all__ = [
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "repeat_interleave",
    "tile",
    "tril",
    "triu",
    "diag",
    "diag_embed",
    "rot90",
]


def _ints(args, name):
    """Varargs or one sequence of ints, as PyTorch's int-list arguments accept."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    for a in args:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(
                f"{name}(): argument must be tuple of ints, but found element of type "
                f"{type(a).__name__}"
            )
    return tuple(int(a) for a in args)


def _unique_dims(dims, ndim):
    dims = tuple(wrap_dim(d, ndim) for d in dims)
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


# -- gather / scatter-add along one dim: each the other's backward ------------------------------
class IndexSelectBackward0(Node):
    """out = input.index_select(dim, idx); the gradient is scattered back (adding repeats)."""

    __slots__ = ("dim", "idx", "size")

    def backward(self, g):
        return (_put(g, self.dim, self.idx, self.size),)


class IndexAddBackward0(Node):
    """out = zeros.index_add(dim, idx, input); the gradient is gathered back."""

    __slots__ = ("dim", "idx", "size")

    def backward(self, g):
        return (_take(g, self.dim, self.idx),)


def _take(x, dim, idx, node_cls=IndexSelectBackward0):
    d = x._data
    out = wrap(xp(d).take(d, idx, axis=dim))
    if requires_grad(x):
        node = node_cls((x,))
        node.dim, node.idx, node.size = dim, idx, d.shape[dim]
        track(out, node)
    return out


def _put(g, dim, idx, size):
    d = g._data
    m = xp(d)
    shape = list(d.shape)
    shape[dim] = size
    data = m.zeros(shape, d.dtype)
    scatter_add(m.moveaxis(data, dim, 0), idx, m.moveaxis(d, dim, 0))
    out = wrap(data)
    if requires_grad(g):
        node = IndexAddBackward0((g,))
        node.dim, node.idx, node.size = dim, idx, d.shape[dim]
        track(out, node)
    return out


def _index(d, values):
    """An int64 index array on the device of array `d` (index maths is done on the host)."""
    return xp(d).asarray(np.asarray(values, dtype=np.int64))


class _TakeStepsNode(Node):
    """A chain of gathers along several dims recorded as one op (the pads): steps are
    (dim, idx, size) in forward order; the gradient scatters back in reverse."""

    __slots__ = ("steps",)

    def backward(self, g):
        for dim, idx, size in reversed(self.steps):
            g = _put(g, dim, idx, size)
        return (g,)


def _take_steps(input, steps, node_cls):
    d = input._data
    m = xp(d)
    for dim, idx, _ in steps:
        d = m.take(d, idx, axis=dim)
    out = wrap(d)
    if requires_grad(input):
        node = node_cls((input,))
        node.steps = steps
        track(out, node)
    return out


# -- flip, roll, rot90 -----------------------------------------------------------------------
class FlipBackward0(Node):
    __slots__ = ("dims",)

    def backward(self, g):
        return (flip(g, self.dims),)


def flip(input, *dims, **kwargs):
    if "dims" in kwargs:
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    d = input._data
    dims = _unique_dims(_ints(dims, "flip"), d.ndim)
    data = xp(d).flip(d, dims).copy() if dims and d.ndim else d.copy()
    out = wrap(data)
    if requires_grad(input):
        node = FlipBackward0((input,))
        node.dims = dims
        track(out, node)
    return out


def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


class RollBackward0(Node):
    __slots__ = ("shifts", "dims")

    def backward(self, g):
        return (roll(g, tuple(-s for s in self.shifts), self.dims),)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    d = input._data
    if dims:
        dims = tuple(wrap_dim(x, d.ndim) for x in dims)
    m = xp(d)
    if d.ndim == 0:
        data = d.copy()
    elif dims:
        data = m.roll(d, shifts, dims)
    else:  # rolls the flattened tensor
        data = m.roll(d, shifts[0])
    out = wrap(data)
    if requires_grad(input):
        node = RollBackward0((input,))
        node.shifts, node.dims = shifts, dims if dims else None
        track(out, node)
    return out


class Rot90Backward0(Node):
    __slots__ = ("k", "dims")

    def backward(self, g):
        return (rot90(g, -self.k, self.dims),)


def rot90(input, k=1, dims=(0, 1)):
    d = input._data
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if d.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {d.ndim}")
    d0, d1 = (wrap_dim(x, d.ndim) for x in dims)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    out = wrap(xp(d).rot90(d, k, (d0, d1)).copy())
    if requires_grad(input):
        node = Rot90Backward0((input,))
        node.k, node.dims = k, (d0, d1)
        track(out, node)
    return out


# -- repeat, tile, repeat_interleave -----------------------------------------------------------
class RepeatBackward0(Node):
    __slots__ = ("repeats", "in_shape")

    def backward(self, g):
        reps = self.repeats
        lead = len(reps) - len(self.in_shape)
        sizes = (1,) * lead + tuple(self.in_shape)
        split = [n for pair in zip(reps, sizes) for n in pair]  # (r0, s0, r1, s1, ...)
        g = g.reshape(split).sum(tuple(range(0, len(split), 2)))
        return (g.reshape(self.in_shape),)


def repeat(input, *sizes):
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _ints(sizes, "repeat")
    d = input._data
    if len(reps) < d.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(reps) - d.ndim) + d.shape
    target = [r * s for r, s in zip(reps, padded)]
    for t in target:
        if t < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {t}: {target}")
    out = wrap(xp(d).tile(d.reshape(padded), reps))
    if requires_grad(input):
        node = RepeatBackward0((input,))
        node.repeats, node.in_shape = reps, d.shape
        track(out, node)
    return out


def tile(input, *dims):
    reps = _ints(dims, "tile")
    n = input._data.ndim
    return repeat(input, (1,) * (n - len(reps)) + reps)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats): the indices, each repeated
        counts = input
        n = counts._data.shape[0] if counts._data.ndim else 1
        return repeat_interleave(wrap(xp(counts._data).arange(n)), counts, 0)
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        input, d = input.reshape(1), d.reshape(1)
    if isinstance(repeats, Tensor):
        return _repeat_by_tensor(input, repeats, dim, output_size)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    # as PyTorch composes it: each element a new dim of `repeats` copies, then folded back in
    shape = list(d.shape)
    expanded = input.unsqueeze(dim + 1).expand(shape[: dim + 1] + [repeats] + shape[dim + 1 :])
    shape[dim] *= repeats
    return expanded.clone().reshape(shape)


def _repeat_by_tensor(input, repeats, dim, output_size):
    r = repeats._data
    if r.dtype.kind not in "iu":
        kind = "cuda" if input.is_cuda else "cpu"
        raise not_implemented(f"repeat_interleave_{kind}", repeats._data.dtype)
    n = input._data.shape[dim]
    if r.size == 1:  # one count for every element
        r = r.reshape(1).repeat(n)
    if r.ndim != 1 or r.shape[0] != n:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {r.shape[0] if r.ndim else 1} and input.size(0) = {n}"
        )
    m = xp(r)
    if r.size and bool(r.min() < 0):
        raise RuntimeError("repeats can not be negative")
    # element k of the output comes from the first input whose running count passes k
    # (cupy's repeat takes no array of counts)
    total = int(r.sum()) if r.size else 0
    idx = m.searchsorted(m.cumsum(r), m.arange(total), side="right")
    if output_size is not None and output_size != idx.shape[0]:
        raise RuntimeError("allocated size does not match required size")
    return _take(input, dim, idx)


# -- tril, triu -------------------------------------------------------------------------------
class TrilBackward0(Node):
    __slots__ = ("diagonal",)

    def backward(self, g):
        return (tril(g, self.diagonal),)


class TriuBackward0(Node):
    __slots__ = ("diagonal",)

    def backward(self, g):
        return (triu(g, self.diagonal),)


def _triangle(input, diagonal, name, node_cls):
    d = input._data
    if d.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    out = wrap(getattr(xp(d), name)(d, diagonal))
    if requires_grad(input):
        node = node_cls((input,))
        node.diagonal = diagonal
        track(out, node)
    return out


def tril(input, diagonal=0):
    return _triangle(input, diagonal, "tril", TrilBackward0)


def triu(input, diagonal=0):
    return _triangle(input, diagonal, "triu", TriuBackward0)


# -- diag, diag_embed ---------------------------------------------------------------------------
def _diagonal_positions(rows, cols, offset):
    """Flat positions (in a rows x cols matrix) of the diagonal `offset`."""
    r0, c0 = max(-offset, 0), max(offset, 0)
    n = max(0, min(rows - r0, cols - c0))
    i = np.arange(n)
    return (i + r0) * cols + (i + c0)


class DiagEmbedBackward0(Node):
    __slots__ = ("idx", "dims", "side")

    def backward(self, g):
        n = g._data.ndim
        rest = [i for i in range(n) if i not in self.dims]
        g = g.permute(*rest, *self.dims)
        g = g.reshape(*g._data.shape[:-2], self.side * self.side)
        return (_take(g, g._data.ndim - 1, self.idx),)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    d = input._data
    nd = d.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = d.shape[-1]
    side = n + abs(offset)
    idx = _index(d, _diagonal_positions(side, side, offset))
    m = xp(d)
    flat = m.zeros(d.shape[:-1] + (side * side,), d.dtype)
    flat[..., idx] = d
    data = m.ascontiguousarray(
        m.moveaxis(flat.reshape(d.shape[:-1] + (side, side)), (-2, -1), (d1, d2))
    )
    out = wrap(data)
    if requires_grad(input):
        node = DiagEmbedBackward0((input,))
        node.idx, node.dims, node.side = idx, (d1, d2), side
        track(out, node)
    return out


class DiagonalBackward0_copy(Node):  # noqa: N801 - PyTorch's name for diag() of a matrix
    __slots__ = ("idx", "in_shape")

    def backward(self, g):
        rows, cols = self.in_shape
        return (_put(g, 0, self.idx, rows * cols).reshape(rows, cols),)


def diag(input, diagonal=0):
    d = input._data
    if d.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if d.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {d.ndim}D")
    idx = _index(d, _diagonal_positions(*d.shape, diagonal))
    out = wrap(xp(d).take(d.reshape(-1), idx))
    if requires_grad(input):
        node = DiagonalBackward0_copy((input,))
        node.idx, node.in_shape = idx, d.shape
        track(out, node)
    return out


# -- one_hot ---------------------------------------------------------------------------------
def one_hot(tensor, num_classes=-1):
    d = tensor._data
    if d.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    m = xp(d)
    if num_classes == -1:
        if d.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(d.max()) + 1
    if d.size:
        if int(d.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(d.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return wrap((d[..., None] == m.arange(num_classes)).astype(np.int64))


# -- nn.functional.pad ---------------------------------------------------------------------------
class ConstantPadNdBackward0(Node):
    __slots__ = ("pad",)

    def backward(self, g):
        return (pad(g, tuple(-p for p in self.pad)),)


class ReflectionPad1DBackward0(_TakeStepsNode):
    __slots__ = ()


class ReflectionPad2DBackward0(_TakeStepsNode):
    __slots__ = ()


class ReflectionPad3DBackward0(_TakeStepsNode):
    __slots__ = ()


class ReplicationPad1DBackward0(_TakeStepsNode):
    __slots__ = ()


class ReplicationPad2DBackward0(_TakeStepsNode):
    __slots__ = ()


class ReplicationPad3DBackward0(_TakeStepsNode):
    __slots__ = ()


class CopySlices(_TakeStepsNode):
    """Circular padding (PyTorch writes it as slice copies into a new tensor)."""

    __slots__ = ()

    def name(self):
        return "torch::autograd::CopySlices"


_PAD_NODES = {
    "reflect": (ReflectionPad1DBackward0, ReflectionPad2DBackward0, ReflectionPad3DBackward0),
    "replicate": (ReplicationPad1DBackward0, ReplicationPad2DBackward0, ReplicationPad3DBackward0),
    "circular": (CopySlices,) * 3,
}


def pad(input, pad, mode="constant", value=None):
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element of "
                f"type {type(p).__name__} at pos {i}"
            )
    pad = tuple(int(p) for p in pad)
    d = input._data
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > d.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {d.ndim}"
        )
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if mode not in _PAD_NODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or d.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {d.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    steps = (_circular_steps if mode == "circular" else _edge_steps)(d, pad, mode, k)
    return _take_steps(input, steps, _PAD_NODES[mode][k - 1])


def _constant_pad(input, pad, value):
    d = input._data
    out_shape, src, dst = list(d.shape), [slice(None)] * d.ndim, [slice(None)] * d.ndim
    for j in range(len(pad) // 2):
        dim = d.ndim - 1 - j
        lo, hi, n = pad[2 * j], pad[2 * j + 1], d.shape[dim]
        start, stop = max(-lo, 0), n - max(-hi, 0)
        if stop < start:
            raise RuntimeError("narrow(): length must be non-negative.")
        src[dim] = slice(start, stop)
        dst[dim] = slice(max(lo, 0), max(lo, 0) + stop - start)
        out_shape[dim] = n + lo + hi
    m = xp(d)
    data = m.full(out_shape, value, d.dtype)
    data[tuple(dst)] = d[tuple(src)]
    out = wrap(data)
    if requires_grad(input):
        node = ConstantPadNdBackward0((input,))
        node.pad = pad
        track(out, node)
    return out


def _edge_steps(d, pad, mode, k):
    """Gathers for reflect and replicate padding, with PyTorch's checks."""
    shape = list(d.shape)
    batch = d.ndim == k + 2
    if any(s == 0 for s in shape[1 if batch else 0 :]) or (not batch and shape[0] == 0):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {shape}"
        )
    steps, out_shape = [], list(shape)
    for j in range(k):
        dim = d.ndim - 1 - j
        lo, hi, n = pad[2 * j], pad[2 * j + 1], shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                f"{shape}"
            )
        out_shape[dim] = n + lo + hi
    for j in range(k):
        dim = d.ndim - 1 - j
        lo, hi, n = pad[2 * j], pad[2 * j + 1], shape[dim]
        if k == 1 and n + lo + hi < 1:
            raise RuntimeError(f"input (W: {n}) is too small. Calculated output W: {n + lo + hi}")
        if n + lo + hi < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n + lo + hi}: {out_shape}"
            )
        i = np.arange(-lo, n + hi)
        if mode == "reflect":
            i = np.abs(i)
            i = np.where(i > n - 1, 2 * (n - 1) - i, i)
        else:
            i = np.clip(i, 0, n - 1)
        steps.append((dim, _index(d, i), n))
    return steps


def _circular_steps(d, pad, mode, k):
    steps = []
    for j in range(k):
        dim = d.ndim - 1 - j
        lo, hi, n = pad[2 * j], pad[2 * j + 1], d.shape[dim]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        # negative pads crop first; the positive ones then wrap around what is left
        kept = np.arange(max(-lo, 0), n - max(-hi, 0))
        i = np.arange(-max(lo, 0), len(kept) + max(hi, 0))
        steps.append((dim, _index(d, kept[i % len(kept)] if len(kept) else kept), n))
    return steps


METHODS = {
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "rot90": rot90,
    "repeat": repeat,
    "tile": tile,
    "repeat_interleave": repeat_interleave,
    "tril": tril,
    "triu": triu,
    "diag": diag,
    "diag_embed": diag_embed,
}
INPLACE = {
    "tril": tril,
    "triu": triu,
}
FUNCTIONAL = {"one_hot": one_hot, "pad": pad}
