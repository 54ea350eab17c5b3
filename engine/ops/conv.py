"""Convolutions (conv1d, conv2d, conv3d) and their transposes, by im2col and one matmul.

A convolution is one trilinear form T(x, w, y) = <y, conv(x, w)>; its three partial derivatives
are the three raw kernels here: ``conv`` (dT/dy: the forward), ``input`` (dT/dx: the input's
gradient, which is also conv_transpose) and ``weight`` (dT/dw: the weight's gradient). Each one's
gradients are the other two, so one node class differentiates all of them to any order.

When every stride is 1 the three kernels are _conv_wide's (im2col and col2im over runs of whole
padded rows, small matmuls a sample, scratch buffers, helper threads: see that module). Otherwise
im2col reads the zero-padded input through a strided view (no copy) and gathers it once into a
(groups, C/groups * taps, N * positions) matrix, so the forward and the weight's gradient are one
batched matmul each (one per group); the input's gradient is one matmul and a col2im that adds
each kernel tap's slice back (a loop over the taps only, each add vectorised).
"""

import itertools

import numpy as np

from . import _conv_wide as wide
from ._common import STATE, Node, requires_grad, track, wrap, xp

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
METHODS = {}
INPLACE = {}


class _Geo(tuple):
    """A convolution's geometry: spatial sizes of the input side (S) and output side (Q), kernel
    (K), stride, dilation, padding before (lo) and after (hi) each dim, and groups."""

    __slots__ = ()
    S = property(lambda self: self[0])
    Q = property(lambda self: self[1])
    K = property(lambda self: self[2])
    stride = property(lambda self: self[3])
    dilation = property(lambda self: self[4])
    lo = property(lambda self: self[5])
    hi = property(lambda self: self[6])
    groups = property(lambda self: self[7])


def _prod(t):
    n = 1
    for v in t:
        n *= v
    return n


def _padded(x, geo):
    """x zero-padded by (lo, hi) on each spatial dim (x itself when there is no padding)."""
    if not any(geo.lo) and not any(geo.hi):
        return x
    m = xp(x)
    sp = tuple(s + a + b for s, a, b in zip(geo.S, geo.lo, geo.hi))
    out = m.zeros(x.shape[:2] + sp, x.dtype)
    out[(Ellipsis, *(slice(a, a + s) for a, s in zip(geo.lo, geo.S)))] = x
    return out


def _cols(x, geo):
    """im2col: the (G, Cg*taps, N*positions) matrix of the padded input's windows."""
    xpad = _padded(x, geo)
    n, c = xpad.shape[:2]
    g = geo.groups
    cg = c // g
    sn, sc = xpad.strides[:2]
    ss = xpad.strides[2:]
    shape = (g, cg, *geo.K, n, *geo.Q)
    strides = (
        sc * cg,
        sc,
        *(s * d for s, d in zip(ss, geo.dilation)),
        sn,
        *(s * st for s, st in zip(ss, geo.stride)),
    )
    # cupy has as_strided too (cupy.lib.stride_tricks), with numpy's byte strides
    view = xp(xpad).lib.stride_tricks.as_strided(xpad, shape, strides)
    return view.reshape(g, cg * _prod(geo.K), n * _prod(geo.Q))


def _wide_for(geo, *arrays):
    """Whether the wide kernels (_conv_wide) serve a gradient: every stride 1, and the arrays
    whose values meet the zeros spread between output rows finite (inf * 0 would be NaN there,
    where PyTorch has none). A sum that overflows only sends a call to the general path."""
    return wide.usable(geo) and all(bool(xp(a).isfinite(a.sum())) for a in arrays)


def _conv_raw(x, w, geo, cols=None):
    """conv(x, w): x (N, C, *S), w (O, C/G, *K) -> (N, O, *Q)."""
    if wide.usable(geo):
        return wide.conv(x, w, geo)
    n, g, o = x.shape[0], geo.groups, w.shape[0]
    m = xp(x)
    if cols is None:
        cols = _cols(x, geo)
    y = m.matmul(w.reshape(g, o // g, -1), cols)  # (G, O/G, N*Q)
    y = y.reshape(o, n, _prod(geo.Q)).transpose(1, 0, 2)
    return m.ascontiguousarray(y).reshape((n, o) + tuple(geo.Q))


def _input_raw(y, w, geo):
    """The adjoint in x: y (N, O, *Q), w (O, C/G, *K) -> (N, C, *S) (conv_transpose)."""
    if _wide_for(geo, w):
        return wide.input_raw(y, w, geo)
    n, o = y.shape[:2]
    g = geo.groups
    cg = w.shape[1]
    m = xp(y)
    # one matmul per sample, batched: (G, Cg*K, O/G) @ (N, G, O/G, Q) gives the columns in the
    # (N, C, *K, *Q) order that col2im adds from, with no transposed copy of y
    wt = w.reshape(g, o // g, -1).transpose(0, 2, 1)
    cols = m.matmul(wt, y.reshape(n, g, o // g, -1))
    cols = cols.reshape((n, g * cg, *geo.K, *geo.Q))
    sp = tuple(s + a + b for s, a, b in zip(geo.S, geo.lo, geo.hi))
    buf = m.zeros((n, g * cg) + sp, y.dtype)
    for tap in itertools.product(*(range(k) for k in geo.K)):
        dst = tuple(
            slice(t * d, t * d + st * (q - 1) + 1, st)
            for t, d, st, q in zip(tap, geo.dilation, geo.stride, geo.Q)
        )
        buf[(slice(None), slice(None), *dst)] += cols[(slice(None), slice(None), *tap)]
    if not any(geo.lo) and not any(geo.hi):
        return buf
    return buf[(Ellipsis, *(slice(a, a + s) for a, s in zip(geo.lo, geo.S)))].copy()


def _weight_raw(x, y, geo, cols=None):
    """The adjoint in w: x (N, C, *S), y (N, O, *Q) -> (O, C/G, *K)."""
    if _wide_for(geo, x):
        return wide.weight_raw(x, y, geo)
    n, c = x.shape[:2]
    o = y.shape[1]
    g = geo.groups
    m = xp(x)
    if cols is None:
        cols = _cols(x, geo)  # (G, Cg*K, N*Q)
    yg = m.ascontiguousarray(y.reshape(n, g, o // g, -1).transpose(1, 2, 0, 3))
    gw = m.matmul(yg.reshape(g, o // g, -1), cols.transpose(0, 2, 1))  # (G, O/G, Cg*K)
    return gw.reshape((o, c // g) + tuple(geo.K))


_RAW = {"conv": _conv_raw, "input": _input_raw, "weight": _weight_raw}


class ConvolutionBackward0(Node):
    """Node of conv (kind "conv": inputs x, w), of conv_transpose and the input's gradient
    (kind "input": inputs y, w) and of the weight's gradient (kind "weight": inputs x, y); a
    third input, when there is one, is the bias."""

    # cols: the forward's im2col matrix (strided convolutions), kept for the weight's gradient
    # when no graph of the backward is recorded (with create_graph the gradient is an op of its
    # own, and recomputes it); the wide kernels rebuild theirs instead
    __slots__ = ("geo", "kind", "cols")

    def backward(self, g):
        a, b = self.unpack()[:2]
        geo, kind = self.geo, self.kind
        ga = gb = None
        bk = ConvolutionBackwardBackward0
        if kind == "conv" and not STATE.enabled and _wide_for(geo, a._data, b._data):
            return self._wide_backward(a, b, g)
        if kind == "conv":
            if self.needs_grad(0):
                ga = _apply("input", g, b, geo, node_cls=bk)
            if self.needs_grad(1):
                if self.cols is not None and not STATE.enabled:
                    gb = wrap(_weight_raw(a._data, g._data, geo, self.cols))
                else:
                    gb = _apply("weight", a, g, geo, node_cls=bk)
        elif kind == "input":
            if self.needs_grad(0):
                ga = _apply("conv", g, b, geo, node_cls=bk)
            if self.needs_grad(1):
                gb = _apply("weight", g, a, geo, node_cls=bk)
        else:
            if self.needs_grad(0):
                ga = _apply("input", b, g, geo, node_cls=bk)
            if self.needs_grad(1):
                gb = _apply("conv", a, g, geo, node_cls=bk)
        if len(self.next_functions) == 2:
            return (ga, gb)
        gbias = None
        if self.needs_grad(2):
            gbias = g.sum((0, *range(2, g._data.ndim)))
        return (ga, gb, gbias)

    def _wide_backward(self, x, w, g):
        """The conv's gradients as raw kernels (no graph is recorded): the upstream gradient is
        spread onto the wide layout once, for the input's and the weight's gradients alike."""
        geo, gd = self.geo, g._data
        ga = gb = gbias = None
        gz = gw = None
        if self.needs_grad(0):
            margin = wide.margin_of(geo)
            gz = wide.spread(gd, geo, margin)
            ga = wrap(wide.input_(gz, w._data, geo))
            gw = gz[:, :, margin : gz.shape[2] - margin]
        if self.needs_grad(1):
            gb = wrap(wide.weight(x._data, gd, geo, w._data.shape, gw))
        if len(self.next_functions) == 2:
            return (ga, gb)
        if self.needs_grad(2):
            gbias = wrap(gd.sum((0, *range(2, gd.ndim))))
        return (ga, gb, gbias)


class ConvolutionBackwardBackward0(ConvolutionBackward0):
    __slots__ = ()


def _apply(kind, a, b, geo, bias=None, node_cls=ConvolutionBackward0):
    cols = None
    bias_data = None if bias is None else bias._data
    if kind == "conv" and wide.usable(geo):  # adds the bias itself, along the wide rows
        data, bias_data = wide.conv(a._data, b._data, geo, bias_data), None
    elif kind == "conv":
        cols = _cols(a._data, geo)
        data = _conv_raw(a._data, b._data, geo, cols)
    else:
        data = _RAW[kind](a._data, b._data, geo)
    if bias_data is not None:
        data += bias_data.reshape((-1,) + (1,) * (data.ndim - 2))
    out = wrap(data)
    if requires_grad(a, b, bias):
        node = node_cls((a, b) if bias is None else (a, b, bias), (a, b))
        node.geo, node.kind = geo, kind
        node.cols = cols if b._requires_grad else None
        track(out, node)
    return out


# -- argument checks ----------------------------------------------------------------------------
def _expand(v, nd, name):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {name}={list(v)}"
        )
    return v


def _shape(t):
    return list(t._data.shape)


def _check_dtypes(input, weight, bias):
    xd, wd = input._data.dtype, weight._data.dtype
    if xd != wd:
        if xd == np.float32:
            raise RuntimeError(
                f"Input type (torch.{input.dtype.legacy_name}) and weight type "
                f"(torch.{weight.dtype.legacy_name}) should be the same or input should be a "
                "MKLDNN tensor and weight is a dense tensor"
            )
        raise RuntimeError(
            f"expected scalar type {input.dtype.legacy_name[:-6]} but found "
            f"{weight.dtype.legacy_name[:-6]}"
        )
    if input._data.__class__ is not weight._data.__class__:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices"
        )
    if bias is not None and bias._data.dtype != xd:
        raise RuntimeError(
            f"Input type ({input.dtype.legacy_name[:-6].lower()}) and bias type "
            f"({bias.dtype.legacy_name[:-6].lower()}) should be the same"
        )


def _unbatched(input, nd, name):
    """Whether input lacks the batch dim (PyTorch accepts (C, *S)); errors on other ranks."""
    r = input._data.ndim
    if r == nd + 1:
        return True
    if r != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {_shape(input)}"
        )
    return False


def _check_groups(weight, groups):
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight._data.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{_shape(weight)}] instead"
        )


def _check_common(nd, weight, stride, dilation):
    if weight._data.ndim - 2 != nd:
        raise RuntimeError(
            "expected stride to be a single integer value or a list of "
            f"{weight._data.ndim - 2} values to match the convolution dimensions, but got "
            f"stride={list(stride)}"
        )
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")


def _check_bias(weight, bias, out_ch, transposed):
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != out_ch):
        raise RuntimeError(
            f"Given {'transposed=1' if transposed else ''}weight of size {_shape(weight)}, "
            f"expected bias to be 1-dimensional with {out_ch} elements, but got bias of size "
            f"{_shape(bias)} instead"
        )


def _convnd(nd, name, input, weight, bias, stride, padding, dilation, groups):
    unbatched = _unbatched(input, nd, name)
    if unbatched:
        input = input.unsqueeze(0)
    stride = _expand(stride, nd, "stride")
    dilation = _expand(dilation, nd, "dilation")
    _check_common(nd, weight, stride, dilation)
    kernel = tuple(weight._data.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = tuple(d * (k - 1) for d, k in zip(dilation, kernel))
            lo = tuple(t // 2 for t in total)
            hi = tuple(t - a for t, a in zip(total, lo))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lo = hi = _expand(padding, nd, "padding")
        if any(p < 0 for p in lo):
            raise RuntimeError("negative padding is not supported")
    _check_groups(weight, groups)
    _check_dtypes(input, weight, bias)
    n, c = input._data.shape[:2]
    cg = weight._data.shape[1]
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape(weight)}, expected input"
            f"{_shape(input)} to have {cg * groups} channels, but got {c} channels instead"
        )
    _check_bias(weight, bias, weight._data.shape[0], False)
    size = tuple(input._data.shape[2:])
    padded = tuple(s + a + b for s, a, b in zip(size, lo, hi))
    span = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    if any(p < k for p, k in zip(padded, span)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, span))}). Kernel size can't be greater than "
            "actual input size"
        )
    q = tuple((p - k) // s + 1 for p, k, s in zip(padded, span, stride))
    geo = _Geo((size, q, kernel, stride, dilation, lo, hi, groups))
    out = _apply("conv", input, weight, geo, bias)
    return out.squeeze(0) if unbatched else out


def _conv_transposend(
    nd, name, input, weight, bias, stride, padding, output_padding, groups, dilation
):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    unbatched = _unbatched(input, nd, name)
    if unbatched:
        input = input.unsqueeze(0)
    stride = _expand(stride, nd, "stride")
    dilation = _expand(dilation, nd, "dilation")
    _check_common(nd, weight, stride, dilation)
    pad = _expand(padding, nd, "padding")
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    out_pad = _expand(output_padding, nd, "output_padding")
    if any(op >= s and op >= d for op, s, d in zip(out_pad, stride, dilation)):
        # PyTorch runs a 1-d transpose as a 2-d one of height 1, and words it so
        axes = ("height", "width") if nd < 3 else ("depth", "height", "width")
        lead = (0,) if nd == 1 else ()
        one = (1,) if nd == 1 else ()
        out_pad_l, st_l, dil_l = lead + out_pad, one + stride, one + dilation
        parts = [f"output_padding_{a}: {v}" for a, v in zip(axes, out_pad_l)]
        parts += [f"stride_{a}: {v}" for a, v in zip(axes, st_l)]
        parts += [f"dilation_{a}: {v}" for a, v in zip(axes, dil_l)]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(parts)
        )
    _check_groups(weight, groups)
    _check_dtypes(input, weight, bias)
    c = input._data.shape[1]
    w0 = weight._data.shape[0]
    if c != w0:
        raise RuntimeError(
            f"Given transposed=1, weight of size {_shape(weight)}, expected input"
            f"{_shape(input)} to have {w0} channels, but got {c} channels instead"
        )
    _check_bias(weight, bias, weight._data.shape[1] * groups, True)
    kernel = tuple(weight._data.shape[2:])
    q = tuple(input._data.shape[2:])
    size = tuple(
        (qq - 1) * s - 2 * p + d * (k - 1) + op + 1
        for qq, s, p, d, k, op in zip(q, stride, pad, dilation, kernel, out_pad)
    )
    if any(s <= 0 for s in size):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, q))}). Calculated output size "
            f"per channel: ({' x '.join(map(str, size))}). Output size is too small"
        )
    geo = _Geo((size, q, kernel, stride, dilation, pad, pad, groups))
    out = _apply("input", input, weight, geo, bias)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _conv_transposend(
        1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _conv_transposend(
        2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _conv_transposend(
        3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


FUNCTIONAL = {name: globals()[name] for name in __all__}
