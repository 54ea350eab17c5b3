"""Exponentials and logarithms: exp, exp2, expm1, log, log2, log10, log1p, logaddexp, xlogy and
logit. Integer and bool inputs compute in float32, PyTorch's default float."""

import math

import numpy as np

from ._binary import (
    EITHER_NUMBER,
    BinaryNode,
    both_tensors,
    dtype_of,
    float_only,
    pair,
    record,
    run,
    to_float,
)
from ._common import (
    Node,
    Tensor,
    check_tensor,
    const,
    requires_grad,
    tensor_other_method,
    track,
    xp,
)
from ._unary import float_op, unary

__all__ = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "logaddexp",
    "xlogy",
    "logit",
]


_LN2 = math.log(2.0)


_LN10 = math.log(10.0)


# -- exp, log -------------------------------------------------------------------------------------
class ExpBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * y,)


def exp(input):
    return unary(input, _np_exp, ExpBackward0, True)


class LogBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / x,)


def log(input):
    return unary(input, _np_log, LogBackward0, False)


def _np_exp(d):
    return xp(d).exp(d)


def _np_log(d):
    return xp(d).log(d)


# -- the variants ---------------------------------------------------------------------------------
class Exp2Backward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * y * _LN2,)


class Expm1Backward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * (y + 1),)


class Log2Backward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / (x * _LN2),)


class Log10Backward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / (x * _LN10),)


class Log1PBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / (x + 1),)


exp2 = float_op("exp2", lambda d: xp(d).exp2(d), Exp2Backward0, True)


expm1 = float_op("expm1", lambda d: xp(d).expm1(d), Expm1Backward0, True)


log2 = float_op("log2", lambda d: xp(d).log2(d), Log2Backward0)


log10 = float_op("log10", lambda d: xp(d).log10(d), Log10Backward0)


log1p = float_op("log1p", lambda d: xp(d).log1p(d), Log1PBackward0)


# -- logaddexp, xlogy ------------------------------------------------------------------------------
class LogaddexpBackward0(BinaryNode):
    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        return (
            self.reduce(g / (exp(b - a) + 1), 0) if self.needs_grad(0) else None,
            self.reduce(g / (exp(a - b) + 1), 1) if self.needs_grad(1) else None,
        )


def logaddexp(input, other):
    ad, bd = both_tensors("logaddexp", input, other)
    float_only("logaddexp", ad, bd)
    out = run(lambda x, y: xp(x).logaddexp(x, y), ad, bd)
    return record(out, LogaddexpBackward0, input, other, ad, bd, (input, other))


def _xlogy(x, y):
    m = xp(x if hasattr(x, "dtype") else y)
    with np.errstate(all="ignore"):
        r = m.where(x == 0, 0, x * m.log(y))
    return m.where(m.isnan(y), np.nan, r).astype(dtype_of(x, y), copy=False)


class XlogyBackward0(BinaryNode):
    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        ga = gb = None
        if self.needs_grad(0):
            ad, bd = a._data, b._data
            mask = const((ad == 0) & (bd <= 0))
            ga = self.reduce(xlogy(g, b).masked_fill(mask, 0), 0)
        if self.needs_grad(1):
            gb = self.reduce(g * a / b, 1)
        return (ga, gb)


class XlogyBackward1(BinaryNode):
    """Number self."""

    __slots__ = ("self_number",)

    def backward(self, g):
        (b,) = self.unpack()
        return (None, g * self.self_number / b)


class XlogyBackward2(BinaryNode):
    """Number other."""

    __slots__ = ()

    def backward(self, g):
        (a,) = self.unpack()
        y = self.other
        ga = xlogy(g, y)
        if y <= 0:
            ga = ga.masked_fill(const(a._data == 0), 0)
        return (ga, None)


def xlogy(input, other):
    """input * log(other), 0 where input == 0 (unless other is nan)."""
    ad, bd = to_float(*pair("xlogy", input, other, EITHER_NUMBER))
    out = run(_xlogy, ad, bd)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return record(out, XlogyBackward0, input, other, ad, bd, (input, other))
    if isinstance(other, Tensor):
        if requires_grad(other):
            node = XlogyBackward1((None, other), (other,))
            node.self_number = input
            node.shapes, node.other = None, None
            track(out, node)
        return out
    return record(out, XlogyBackward2, input, other, ad, bd, (input,))


# -- logit ----------------------------------------------------------------------------------------
class LogitBackward0(Node):
    __slots__ = ("eps",)

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        grad = g / (x * (1 - x))
        if self.eps is None:  # outside [0, 1] the derivative is undefined: nan, as PyTorch
            outside = const((d < 0) | (d > 1))
            return (grad.masked_fill(outside, math.nan),)
        clipped = const((d < self.eps) | (d > 1 - self.eps))
        return (grad.masked_fill(clipped, 0.0),)


def logit(input, eps=None):
    check_tensor("logit", input)
    if eps is not None and not isinstance(eps, (int, float)):
        raise TypeError(f"logit(): argument 'eps' must be float, not {type(eps).__name__}")

    def fn(d):
        m = xp(d)
        if eps is not None:
            d = m.clip(d, eps, 1 - eps)
        return m.log(d / (1 - d))

    out = unary(input, fn, LogitBackward0, False)
    if out.grad_fn is not None:
        out.grad_fn.eps = eps
    return out


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS["logaddexp"] = tensor_other_method(logaddexp, "logaddexp")
# PyTorch's in-place forms (name_): all but logaddexp_
INPLACE = {n: globals()[n] for n in __all__ if n != "logaddexp"}
FUNCTIONAL = {}
