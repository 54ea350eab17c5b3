"""Pooling, resampling and im2col: max/avg pools (1-d, 2-d), adaptive pools, interpolate, unfold
and fold.

Every op here is linear in its input once its geometry (and, for max pools, the chosen indices)
is fixed, so each is a pair of raw kernels, the map and its adjoint: the forward node's backward
runs the adjoint in a node whose backward runs the map again (double backward to any order).
Pools loop over the kernel's taps only, each tap one vectorised op over every window (max pools
whose windows tile the input gather the taps in one copy first, see _tiled_max); adaptive
pools and interpolation along a dim are a small (out, in) matrix applied with one matmul. The 1-d
forms run the 2-d op on a height-1 view, as PyTorch does (their grad_fn is a SqueezeBackward1).
"""

import itertools
import math

import numpy as np

from .. import _threads
from . import _fused_kernels
from ._common import STATE, Node, not_implemented, track, wrap, xp
from ._conv_scratch import scratch

_FUNCTIONAL_NAMES = (
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "max_pool3d",
    "avg_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
)
# the ones PyTorch also has as torch.<name> (avg_pool2d and the 2-d adaptive pools it has not)
__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d"]  # fmt: skip
METHODS = {}
INPLACE = {}


class _LinearNode(Node):
    """out = fwd(x) for a linear fwd; the gradient is adj(g), recorded as a node of adj_cls."""

    __slots__ = ("fwd", "adj", "adj_cls")

    def backward(self, g):
        return (_linear(g, self.adj, self.fwd, self.adj_cls, type(self)),)


def _linear(x, fwd, adj, node_cls, adj_cls, data=None):
    out = wrap(fwd(x._data) if data is None else data)
    if STATE.enabled and x._requires_grad:
        node = node_cls((x,))
        node.fwd, node.adj, node.adj_cls = fwd, adj, adj_cls
        track(out, node)
    return out


def _pair(name):
    fwd = type(name + "Backward0", (_LinearNode,), {"__slots__": ()})
    back = type(name + "BackwardBackward0", (_LinearNode,), {"__slots__": ()})
    return fwd, back


MaxPool2DWithIndicesBackward0, MaxPool2DWithIndicesBackwardBackward0 = _pair("MaxPool2DWithIndices")
AvgPool2DBackward0, AvgPool2DBackwardBackward0 = _pair("AvgPool2D")
_MAX_POOL_3D = _pair("MaxPool3DWithIndices")
_AVG_POOL_3D = _pair("AvgPool3D")
AdaptiveAvgPool2DBackward0, AdaptiveAvgPool2DBackwardBackward0 = _pair("AdaptiveAvgPool2D")
AdaptiveMaxPool2DBackward0, AdaptiveMaxPool2DBackwardBackward0 = _pair("AdaptiveMaxPool2D")
UpsampleNearest1DBackward0, UpsampleNearest1DBackwardBackward0 = _pair("UpsampleNearest1D")
UpsampleNearest2DBackward0, UpsampleNearest2DBackwardBackward0 = _pair("UpsampleNearest2D")
UpsampleLinear1DBackward0, UpsampleLinear1DBackwardBackward0 = _pair("UpsampleLinear1D")
UpsampleBilinear2DBackward0, UpsampleBilinear2DBackwardBackward0 = _pair("UpsampleBilinear2D")
Im2ColBackward0, Col2ImBackward0 = _pair("Im2Col")[0], _pair("Col2Im")[0]


# -- shared geometry ----------------------------------------------------------------------------
def _two(v, name="kernel_size"):
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(e) for e in v)
    return v * 2 if len(v) == 1 else v


def _out_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length along one dim."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    q = num // s + 1
    if ceil_mode and (q - 1) * s >= size + p:
        q -= 1
    return q


def _taps(k):
    """Every tap of a kernel of sizes k, as index tuples (row-major)."""
    return itertools.product(*(range(kk) for kk in k))


def _tap_slices(tap, geo):
    """Where one kernel tap reads, over every window: one strided slice per spatial dim."""
    _, s, d, q = geo[:4]
    return (Ellipsis,) + tuple(
        slice(t * dd, t * dd + ss * (qq - 1) + 1, ss) for t, ss, dd, qq in zip(tap, s, d, q)
    )


def _padded(x, geo, fill):
    """x padded by p on both sides of each spatial dim, widened on the right to cover every
    window."""
    k, s, d, q, p = geo[:5]
    nd = len(k)
    sizes = x.shape[-nd:]
    full = tuple(
        max(n + 2 * pp, (qq - 1) * ss + dd * (kk - 1) + 1)
        for n, kk, ss, dd, qq, pp in zip(sizes, k, s, d, q, p)
    )
    if full == sizes:
        return x
    out = xp(x).full(x.shape[:-nd] + full, fill, x.dtype)
    out[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, sizes))] = x
    return out


def _scatter_add(pad_shape, geo, parts, dtype, m):
    """The adjoint of reading the taps: add each tap's part into a zero buffer of pad_shape."""
    buf = m.zeros(pad_shape, dtype)
    for tap in _taps(geo[0]):
        buf[_tap_slices(tap, geo)] += parts(tap)
    return buf


def _crop(buf, geo, sizes):
    p = geo[4]
    if buf.shape[-len(sizes) :] == tuple(sizes):
        return buf
    return buf[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, sizes))].copy()


def _check_pool(x, k, s, p, d, ceil_mode, name):
    nd = len(k)
    shape = x._data.shape
    if x._data.ndim not in (nd + 1, nd + 2) or 0 in shape[-nd - 1 :]:
        if name == "avg_pool2d" and x._data.ndim < 3:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{max(x._data.ndim, 1)}, "
                f"{max(x._data.ndim, 1) - 1}], but got -3)"
            )
        if nd == 3 and x._data.ndim in (4, 5) and 0 in shape[-3:]:
            where = {"avg_pool3d": "avg_pool3d()", "max_pool3d":
                     "max_pool3d_with_indices_out_cpu_template()"}[name]  # fmt: skip
            zero = shape[-3:].index(0)  # PyTorch counts from the first spatial dim
            raise RuntimeError(
                f"{where}: Expected input's non-batch dimensions to have positive length, "
                f"but input has a shape of {list(shape)} and non-batch dimension {zero} has "
                "length zero!"
            )
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
        )
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    for kk, pp, dd in zip(k, p, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )
    # max_pool3d then checks every padding against half the undilated kernel (naming kT, kW,
    # kH in that order), as PyTorch's kernel does
    if name == "max_pool3d" and any(kk // 2 < pp for kk, pp in zip(k, p)):
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}"
        )
    sizes = shape[-nd:]
    c = shape[-nd - 1]
    q = tuple(_out_size(n, *a, ceil_mode) for n, a in zip(sizes, zip(k, s, p, d)))
    if min(q) < 1:
        if name == "avg_pool3d":
            raise RuntimeError(
                f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel "
                f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})"
            )
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c, *sizes)))}). Calculated output size: "
            f"({'x'.join(map(str, (c, *q)))}). Output size is too small"
        )
    return q


# -- max pools: the max's indices, then a gather whose adjoint is a scatter-add ------------------
def _gather(idx, nd=2):
    """Reads the input at flat indices within each plane (the last nd dims)."""

    def fwd(x):
        lead = x.shape[:-nd]
        flat = x.reshape(-1, math.prod(x.shape[-nd:]))
        picked = xp(x).take_along_axis(flat, idx.reshape(flat.shape[0], -1), axis=1)
        return picked.reshape(lead + idx.shape[-nd:])

    return fwd


def _scatter(idx, in_shape, unique, nd=2):
    """The adjoint of _gather: adds (or, for indices that never repeat, puts) g into a zero
    array of in_shape at idx."""

    def adj(g):
        m = xp(g)
        per = math.prod(idx.shape[-nd:])
        planes = g.size // per if g.size else 0
        hw = math.prod(in_shape[-nd:])
        if unique and planes and _fused_kernels.takes(g):
            out = np.empty((planes, hw), g.dtype)
            flat_idx = np.ascontiguousarray(idx, dtype=np.int64)
            try:  # numpy's zeros and put in one pass (an index out of its plane: numpy's error)
                _fused_kernels.kernels.put_planes(flat_idx, g, out, planes, g.size // planes, hw)
                return out.reshape(in_shape)
            except IndexError:
                pass
        if unique and _threads.is_host(g) and _threads.worth(planes * hw):
            return _put_by_planes(idx.reshape(planes, -1), g.reshape(planes, -1), hw, in_shape)
        flat = scratch(m, "pool_flat", (planes, idx.size // planes if planes else 0), idx.dtype)
        m.add(idx.reshape(planes, -1), m.arange(planes)[:, None] * hw, out=flat)
        flat = flat.ravel()
        if unique:  # windows that never overlap pick each input at most once
            out = m.zeros(planes * hw, g.dtype)
            out[flat] = g.ravel()
        else:
            out = m.bincount(flat, weights=g.ravel(), minlength=planes * hw).astype(g.dtype)
        return out.reshape(in_shape)

    return adj


def _put_by_planes(idx, g, hw, in_shape):
    """_scatter's adjoint for indices that never repeat, split by planes over the engine's
    threads: each share zeroes its planes of the result and puts its gradients in."""
    planes = idx.shape[0]
    out = np.empty((planes, hw), g.dtype)

    def share(s, e):
        o = out[s:e]
        o.fill(0)
        at = idx[s:e] + np.arange(0, (e - s) * hw, hw)[:, None]
        o.reshape(-1)[at.reshape(-1)] = g[s:e].reshape(-1)

    _threads.over_rows(share, planes, planes * hw)
    return out.reshape(in_shape)


def _tiled_max(x, k, q):
    """Max pool of windows that tile x (stride == kernel, no padding or dilation, every window
    inside x): (best, idx), or None when the input has a NaN (the tap loop handles those).
    Large host inputs are split by planes over the engine's threads."""
    h, w = x.shape[-2:]
    planes = x.reshape((-1, h, w))
    lead = x.shape[:-2] + tuple(q)
    n = planes.shape[0]
    if not (_threads.is_host(x) and _threads.worth(planes.size)):
        got = _tiled_planes(planes, k, q)
        return None if got is None else (got[0].reshape(lead), got[1].reshape(lead))
    best = np.empty((n, *q), x.dtype)
    idx = np.empty((n, *q), np.int64)

    def share(s, e):
        got = _tiled_planes(planes[s:e], k, q)
        if got is None:
            return False
        best[s:e], idx[s:e] = got
        return True

    if not all(_threads.over_rows(share, n, planes.size)):
        return None
    return best.reshape(lead), idx.reshape(lead)


def _tiled_planes(planes, k, q):
    """_tiled_max of (P, H, W) planes: (best, idx), each (P, *q), or None for a NaN.

    The windows' taps are gathered tap-major in one copy, so each step below is one pass over
    contiguous memory: the max, the taps equal to it, and the first of them (PyTorch's choice
    among ties), found as the largest of (tap is a max) * (big - tap's offset)."""
    m = xp(planes)
    (kh, kw), (qh, qw) = k, q
    w = planes.shape[-1]
    sp, sh, sw = planes.strides
    shape = (kh, kw, planes.shape[0], qh, qw)
    view = m.lib.stride_tricks.as_strided(planes, shape, (sh, sw, sp, sh * kh, sw * kw))
    taps = scratch(m, "pool_taps", shape, planes.dtype)
    taps[...] = view
    taps = taps.reshape(kh * kw, -1)
    best = taps.max(0)
    if planes.dtype.kind == "f" and bool(m.isnan(best.sum())):  # max() carries any NaN
        return None
    offs = np.array([i * w + j for i in range(kh) for j in range(kw)], np.int64)
    big = int(offs[-1]) + 1
    small = np.min_scalar_type(-big) if big <= 32767 else np.int64
    hit = scratch(m, "pool_hit", taps.shape, bool)
    m.equal(taps, best, out=hit)
    score = scratch(m, "pool_score", taps.shape, small)
    m.multiply(hit, m.asarray((big - offs)[:, None], dtype=small), out=score)
    score = score.max(0)
    base = (m.arange(qh) * (kh * w))[:, None] + m.arange(qw) * kw + big
    lead = (planes.shape[0], qh, qw)
    idx = base - score.reshape(lead).astype(np.int64)
    return best.reshape(lead), idx


def _sizes(v, nd, name, what="kernel_size", single="either be a single int"):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        words = {2: "two", 3: "three"}[nd]
        raise RuntimeError(f"{name}: {what} must {single}, or a tuple of {words} ints")
    return v


def _max_pool_nd(input, nd, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    name = f"max_pool{nd}d"
    if nd == 2:
        k, p, d = _two(kernel_size), _two(padding), _two(dilation)
        s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else (
            _two(stride))  # fmt: skip
    else:
        k = _sizes(kernel_size, nd, name)
        empty = stride is None or (not isinstance(stride, int) and len(stride) == 0)
        s = k if empty else _sizes(stride, nd, name, "stride", "either be omitted, a single int")
        p = _sizes(padding, nd, name, "padding", "either be a single int")
        d = _sizes(dilation, nd, name, "dilation", "be either a single int")
    q = _check_pool(input, k, s, p, d, ceil_mode, name)
    x = input._data
    m = xp(x)
    geo = (k, s, d, q, p)
    sizes = x.shape[-nd:]
    nodes = (MaxPool2DWithIndicesBackward0, MaxPool2DWithIndicesBackwardBackward0) if nd == 2 \
        else _MAX_POOL_3D  # fmt: skip
    tiled = None
    if (nd == 2 and s == k and p == (0, 0) and d == (1, 1) and q[0] * k[0] <= sizes[0]
            and q[1] * k[1] <= sizes[1]):  # fmt: skip
        tiled = _tiled_max(x, k, q) if x.size else None
    if tiled is not None:
        best, idx = tiled
        out = _linear(input, _gather(idx), _scatter(idx, x.shape, True), *nodes, data=best)
        return (out, wrap(idx)) if return_indices else out
    xpad = _padded(x, geo, -m.inf if x.dtype.kind == "f" else m.iinfo(x.dtype).min)
    # a NaN wins its window, as in PyTorch; comparing for it costs two passes a tap, so only
    # when the input has one (a NaN or an overflow makes the sum NaN: a false alarm is harmless)
    nan = x.dtype.kind == "f" and bool(m.isnan(x.sum()))
    plane = [math.prod(sizes[i + 1 :]) for i in range(nd)]  # each dim's step in a flat plane
    best = off = None
    for tap in _taps(k):
        v = xpad[_tap_slices(tap, geo)]
        tap_off = sum(t * dd * st for t, dd, st in zip(tap, d, plane))
        if best is None:
            best, off = v.copy(), m.full(v.shape, tap_off, np.int64)
            continue
        better = v > best
        if nan:
            better |= v != v
        m.copyto(best, v, where=better)
        m.copyto(off, tap_off, where=better)
    idx = off
    for i in range(nd):  # each window's first cell, flat, broadcast along dim i
        start = (m.arange(q[i]) * s[i] - p[i]) * plane[i]
        idx += start.reshape((-1,) + (1,) * (nd - 1 - i))
    unique = all(st >= dd * (kk - 1) + 1 for st, dd, kk in zip(s, d, k))
    out = _linear(input, _gather(idx, nd), _scatter(idx, x.shape, unique, nd), *nodes, data=best)
    return (out, wrap(idx)) if return_indices else out


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _max_pool_nd(input, 2, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)  # fmt: skip


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _max_pool_nd(input, 3, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)  # fmt: skip


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(input._data.shape)}"
        )
    k, s, p, d = (_one(v) for v in (kernel_size, kernel_size if stride is None else stride,
                                     padding, dilation))  # fmt: skip
    if stride is not None and not isinstance(stride, int) and len(stride) == 0:
        s = k
    if p > k // 2:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={p} and kernel_size={k}"
        )
    q = _out_size(input._data.shape[-1], k, s, p, d, ceil_mode)
    if q < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {q}")
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, True)
    out = res[0].squeeze(-2)
    return (out, res[1].squeeze(-2)) if return_indices else out


def _one(v):
    return int(v) if isinstance(v, (int, np.integer)) else int(tuple(v)[0])


# -- average pools --------------------------------------------------------------------------------
def _divisors(size, q, k, s, p, include_pad):
    """Per output position along one dim: how many cells its window averages."""
    start = np.arange(q) * s - p
    end = np.minimum(start + k, size + p)
    if not include_pad:
        return np.minimum(end, size) - np.maximum(start, 0)
    return end - start


def _avg_pool_nd(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):  # fmt: skip
    name = f"avg_pool{nd}d"
    if nd == 2:
        k, p = _two(kernel_size), _two(padding)
        s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else (
            _two(stride))  # fmt: skip
    else:
        k = _sizes(kernel_size, nd, name, single="be a single int")
        empty = stride is None or (not isinstance(stride, int) and len(stride) == 0)
        s = k if empty else _sizes(stride, nd, name, "stride", "be omitted, a single int")
        p = _sizes(padding, nd, name, "padding", "be a single int")
    q = _check_pool(input, k, s, p, (1,) * nd, ceil_mode, name)
    x = input._data
    m = xp(x)
    geo = (k, s, (1,) * nd, q, p)
    sizes = x.shape[-nd:]
    if divisor_override:
        inv = m.asarray(1.0 / divisor_override, dtype=x.dtype)
    else:
        count = np.ones((1,) * nd)
        for i in range(nd):  # the cells each window averages: a product over the dims
            di = _divisors(sizes[i], q[i], k[i], s[i], p[i], count_include_pad)
            count = count * di.reshape((1,) * i + (-1,) + (1,) * (nd - 1 - i))
        inv = m.asarray(1.0 / count, dtype=x.dtype)

    def fwd(a):
        apad = _padded(a, geo, 0)
        acc = None
        for tap in _taps(k):
            v = apad[_tap_slices(tap, geo)]
            acc = v.copy() if acc is None else acc.__iadd__(v)
        return acc * inv

    def adj(g):
        g = g * inv
        pad_shape = _padded(m.empty(g.shape[:-nd] + sizes, g.dtype), geo, 0).shape
        return _crop(_scatter_add(pad_shape, geo, lambda tap: g, g.dtype, m), geo, sizes)

    nodes = (AvgPool2DBackward0, AvgPool2DBackwardBackward0) if nd == 2 else _AVG_POOL_3D
    return _linear(input, fwd, adj, *nodes)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):  # fmt: skip
    return _avg_pool_nd(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)  # fmt: skip


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):  # fmt: skip
    return _avg_pool_nd(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)  # fmt: skip


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if input._data.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input._data.ndim}-dimensional tensor for "
            "argument #1 'self' (while checking arguments for avg_pool1d)"
        )
    k = _one(kernel_size)
    s = k if stride is None else _one(stride)
    p = _one(padding)
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return out.squeeze(-2)


# -- max unpools: the max pool's indices, read backwards ------------------------------------------
_MAX_UNPOOL_2D = _pair("MaxUnpool2D")
_MAX_UNPOOL_3D = _pair("MaxUnpool3D")


def _unpool_output_size(input, k, s, p, output_size):
    """PyTorch's: the size the pool came from, or output_size (its last len(k) entries) when
    given, which must lie strictly within a stride of it."""
    nd = len(k)
    shape = input._data.shape
    default = [(shape[-nd + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has "
            f"a length of '{len(output_size)}'"
        )
    for i in range(nd):
        low, high = default[i] - s[i], default[i] + s[i]
        if not low < output_size[i] < high:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {i} must be between {low} and {high})'
            )
    return list(output_size)


def _max_unpool(input, indices, out_sizes, nd):
    """Puts each input value at its index within a zero plane of out_sizes (the adjoint of the
    max pool's gather); the gradient reads it back at the same indices."""
    x, idx = input._data, indices._data
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"elements in indices should be type int64 but got: {indices.dtype.legacy_name[:-6]}"
        )
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {x.ndim} dimensions."
        )
    if idx.shape != x.shape:
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(x.shape)}) "
            f"but got indices tensor with shape: {list(idx.shape)}"
        )
    out_sizes = tuple(int(n) for n in out_sizes)
    bad = (idx < 0) | (idx >= math.prod(out_sizes))
    if bool(bad.any()):
        # PyTorch's kernel reports the last bad index it meets
        flat_bad = bad.ravel()
        last = flat_bad.size - 1 - int(xp(idx).argmax(flat_bad[::-1]))
        first = int(idx.ravel()[last])
        raise RuntimeError(
            f"Found an invalid max index: {first} (output volumes are of size "
            f"{'x'.join(map(str, out_sizes))})"
        )
    out_shape = x.shape[:-nd] + out_sizes
    nodes = _MAX_UNPOOL_2D if nd == 2 else _MAX_UNPOOL_3D
    return _linear(input, _scatter(idx, out_shape, True, nd), _gather(idx, nd), *nodes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = (_one(kernel_size),)
    s = k if stride is None else (_one(stride),)
    out = _unpool_output_size(input, k, s, (_one(padding),), output_size)
    # as PyTorch: the 2-d op on a width-1 view (grad_fn SqueezeBackward1)
    res = _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), out + [1], 2)
    return res.squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _two(kernel_size)
    s = k if stride is None else _two(stride)
    out = _unpool_output_size(input, k, s, _two(padding), output_size)
    return _max_unpool(input, indices, out, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _sizes(kernel_size, 3, "max_unpool3d")
    s = k if stride is None else _sizes(stride, 3, "max_unpool3d", "stride")
    out = _unpool_output_size(input, k, s, _sizes(padding, 3, "max_unpool3d", "padding"),
                              output_size)  # fmt: skip
    return _max_unpool(input, indices, out, 3)


# -- adaptive pools -------------------------------------------------------------------------------
def _adaptive_size(output_size, in_hw, name):
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size, output_size)
    output_size = tuple(output_size)
    if len(output_size) != 2:
        raise RuntimeError(f"{name}: output_size must be 2")
    return tuple(n if o is None else int(o) for o, n in zip(output_size, in_hw))


def _windows(size, out):
    start = (np.arange(out) * size) // out
    end = -((-(np.arange(out) + 1) * size) // out)
    return start, end


def _avg_matrix(size, out, dtype, m):
    """(out, size): row o averages input cells [start_o, end_o)."""
    start, end = _windows(size, out)
    cells = np.arange(size)
    inside = (cells >= start[:, None]) & (cells < end[:, None])
    return m.asarray(inside / (end - start)[:, None], dtype=dtype)


def _separable(ah, aw):
    """x -> ah @ x @ aw^T over the last two dims (over the last one only when ah is None), and
    its adjoint."""

    def fwd(a):
        m = xp(a)
        return m.matmul(a if ah is None else m.matmul(ah, a), aw.T)

    def adj(g):
        m = xp(g)
        r = m.matmul(g, aw)
        return r if ah is None else m.matmul(ah.T, r)

    return fwd, adj


def _check_adaptive(input, name, colon=""):
    if input._data.ndim not in (3, 4):
        raise RuntimeError(
            f"{name}(): Expected 3D or 4D tensor, but got{colon} {list(input._data.shape)}"
        )


def adaptive_avg_pool2d(input, output_size):
    _check_adaptive(input, "adaptive_avg_pool2d")
    x = input._data
    m = xp(x)
    oh, ow = _adaptive_size(output_size, x.shape[-2:], "adaptive_avg_pool2d")
    if (oh, ow) == (1, 1):  # a global average: PyTorch computes it as a mean (MeanBackward1)
        return input.mean((-2, -1), keepdim=True)
    fwd, adj = _separable(
        _avg_matrix(x.shape[-2], oh, x.dtype, m), _avg_matrix(x.shape[-1], ow, x.dtype, m)
    )
    return _linear(input, fwd, adj, AdaptiveAvgPool2DBackward0, AdaptiveAvgPool2DBackwardBackward0)


def _check_1d(input, name):
    if input._data.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input._data.ndim}-dimensional tensor for "
            f"argument #1 'self' (while checking arguments for {name})"
        )


def adaptive_avg_pool1d(input, output_size):
    _check_1d(input, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    _check_adaptive(input, "adaptive_max_pool2d", ":")
    x = input._data
    m = xp(x)
    h, w = x.shape[-2:]
    oh, ow = _adaptive_size(output_size, (h, w), "adaptive_max_pool2d")
    (sh, eh), (sw, ew) = _windows(h, oh), _windows(w, ow)
    kh, kw = int((eh - sh).max(initial=1)), int((ew - sw).max(initial=1))
    # each window's cells, the last one repeated to pad short windows (harmless for a max)
    ih = m.asarray(np.minimum(sh[:, None] + np.arange(kh), eh[:, None] - 1))
    iw = m.asarray(np.minimum(sw[:, None] + np.arange(kw), ew[:, None] - 1))
    win = x[..., ih[:, :, None, None], iw[None, None, :, :]]  # (..., oh, kh, ow, kw)
    nd = win.ndim
    win = m.moveaxis(win, nd - 3, nd - 2).reshape(x.shape[:-2] + (oh, ow, kh * kw))
    arg = win.argmax(-1)
    best = m.take_along_axis(win, arg[..., None], -1)[..., 0]
    rows = ih[m.arange(oh)[:, None], arg // kw]
    cols = iw[m.arange(ow)[None, :], arg % kw]
    idx = rows * w + cols
    out = _linear(
        input,
        _gather(idx),
        _scatter(idx, x.shape, False),
        AdaptiveMaxPool2DBackward0,
        AdaptiveMaxPool2DBackwardBackward0,
        data=best,
    )
    return (out, wrap(idx)) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_1d(input, "adaptive_max_pool1d")
    res = adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size)), True)
    out = res[0].squeeze(-2)
    return (out, res[1].squeeze(-2)) if return_indices else out


# -- interpolate ----------------------------------------------------------------------------------
_UPSAMPLE_NODES = {
    ("nearest", 1): (UpsampleNearest1DBackward0, UpsampleNearest1DBackwardBackward0),
    ("nearest", 2): (UpsampleNearest2DBackward0, UpsampleNearest2DBackwardBackward0),
    ("nearest-exact", 1): _pair("UpsampleNearestExact1D"),
    ("nearest-exact", 2): _pair("UpsampleNearestExact2D"),
    ("linear", 1): (UpsampleLinear1DBackward0, UpsampleLinear1DBackwardBackward0),
    ("bilinear", 2): (UpsampleBilinear2DBackward0, UpsampleBilinear2DBackwardBackward0),
    ("nearest", 3): _pair("UpsampleNearest3D"),
    ("nearest-exact", 3): _pair("UpsampleNearestExact3D"),
    ("trilinear", 3): _pair("UpsampleTrilinear3D"),
    ("bicubic", 2): _pair("UpsampleBicubic2D"),
}
_AREA_3D = _pair("AdaptiveAvgPool3D")
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _nearest_index(n_in, n_out, scale, exact, f):
    """PyTorch's source cell of each output cell (computed in float32, as its kernel does)."""
    dst = np.arange(n_out)
    r = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    if exact:
        idx = np.floor((dst + np.float32(0.5)).astype(np.float32) * r)
        return np.minimum(idx, n_in - 1).astype(np.int64)
    if n_out == n_in:
        return dst
    if n_out == 2 * n_in:
        return dst >> 1
    return np.minimum(np.floor(dst.astype(np.float32) * r), n_in - 1).astype(np.int64)


def _lerp_matrix(n_in, n_out, align_corners, scale, f):
    """(n_out, n_in): each row's two neighbours and their weights, as PyTorch picks them."""
    if align_corners:
        r = f((n_in - 1) / (n_out - 1)) if n_out > 1 else f(0)
    else:
        r = f(1.0 / scale) if scale else f(n_in) / f(n_out)
    dst = np.arange(n_out).astype(f)
    src = r * dst if align_corners else np.maximum(r * (dst + f(0.5)) - f(0.5), f(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = i0 + (i0 < n_in - 1)
    l1 = np.minimum(src - i0, f(1))
    a = np.zeros((n_out, n_in), f)
    rows = np.arange(n_out)
    np.add.at(a, (rows, i0), f(1) - l1)
    np.add.at(a, (rows, i1), l1)
    return a


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    nd = input._data.ndim - 2
    in_size = tuple(input._data.shape[2:])
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out_size = (int(size),) * nd if isinstance(size, (int, np.integer)) else tuple(size)
        if len(out_size) != nd:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(in_size)} and output size of {size}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                "in (o1, o2, ...,oK) format."
            )
        scales = (None,) * nd
    elif scale_factor is not None:
        sf = (scale_factor,) * nd if is_scalar(scale_factor) else tuple(scale_factor)
        if len(sf) != nd:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(in_size)} and scale_factor of "
                f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and scale_factor in (s1, s2, ...,sK) format."
            )
        out_size = tuple(math.floor(float(n) * float(s)) for n, s in zip(in_size, sf))
        scales = (None,) * nd if recompute_scale_factor else tuple(float(s) for s in sf)
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area" and nd < 3:
        pool = adaptive_avg_pool1d if nd == 1 else adaptive_avg_pool2d
        return pool(input, out_size if nd > 1 else out_size[0])
    need = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if need is not None and nd != need:
        raise NotImplementedError(f"Got {nd + 2}D input, but {mode} mode needs {need + 2}D input")
    if mode == "area" and nd == 3:
        mats = [_avg_matrix(n, o, input._data.dtype, xp(input._data)) for n, o in
                zip(in_size, out_size)]  # fmt: skip
        return _linear(input, *_separable_nd(mats), *_AREA_3D)
    if (mode, nd) not in _UPSAMPLE_NODES:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd + 2}D) for the "
            f"modes: {_MODES} (got {mode})"
        )
    x = input._data
    m = xp(x)
    f = np.float64 if x.dtype == np.float64 else np.float32
    if x.dtype.kind in "biu":  # PyTorch's integer kernels use float weights and round
        f = np.float64
    if mode.startswith("nearest"):
        picks = [
            _nearest_index(n, o, s, mode == "nearest-exact", f)
            for n, o, s in zip(in_size, out_size, scales)
        ]
        mats = [np.eye(n, dtype=f)[i] for n, i in zip(in_size, picks)]
    elif mode == "bicubic":
        mats = [  # weights in float64: float32 ones drift by 1e-6 from PyTorch's
            _cubic_matrix(n, o, bool(align_corners), s, np.float64)
            for n, o, s in zip(in_size, out_size, scales)
        ]
    else:
        mats = [
            _lerp_matrix(n, o, bool(align_corners), s, f)
            for n, o, s in zip(in_size, out_size, scales)
        ]
    if mode.startswith("nearest"):  # a gather reads what the one-hot matmul would
        mats = [m.asarray(a, dtype=x.dtype) for a in mats]
        fwd, adj = _separable_nd(mats)
        idx = [m.asarray(i) for i in picks]
        if nd == 3:
            fwd = lambda a: a[..., idx[0][:, None, None], idx[1][:, None], idx[2]]  # noqa: E731
        elif nd == 2:
            fwd = lambda a: a[..., idx[0][:, None], idx[1]]  # noqa: E731
        else:
            fwd = lambda a: a[..., idx[0]]  # noqa: E731
    elif x.dtype.kind in "biu":
        return wrap(_resize_uint8(input, mode, in_size, out_size, scales, bool(align_corners)))
    else:
        fwd, adj = _separable_nd([m.asarray(a, dtype=x.dtype) for a in mats])
    return _linear(input, fwd, adj, *_UPSAMPLE_NODES[mode, nd])


def _resize_uint8(input, mode, in_size, out_size, scales, align_corners):
    """PyTorch's integer resize (uint8 bilinear and bicubic only): one dim at a time, the last
    first, skipping dims that keep their size; per output cell the taps inside the image with
    their weights renormalised, turned into fixed point (int16, as many fraction bits as the
    largest weight allows) and the sum rounded half up and saturated to 0..255."""
    x = input._data
    m = xp(x)
    if x.dtype != np.uint8 or mode not in ("bilinear", "bicubic"):
        kernel = {
            "bilinear": "upsample_bilinear2d_channels_last",
            "bicubic": "compute_indices_weights_cubic",
        }.get(mode, "compute_indices_weights_linear")
        raise not_implemented(kernel, input._data.dtype)
    nd = len(in_size)
    a = x
    for ax in reversed(range(nd)):
        if out_size[ax] == in_size[ax]:
            continue
        if mode == "bicubic":
            mat = _cubic_matrix(in_size[ax], out_size[ax], align_corners, scales[ax], np.float64)
        else:
            mat = _fixed_point_taps(in_size[ax], out_size[ax], align_corners, scales[ax], mode)
        wmax = float(mat.max())
        bits = 0
        while bits < 22 and int(0.5 + wmax * (1 << (bits + 1))) < (1 << 15):
            bits += 1
        w = np.trunc(mat * (1 << bits) + np.where(mat < 0, -0.5, 0.5)).astype(np.int64)
        acc = _apply_along(m.asarray(w), a.astype(np.int64), nd, ax) + (1 << (bits - 1))
        a = m.clip(acc >> bits, 0, 255).astype(np.uint8)
    return a


def _fixed_point_taps(n_in, n_out, align_corners, scale, mode):
    """(n_out, n_in) float64 weights of PyTorch's integer kernels: taps within the support
    around each output's centre (clipped to the image) and normalised to sum to 1."""
    if align_corners:
        r = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        r = 1.0 / scale if scale else n_in / n_out
    support = 2.0 if mode == "bicubic" else 1.0
    delta = 0.5 if align_corners else 0.0
    mat = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = r * (i + 0.5 - delta)
        lo = max(int(centre - support + 0.5 + delta), 0)
        hi = min(int(centre + support + 0.5 + delta), n_in)
        d = np.abs(np.arange(lo, hi) - centre + 0.5 - delta)
        if mode == "bicubic":
            a_ = -0.75
            w = np.where(
                d < 1,
                ((a_ + 2) * d - (a_ + 3)) * d * d + 1,
                np.where(d < 2, ((a_ * d - 5 * a_) * d + 8 * a_) * d - 4 * a_, 0.0),
            )
        else:
            w = np.maximum(1 - d, 0.0)
        total = w.sum()
        mat[i, lo:hi] = w / total if total != 0 else w
    return mat


def _apply_along(mat, a, nd, ax):
    """mat (out, in) applied along spatial axis ax (of the last nd dims)."""
    m = xp(a)
    if ax == nd - 1:
        return m.matmul(a, mat.T)
    axis = a.ndim - nd + ax
    return m.moveaxis(m.matmul(mat, m.moveaxis(a, axis, -2)), -2, axis)


def _separable_nd(mats):
    """x -> each mats[k] applied along spatial dim k, and the adjoint (the transposes); the 1-
    and 2-d cases keep the two-matmul form of _separable."""
    if len(mats) <= 2:
        return _separable(mats[0] if len(mats) == 2 else None, mats[-1])
    nd = len(mats)

    def fwd(a):
        for ax, mat in enumerate(mats):
            a = _apply_along(mat, a, nd, ax)
        return a

    def adj(g):
        for ax, mat in enumerate(mats):
            g = _apply_along(mat.T, g, nd, ax)
        return g

    return fwd, adj


def _cubic_matrix(n_in, n_out, align_corners, scale, f):
    """(n_out, n_in): PyTorch's bicubic taps (Keys' kernel, A = -0.75), four per output cell at
    floor(src) - 1 .. floor(src) + 2, clamped to the border; src is not clamped at 0 (unlike
    linear's)."""
    a_ = f(-0.75)
    if align_corners:
        r = f((n_in - 1) / (n_out - 1)) if n_out > 1 else f(0)
    else:
        r = f(1.0 / scale) if scale else f(n_in) / f(n_out)
    dst = np.arange(n_out).astype(f)
    src = r * dst if align_corners else r * (dst + f(0.5)) - f(0.5)
    x0 = np.floor(src)
    t = (src - x0).astype(f)

    def near(x):  # |x| <= 1
        return ((a_ + 2) * x - (a_ + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a_ * x - 5 * a_) * x + 8 * a_) * x - 4 * a_

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    mat = np.zeros((n_out, n_in), f)
    rows = np.arange(n_out)
    for k, w in enumerate(weights):
        cols = np.clip(x0.astype(np.int64) - 1 + k, 0, n_in - 1)
        np.add.at(mat, (rows, cols), w)
    return mat


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def is_scalar(v):
    return isinstance(v, (int, float, np.integer, np.floating))


# -- unfold / fold (im2col / col2im) --------------------------------------------------------------
def _unfold_geo(hw, kernel_size, dilation, padding, stride):
    k, d, p, s = _two(kernel_size), _two(dilation), _two(padding), _two(stride)
    q = tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, pp, ss in
              zip(hw, k, d, p, s))  # fmt: skip
    if q[0] < 1 or q[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size {tuple(hw)}, kernel_size={k}, dilation={d}, "
            f"padding={p}, calculated shape of the array of sliding blocks as {q}, but its "
            "components must be at least one."
        )
    return (k, s, d, q, p)


def _im2col_pair(hw, c, geo):
    (kh, kw), q = geo[0], geo[3]
    h, w = hw

    def im2col(a):
        apad = _padded(a, geo, 0)
        parts = [apad[_tap_slices(tap, geo)] for tap in _taps((kh, kw))]
        cols = xp(a).stack(parts, axis=-3)  # (..., C, K, qh, qw)
        return cols.reshape(a.shape[:-3] + (c * kh * kw, q[0] * q[1]))

    def col2im(g):
        lead = g.shape[:-2]
        parts = g.reshape(lead + (c, kh, kw, q[0], q[1]))
        pad_shape = _padded(xp(g).empty(lead + (c, h, w), g.dtype), geo, 0).shape
        buf = _scatter_add(pad_shape, geo, lambda t: parts[..., t[0], t[1], :, :], g.dtype, xp(g))
        return _crop(buf, geo, (h, w))

    return im2col, col2im


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if input._data.ndim not in (3, 4):
        raise RuntimeError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input._data.ndim}D)"
        )
    c, h, w = input._data.shape[-3:]
    geo = _unfold_geo((h, w), kernel_size, dilation, padding, stride)
    im2col, col2im = _im2col_pair((h, w), c, geo)
    return _linear(input, im2col, col2im, Im2ColBackward0, Col2ImBackward0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if input._data.ndim not in (2, 3):
        raise RuntimeError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {input._data.ndim}D)"
        )
    hw = _two(output_size)
    k = _two(kernel_size)
    ck, n_blocks = input._data.shape[-2:]
    if ck % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ck} and kernel_size={k}."
        )
    geo = _unfold_geo(hw, k, dilation, padding, stride)
    q = geo[3]
    if q[0] * q[1] != n_blocks:
        raise RuntimeError(
            f"Given output_size={hw}, kernel_size={k}, dilation={geo[2]}, padding={geo[4]}, "
            f"stride={geo[1]}, expected size of input's dimension 2 to match the calculated "
            f"number of sliding blocks {q[0]} * {q[1]} = {q[0] * q[1]}, but got "
            f"input.size(2)={n_blocks}."
        )
    im2col, col2im = _im2col_pair(hw, ck // (k[0] * k[1]), geo)
    return _linear(input, col2im, im2col, Col2ImBackward0, Im2ColBackward0)


FUNCTIONAL = {name: globals()[name] for name in _FUNCTIONAL_NAMES}
FUNCTIONAL.update(interpolate=interpolate, upsample=upsample, unfold=unfold, fold=fold)
