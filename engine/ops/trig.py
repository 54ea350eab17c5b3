"""Trigonometric and hyperbolic functions: sin, cos, tan and their inverses, sinh, cosh, tanh
(with tanh's fused backward) and theirs, atan2, hypot, deg2rad, rad2deg and sinc.

Each forward sits beside its backward node, named as PyTorch names its grad_fn; the backward
formulas use engine ops so that a create_graph backward differentiates them again. Integer and
bool inputs compute in float32, PyTorch's default float.
"""

import math

from ._binary import BinaryNode, both_tensors, float_only, record, run, to_float
from ._common import STATE, Node, const, tensor_other_method, track, wrap, xp
from ._unary import float_op, unary
from .powers import sqrt

__all__ = [
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "atan2",
    "arctan2",
    "hypot",
    "deg2rad",
    "rad2deg",
    "sinc",
]


# -- sin, cos, tanh -------------------------------------------------------------------------------
class SinBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * x.cos(),)


def sin(input):
    return unary(input, _np_sin, SinBackward0, False)


class CosBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * -x.sin(),)


def cos(input):
    return unary(input, _np_cos, CosBackward0, False)


class TanhBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (tanh_backward(g, y),)


def tanh_backward(grad, output):
    """grad * (1 - output**2) as one op: the hot backward of tanh layers and chains."""
    gd, yd = grad._data, output._data
    out = wrap(gd * (1 - yd * yd))
    if STATE.enabled and (grad._requires_grad or output._requires_grad):
        track(out, TanhBackwardBackward0((grad, output), (grad, output)))
    return out


class TanhBackwardBackward0(Node):
    __slots__ = ()

    def backward(self, gg):
        g, y = self.unpack()
        (ng, _), (ny, _) = self.next_functions
        return (
            gg * (1 - y * y) if ng is not None else None,
            gg * g * -2 * y if ny is not None else None,
        )


def tanh(input):
    return unary(input, _np_tanh, TanhBackward0, True)


def _np_sin(d):
    return xp(d).sin(d)


def _np_cos(d):
    return xp(d).cos(d)


def _np_tanh(d):
    return xp(d).tanh(d)


# -- the others and the inverses -------------------------------------------------------------------
class TanBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * (y * y + 1),)


class AsinBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / sqrt(1 - x * x),)


class AcosBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (-g / sqrt(1 - x * x),)


class AtanBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / (x * x + 1),)


class SinhBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * cosh(x),)


class CoshBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * sinh(x),)


class AsinhBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / sqrt(x * x + 1),)


class AcoshBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / sqrt(x * x - 1),)


class AtanhBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / (1 - x * x),)


tan = float_op("tan", lambda d: xp(d).tan(d), TanBackward0, True)


asin = float_op("asin", lambda d: xp(d).arcsin(d), AsinBackward0)


acos = float_op("acos", lambda d: xp(d).arccos(d), AcosBackward0)


atan = float_op("atan", lambda d: xp(d).arctan(d), AtanBackward0)


sinh = float_op("sinh", lambda d: xp(d).sinh(d), SinhBackward0)


cosh = float_op("cosh", lambda d: xp(d).cosh(d), CoshBackward0)


asinh = float_op("asinh", lambda d: xp(d).arcsinh(d), AsinhBackward0)


acosh = float_op("acosh", lambda d: xp(d).arccosh(d), AcoshBackward0)


atanh = float_op("atanh", lambda d: xp(d).arctanh(d), AtanhBackward0)


arcsin, arccos, arctan = asin, acos, atan


arcsinh, arccosh, arctanh = asinh, acosh, atanh


# -- atan2, hypot (tensors only, float results) ---------------------------------------------------
class Atan2Backward0(BinaryNode):
    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        r = g / (a * a + b * b)
        return (
            self.reduce(r * b, 0) if self.needs_grad(0) else None,
            self.reduce(-r * a, 1) if self.needs_grad(1) else None,
        )


def atan2(input, other):
    ad, bd = to_float(*both_tensors("atan2", input, other))
    out = run(lambda x, y: xp(x).arctan2(x, y), ad, bd)
    return record(out, Atan2Backward0, input, other, ad, bd, (input, other))


arctan2 = atan2


class HypotBackward0(BinaryNode):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        a, b, out = self.unpack()
        r = g / out
        return (
            self.reduce(r * a, 0) if self.needs_grad(0) else None,
            self.reduce(r * b, 1) if self.needs_grad(1) else None,
        )


def hypot(input, other):
    ad, bd = both_tensors("hypot", input, other)
    float_only("hypot", ad, bd)
    out = run(lambda x, y: xp(x).hypot(x, y), ad, bd)
    return record(out, HypotBackward0, input, other, ad, bd, (input, other, out.detach()))


# -- angles, sinc ----------------------------------------------------------------------------------
class Deg2RadBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g * (math.pi / 180),)


class Rad2DegBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g * (180 / math.pi),)


deg2rad = float_op("deg2rad", lambda d: xp(d).deg2rad(d), Deg2RadBackward0)


rad2deg = float_op("rad2deg", lambda d: xp(d).rad2deg(d), Rad2DegBackward0)


class SincBackward0(Node):
    """(cos(pi x) pi x - sin(pi x)) / (pi x^2), taken as 0 at x == 0 (its limit)."""

    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        zero = const(x._data == 0)
        safe = x.masked_fill(zero, 1.0)  # keeps the masked branch finite for double backward
        p = safe * math.pi
        d = (p.cos() * p - p.sin()) / (p * safe)
        return (g * d.masked_fill(zero, 0.0),)


sinc = float_op("sinc", lambda d: xp(d).sinc(d), SincBackward0)


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS.update({n: tensor_other_method(globals()[n], n) for n in ("atan2", "arctan2", "hypot")})
# PyTorch's in-place forms (name_); sin_ and cos_ are not provided yet
INPLACE = {n: globals()[n] for n in __all__ if n not in ("sin", "cos")}
FUNCTIONAL = {"tanh": tanh}
