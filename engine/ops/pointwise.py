"""Unary pointwise math: trigonometric and hyperbolic functions, exp/log variants, the error
function family (erf, erfc, erfinv, computed here: numpy has none), rounding (floor, ceil,
round, trunc, frac), sign/sgn, sinc, logit, square, nan_to_num, and the predicates isfinite,
isclose and allclose.

Each forward sits beside its backward node, named as PyTorch names its grad_fn; the backward
formulas use engine ops so that a create_graph backward differentiates them again. Integer and
bool inputs of the float functions compute in float32, PyTorch's default float. The binary
pointwise ops live in binary.py.
"""

import math

import numpy as np

from .._dtype import from_numpy
from . import _special
from ._common import STATE, Node, Tensor, broadcast_error, const, operands, track, wrap, xp
from .elementwise import _unary, exp, pow, sqrt

__all__ = [
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expm1",
    "log2",
    "log10",
    "log1p",
    "rsqrt",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fix",
    "frac",
    "sign",
    "sgn",
    "deg2rad",
    "rad2deg",
    "sinc",
    "logit",
    "square",
    "nan_to_num",
    "isfinite",
    "isclose",
    "allclose",
]

_SQRT_PI = math.sqrt(math.pi)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _check_tensor(name, x):
    _tensor_arg(name, x, "input", 1)


def _tensor_arg(name, x, arg, pos):
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def _type_name(dtype):
    """PyTorch's short scalar-type name in kernel messages: Float, Double, Long, Bool..."""
    return from_numpy(dtype).legacy_name[:-6]


def _not_implemented(kernel, dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(dtype)}'")


def _float_op(name, fn, node_cls, save_output=False):
    """A public unary float op: integers and bools compute in float32."""

    def op(input):
        _check_tensor(name, input)
        return _unary(input, fn, node_cls, save_output)

    op.__name__ = op.__qualname__ = name
    return op


def _zeros_like(g):
    d = g._data
    return const(xp(d).zeros_like(d))


# -- trigonometric and hyperbolic ------------------------------------------------------------------
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


tan = _float_op("tan", lambda d: xp(d).tan(d), TanBackward0, True)
asin = _float_op("asin", lambda d: xp(d).arcsin(d), AsinBackward0)
acos = _float_op("acos", lambda d: xp(d).arccos(d), AcosBackward0)
atan = _float_op("atan", lambda d: xp(d).arctan(d), AtanBackward0)
sinh = _float_op("sinh", lambda d: xp(d).sinh(d), SinhBackward0)
cosh = _float_op("cosh", lambda d: xp(d).cosh(d), CoshBackward0)
asinh = _float_op("asinh", lambda d: xp(d).arcsinh(d), AsinhBackward0)
acosh = _float_op("acosh", lambda d: xp(d).arccosh(d), AcoshBackward0)
atanh = _float_op("atanh", lambda d: xp(d).arctanh(d), AtanhBackward0)
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh


# -- exp and log variants --------------------------------------------------------------------------
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


class RsqrtBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * -0.5 * y * y * y,)


exp2 = _float_op("exp2", lambda d: xp(d).exp2(d), Exp2Backward0, True)
expm1 = _float_op("expm1", lambda d: xp(d).expm1(d), Expm1Backward0, True)
log2 = _float_op("log2", lambda d: xp(d).log2(d), Log2Backward0)
log10 = _float_op("log10", lambda d: xp(d).log10(d), Log10Backward0)
log1p = _float_op("log1p", lambda d: xp(d).log1p(d), Log1PBackward0)
rsqrt = _float_op("rsqrt", lambda d: 1 / xp(d).sqrt(d), RsqrtBackward0, True)


# -- the error function family ---------------------------------------------------------------------
# numpy has no erf: engine/ops/_special.py evaluates erf and erfc on arrays (float64 to a few
# ulp, float32 in float32); on the GPU it hands them to cupyx.scipy.special, as erfinv does here.
def _np_erf(d):
    return _special.erf(d)


def _np_erfc(d):
    return _special.erfc(d)


def _np_erfinv(d):
    """Winitzki's closed form (to ~2e-3), then two Halley steps (cubic convergence) on erf; for
    |x| > 0.5 the steps solve erfc(y) = 1 - |x| instead, where 1 - |x| is exact."""
    if d.__class__ is not np.ndarray:
        return _special._cupyx_special().erfinv(d)
    x = d.astype(np.float64).reshape(-1)  # 1-d: numpy gives scalars for 0-d results
    ax = np.abs(x)
    c = 1 - ax
    a = 0.147
    with np.errstate(all="ignore"):
        log_term = np.log(c * (1 + ax))
        p = 2 / (math.pi * a) + log_term / 2
        y = np.sqrt(np.sqrt(p * p - log_term / a) - p)
        tail = ax > 0.5
        for _ in range(2):
            # erf(y) - |x|, computed without cancellation
            f = np.where(tail, c - _special.erfc(y), _special.erf(y) - ax)
            step = f / ((2 / _SQRT_PI) * _special.exp_neg_sq(y))
            y = y - step / (1 + y * step)
    y = np.where(ax == 1, np.inf, np.where(ax > 1, np.nan, y))
    return np.copysign(y, x).astype(d.dtype, copy=False).reshape(d.shape)


class ErfBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * (2 / _SQRT_PI) * exp(-x * x),)


class ErfcBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * (-2 / _SQRT_PI) * exp(-x * x),)


class ErfinvBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * (_SQRT_PI / 2) * exp(y * y),)


erf = _float_op("erf", _np_erf, ErfBackward0)
erfc = _float_op("erfc", _np_erfc, ErfcBackward0)
erfinv = _float_op("erfinv", _np_erfinv, ErfinvBackward0, True)


# -- rounding, sign: piecewise constant, so their gradients are zero -------------------------------
class FloorBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (_zeros_like(g),)


class CeilBackward0(FloorBackward0):
    __slots__ = ()


class TruncBackward0(FloorBackward0):
    __slots__ = ()


class RoundBackward0(FloorBackward0):
    __slots__ = ()


class RoundBackward1(FloorBackward0):
    """round with decimals=."""

    __slots__ = ()


class SignBackward0(FloorBackward0):
    __slots__ = ()


class SgnBackward0(FloorBackward0):
    __slots__ = ()


def _piecewise(name, input, fn, node_cls, kernel):
    """A rounding op: integers come back unchanged (a copy), bools are refused."""
    _check_tensor(name, input)
    d = input._data
    if d.dtype == bool:
        raise _not_implemented(kernel, d.dtype)
    out = wrap(fn(d) if d.dtype.kind == "f" else d.copy())
    if STATE.enabled and input._requires_grad:
        track(out, node_cls((input,)))
    return out


def floor(input):
    return _piecewise("floor", input, lambda d: xp(d).floor(d), FloorBackward0, "floor_vml_cpu")


def ceil(input):
    return _piecewise("ceil", input, lambda d: xp(d).ceil(d), CeilBackward0, "ceil_vml_cpu")


def trunc(input):
    return _piecewise("trunc", input, lambda d: xp(d).trunc(d), TruncBackward0, "trunc_vml_cpu")


fix = trunc


def round(input, *, decimals=None):
    """Half to even, as PyTorch. decimals=None is PyTorch's plain round (RoundBackward0); any
    decimals given, 0 included, is its round.decimals overload (RoundBackward1)."""
    if decimals is None:
        return _piecewise("round", input, lambda d: xp(d).rint(d), RoundBackward0, "round_vml_cpu")
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(
            "round() received an invalid combination of arguments - got (Tensor, "
            f"decimals={type(decimals).__name__}), but expected one of:\n"
            " * (Tensor input, *, Tensor out = None)\n"
            " * (Tensor input, *, int decimals, Tensor out = None)\n"
        )
    _check_tensor("round", input)
    if input._data.dtype.kind != "f":
        raise _not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", input._data.dtype)
    if decimals == 0:
        return _piecewise("round", input, lambda d: xp(d).rint(d), RoundBackward1, "")
    return _piecewise("round", input, lambda d: _round_decimals(d, decimals), RoundBackward1, "")


def _round_decimals(d, decimals):
    m = xp(d)
    scale = 10.0 ** abs(decimals)  # a Python float: the product keeps d's dtype
    if decimals > 0:
        return m.rint(d * scale) / scale
    return m.rint(d / scale) * scale


def sign(input):
    """-1, 0 or 1 (0 for nan, as PyTorch); bools stay bools, integers keep their dtype."""
    _check_tensor("sign", input)
    return _sign(input, SignBackward0)


def sgn(input):
    """sign, for real tensors (PyTorch's sgn differs only for complex ones)."""
    _check_tensor("sgn", input)
    return _sign(input, SgnBackward0)


def _sign(input, node_cls):
    d = input._data
    m = xp(d)
    if d.dtype == bool:
        data = d.copy()
    elif d.dtype.kind == "f":
        data = m.sign(d)
        data = m.where(m.isnan(d), 0, data).astype(d.dtype, copy=False)
    else:
        data = m.sign(d)
    out = wrap(data)
    if STATE.enabled and input._requires_grad:
        track(out, node_cls((input,)))
    return out


class FracBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g,)


def frac(input):
    _check_tensor("frac", input)
    d = input._data
    if d.dtype.kind != "f":
        raise _not_implemented("frac_cpu", d.dtype)
    out = wrap(d - xp(d).trunc(d))
    if STATE.enabled and input._requires_grad:
        track(out, FracBackward0((input,)))
    return out


# -- angles, sinc, logit, square -------------------------------------------------------------------
class Deg2RadBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g * (math.pi / 180),)


class Rad2DegBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g * (180 / math.pi),)


deg2rad = _float_op("deg2rad", lambda d: xp(d).deg2rad(d), Deg2RadBackward0)
rad2deg = _float_op("rad2deg", lambda d: xp(d).rad2deg(d), Rad2DegBackward0)


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


sinc = _float_op("sinc", lambda d: xp(d).sinc(d), SincBackward0)


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
    _check_tensor("logit", input)
    if eps is not None and not isinstance(eps, (int, float)):
        raise TypeError(f"logit(): argument 'eps' must be float, not {type(eps).__name__}")

    def fn(d):
        m = xp(d)
        if eps is not None:
            d = m.clip(d, eps, 1 - eps)
        return m.log(d / (1 - d))

    out = _unary(input, fn, LogitBackward0, False)
    if out.grad_fn is not None:
        out.grad_fn.eps = eps
    return out


def square(input):
    """input ** 2 (PowBackward0, as PyTorch); bools square to int64."""
    _check_tensor("square", input)
    return pow(input, 2)


# -- non-finite values -----------------------------------------------------------------------------
class NanToNumBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        return (g * const(xp(d).isfinite(d).astype(g._data.dtype)),)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan, +inf and -inf replaced; the infinities default to the dtype's largest finite values.
    Integers and bools come back unchanged (a copy)."""
    _check_tensor("nan_to_num", input)
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


def isfinite(input):
    _check_tensor("isfinite", input)
    d = input._data
    if d.dtype.kind != "f":
        return wrap(xp(d).ones(d.shape, dtype=bool))
    return wrap(xp(d).isfinite(d))


# -- closeness (no gradient) -----------------------------------------------------------------------
def _check_tolerance(name, v):
    if v < 0:
        raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (equal infinities are close)."""
    _tensor_arg("isclose", input, "input", 1)
    _tensor_arg("isclose", other, "other", 2)
    ad, bd = input._data, other._data
    if ad.dtype != bd.dtype:
        raise RuntimeError(f"{_type_name(ad.dtype)} did not match {_type_name(bd.dtype)}")
    _check_tolerance("rtol", rtol)
    _check_tolerance("atol", atol)
    ad, bd = operands(input, other)  # the device check
    m = xp(ad)
    try:
        close = ad == bd
    except ValueError:
        raise broadcast_error(ad.shape, bd.shape) from None
    if equal_nan and ad.dtype.kind == "f":
        close = close | (m.isnan(ad) & m.isnan(bd))
    if rtol == 0 and atol == 0:
        return wrap(close)
    if ad.dtype.kind != "f":
        ad, bd = ad.astype(np.float32), bd.astype(np.float32)
    with np.errstate(all="ignore"):
        err = m.abs(ad - bd)
        close = close | (m.isfinite(err) & (err <= atol + rtol * m.abs(bd)))
    return wrap(close)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def _tensor_other_method(fn, name):
    """The method form of an op that takes tensors only: PyTorch counts `other` as position 1."""

    def method(self, other, *args, **kwargs):
        _tensor_arg(name, other, "other", 1)
        return fn(self, other, *args, **kwargs)

    method.__name__ = name
    return method


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS["isclose"] = _tensor_other_method(isclose, "isclose")
METHODS["allclose"] = _tensor_other_method(allclose, "allclose")
# PyTorch's in-place forms (name_): every op here but the predicates
INPLACE = {n: fn for n, fn in METHODS.items() if n not in ("isfinite", "isclose", "allclose")}
FUNCTIONAL = {}
