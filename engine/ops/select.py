"""Ops that pick, element by element, between two sources: maximum, minimum, where,
masked_fill, clamp (the input or a bound) and nan_to_num (the input or a replacement). Each
input gets the gradient where its value was picked."""

import numpy as np

from .._creation import tensor
from .._dtype import from_numpy
from ._common import (
    STATE,
    Node,
    Tensor,
    broadcast_error,
    check_tensor,
    const,
    grad_casts,
    operands,
    requires_grad,
    track,
    wrap,
    xp,
)
from .reduce import sum_to

__all__ = ["maximum", "minimum", "where", "masked_fill", "clamp", "clip", "nan_to_num"]


# -- maximum, minimum, where ----------------------------------------------------------------------
class MaximumBackward0(Node):
    """Gradient goes to the larger input; ties split it in half, as in PyTorch."""

    __slots__ = ("shapes", "_wins")

    def backward(self, g):
        self.unpack()
        sa, sb = self.shapes
        share = const(self._wins)
        return (
            sum_to(g * share, sa) if self.needs_grad(0) else None,
            sum_to(g * (1 - share), sb) if self.needs_grad(1) else None,
        )


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


def _extremum(a, b, node_cls, pick, greater):
    ad, bd = operands(a, b)
    if not isinstance(b, Tensor):
        raise TypeError(
            f"{pick.__name__}(): argument 'other' must be Tensor, not {type(b).__name__}"
        )
    try:
        out = wrap(pick(ad, bd))
    except ValueError:
        raise broadcast_error(ad.shape, bd.shape) from None
    if requires_grad(a, b):
        node = node_cls((a, b), (a, b))
        node.shapes = (ad.shape, bd.shape)
        node.casts = grad_casts(out, a, b)
        dt = out._data.dtype
        node._wins = greater(ad, bd).astype(dt) + (ad == bd).astype(dt) * 0.5
        track(out, node)
    return out


def maximum(input, other):
    return _extremum(input, other, MaximumBackward0, xp(input._data).maximum, _gt)


def minimum(input, other):
    return _extremum(input, other, MinimumBackward0, xp(input._data).minimum, _lt)


def _gt(x, y):
    return x > y


def _lt(x, y):
    return x < y


class WhereBackward0(Node):
    __slots__ = ("cond", "shapes")

    def backward(self, g):
        c = const(self.cond)
        sx, sy = self.shapes
        return (
            None,
            sum_to(where(c, g, 0.0), sx) if self.needs_grad(1) else None,
            sum_to(where(c, 0.0, g), sy) if self.needs_grad(2) else None,
        )


def where(condition, input=None, other=None):
    if input is None and other is None:  # where(condition): nonzero(condition, as_tuple=True)
        return tuple(wrap(i) for i in xp(condition._data).nonzero(condition._data))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # two Python numbers: the first becomes a 0-d tensor of its default dtype
        input = tensor(input, device=getattr(condition, "device", None))
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != bool:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {from_numpy(cond.dtype).legacy_name[:-6]}"
        )
    if isinstance(input, Tensor):
        xd, yd = operands(input, other)
    else:
        yd, xd = operands(other, input)
    try:
        out = wrap(xp(cond).where(cond, xd, yd))
    except ValueError:
        raise broadcast_error(cond.shape, np.broadcast_shapes(np.shape(xd), np.shape(yd))) from None
    if requires_grad(input, other):
        node = WhereBackward0((None, input, other))
        node.casts = grad_casts(out, None, input, other)
        node.cond = cond
        node.shapes = (np.shape(xd), np.shape(yd))
        track(out, node)
    return out


class MaskedFillBackward0(Node):
    """masked_fill with a number: the filled places get no gradient."""

    __slots__ = ("mask", "in_shape")

    def backward(self, g):
        return (sum_to(where(const(self.mask), 0.0, g), self.in_shape),)


class MaskedFillBackward1(MaskedFillBackward0):
    """masked_fill with a 0-d tensor: it gets the sum of the gradient over the filled places."""

    __slots__ = ()

    def backward(self, g):
        m = const(self.mask)
        return (
            sum_to(where(m, 0.0, g), self.in_shape) if self.needs_grad(0) else None,
            where(m, g, 0.0).sum() if self.needs_grad(1) else None,
        )


def masked_fill(input, mask, value):
    """input where mask is False, value where it is True, in input's dtype."""
    md = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if md.dtype != bool:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{from_numpy(md.dtype).legacy_name[:-6].lower()}"
        )
    d = input._data
    is_tensor = isinstance(value, Tensor)
    if is_tensor and value._data.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    v = value._data.astype(d.dtype) if is_tensor else value
    try:
        data = xp(d).where(md, v, d).astype(d.dtype, copy=False)
    except ValueError:
        raise broadcast_error(d.shape, md.shape) from None
    out = wrap(data)
    if requires_grad(input, value):
        if is_tensor:
            node = MaskedFillBackward1((input, value))
        else:
            node = MaskedFillBackward0((input,))
        node.mask = xp(d).broadcast_to(md, data.shape)
        node.in_shape = d.shape  # a mask of more dims broadcasts the result to its shape
        track(out, node)
    return out


# -- clamp, nan_to_num -----------------------------------------------------------------------------
class ClampBackward1(Node):
    """Gradient passes where min <= input <= max (inclusive, as in PyTorch)."""

    __slots__ = ("min", "max")

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        keep = xp(d).ones(d.shape, dtype=bool)
        if self.min is not None:
            keep &= d >= self.min
        if self.max is not None:
            keep &= d <= self.max
        return (g * const(keep.astype(g._data.dtype)),)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):  # tensor bounds: compose the two ops
        out = input
        if min is not None:
            out = maximum(out, min if isinstance(min, Tensor) else wrap(np.asarray(min)))
        if max is not None:
            out = minimum(out, max if isinstance(max, Tensor) else wrap(np.asarray(max)))
        return out
    d = input._data
    if d.dtype.kind != "f" and any(isinstance(v, float) for v in (min, max)):
        d = d.astype(np.float32)
    out = wrap(xp(d).clip(d, min, max))
    if STATE.enabled and input._requires_grad:
        node = ClampBackward1((input,), (input,))
        node.min, node.max = min, max
        track(out, node)
    return out


clip = clamp


class NanToNumBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        return (g * const(xp(d).isfinite(d).astype(g._data.dtype)),)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan, +inf and -inf replaced; the infinities default to the dtype's largest finite values.
    Integers and bools come back unchanged (a copy)."""
    check_tensor("nan_to_num", input)
    for arg, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not isinstance(v, (int, float)):
            raise TypeError(f"nan_to_num(): argument '{arg}' must be float, not {type(v).__name__}")
    d = input._data
    if d.dtype.kind != "f":
        return wrap(d.copy())
    m = xp(d)
    info = np.finfo(d.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    data = m.where(m.isnan(d), nan if nan is not None else 0.0, d)
    data = m.where(data == np.inf, hi, data)
    data = m.where(data == -np.inf, lo, data).astype(d.dtype, copy=False)
    out = wrap(data)
    if STATE.enabled and input._requires_grad:
        track(out, NanToNumBackward0((input,), (input,)))
    return out


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS["where"] = lambda self, condition, other: where(condition, self, other)
INPLACE = {n: globals()[n] for n in ("clamp", "clip", "masked_fill", "nan_to_num")}
FUNCTIONAL = {}
