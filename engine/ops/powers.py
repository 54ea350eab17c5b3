"""Powers: pow (tensor or number base and exponent), float_power, square, sqrt, rsqrt, and the
operator ** with its reflected and in-place forms.

PyTorch's conventions at the edges: d/dx x**y is 0 wherever y == 0, d/dy x**y is 0 where x == 0
and y >= 0.
"""

import math

import numpy as np

from ._binary import pair
from ._common import (
    Node,
    Tensor,
    broadcast_error,
    check_tensor,
    const,
    float_data,
    grad_casts,
    is_number,
    operands,
    requires_grad,
    track,
    wrap,
    xp,
)
from ._unary import float_op, unary
from .reduce import sum_to

__all__ = ["pow", "float_power", "square", "sqrt", "rsqrt"]


# -- pow ------------------------------------------------------------------------------------------
class PowBackward0(Node):
    """input ** exponent, exponent a number."""

    __slots__ = ("exponent",)

    def backward(self, g):
        (x,) = self.unpack()
        e = self.exponent
        if e == 0:
            return (g * 0,)
        return (g * e * x ** (e - 1),)


def _zero_where_exponent_zero(grad, exponent):
    """PyTorch's d/dx x**y is 0 wherever y == 0 (also at x == 0, where y * x**(y-1) is nan)."""
    return grad.masked_fill(const(exponent == 0), 0)


class PowBackward1(Node):
    """input ** exponent, both tensors."""

    __slots__ = ("shapes",)
    saves_output = True

    def backward(self, g):
        x, y, out = self.unpack()
        sa, sb = self.shapes
        gx = gy = None
        if self.needs_grad(0):
            gx = sum_to(_zero_where_exponent_zero(g * y * x ** (y - 1), y._data), sa)
        if self.needs_grad(1):
            # d/dy x**y = x**y log x, taken as 0 where x == 0 and y >= 0 (PyTorch's convention)
            mask = const((x._data == 0) & (y._data >= 0))
            gy = sum_to((g * out * x.log()).masked_fill(mask, 0), sb)
        return (gx, gy)


class PowBackward2(Node):
    """number ** exponent."""

    __slots__ = ("base",)
    saves_output = True

    def backward(self, g):
        (out,) = self.unpack()
        gy = g * out * float(np.log(self.base)) if self.base != 0 else g * out * -math.inf
        if self.base == 0:
            # PyTorch takes d/dy 0**y as 0 where y >= 0, which is where 0**y is finite
            od = out._data
            gy = gy.masked_fill(const(xp(od).isfinite(od)), 0)
        return (None, gy)


def pow(input, exponent):
    if not isinstance(input, Tensor):  # number ** tensor
        e = exponent
        ed = float_data(e) if isinstance(input, float) else e._data
        out = wrap(xp(ed).power(input, ed))
        if requires_grad(e):
            node = PowBackward2((None, e), (out.detach(),))
            node.base = input
            track(out, node)
        return out
    if isinstance(exponent, Tensor):
        ad, bd = operands(input, exponent)
        try:
            out = wrap(xp(ad).power(ad, bd))
        except ValueError:
            raise broadcast_error(ad.shape, bd.shape) from None
        if requires_grad(input, exponent):
            node = PowBackward1((input, exponent), (input, exponent, out.detach()))
            node.shapes = (ad.shape, bd.shape)
            node.casts = grad_casts(out, input, exponent)
            track(out, node)
        return out
    ad, e = operands(input, exponent)
    if ad.dtype.kind in "iu" and isinstance(e, int) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    out = wrap(ad**e)
    if requires_grad(input):
        node = PowBackward0((input, None), (input,))
        node.exponent = e
        track(out, node)
    return out


def rpow(input, number):
    return pow(number, input)


def float_power(input, exponent):
    """pow computed in float64, whatever the operands' dtypes."""
    overloads = (
        "Tensor input, Tensor exponent, *, Tensor out = None",
        "Number self, Tensor exponent, *, Tensor out = None",
        "Tensor input, Number exponent, *, Tensor out = None",
    )
    pair("float_power", input, exponent, overloads)
    if isinstance(input, Tensor):
        input = input.double()
    else:
        input = float(input)
    if isinstance(exponent, Tensor):
        exponent = exponent.double()
    else:
        exponent = float(exponent)
    return pow(input, exponent)


def square(input):
    """input ** 2 (PowBackward0, as PyTorch); bools square to int64."""
    check_tensor("square", input)
    return pow(input, 2)


# -- roots ----------------------------------------------------------------------------------------
class SqrtBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g / (2 * y),)


def sqrt(input):
    return unary(input, _np_sqrt, SqrtBackward0, True)


def _np_sqrt(d):
    return xp(d).sqrt(d)


class RsqrtBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * -0.5 * y * y * y,)


rsqrt = float_op("rsqrt", lambda d: 1 / xp(d).sqrt(d), RsqrtBackward0, True)


# -- operators ------------------------------------------------------------------------------------
def __pow__(a, b):  # noqa: N807
    return pow(a, b) if isinstance(b, Tensor) or is_number(b) else NotImplemented


def __rpow__(a, b):  # noqa: N807
    return rpow(a, b) if is_number(b) else NotImplemented


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS.update(__pow__=__pow__, __rpow__=__rpow__)
INPLACE = {name: globals()[name] for name in __all__}
INPLACE_OPERATORS = {"__ipow__": "pow"}
FUNCTIONAL = {}
