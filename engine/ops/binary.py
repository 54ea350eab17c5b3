"""Binary pointwise ops: atan2, hypot, logaddexp, copysign, fmod, remainder, floor_divide, lerp,
xlogy, float_power, true_divide; logical_and/or/xor; integer shifts; and the operators % // << >>
with their reflected and in-place forms.

Operands broadcast and promote as in PyTorch (see `operands`); where PyTorch accepts a Python
number in place of a tensor the op does too, and refuses it with PyTorch's message elsewhere.
Backward formulas are engine ops, so they differentiate again; masks and quotients that are
piecewise constant in the inputs enter as constants.
"""

import numpy as np

from . import compare as _compare
from ._common import (
    Node,
    Tensor,
    broadcast_error,
    const,
    grad_casts,
    is_number,
    operands,
    requires_grad,
    sum_to,
    track,
    wrap,
    xp,
)
from .elementwise import div, exp, pow
from .pointwise import _not_implemented, _tensor_arg, _tensor_other_method

__all__ = [
    "atan2",
    "arctan2",
    "hypot",
    "logaddexp",
    "copysign",
    "fmod",
    "remainder",
    "floor_divide",
    "lerp",
    "xlogy",
    "float_power",
    "true_divide",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
]

true_divide = div


# -- operands --------------------------------------------------------------------------------------
def _combination_error(name, args, overloads):
    """PyTorch's TypeError for arguments no overload takes. Overloads without an out= are
    followed by a line marking the arguments that do not fit (all of them when every argument
    is a number, as PyTorch words it)."""
    names = ["Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args]
    all_numbers = all(is_number(a) for a in args)
    lines = []
    for sig in overloads:
        lines.append(f" * ({sig})")
        if not sig.endswith("None"):
            kinds = [p.split()[0] for p in sig.split(", ")]
            marked = ", ".join(
                n if not all_numbers and _fits(a, k) else f"!{n}!"
                for a, n, k in zip(args, names, kinds)
            )
            lines.append(
                f"      didn't match because some of the arguments have invalid types: ({marked})"
            )
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(names)}), "
        "but expected one of:\n" + "\n".join(lines) + "\n"
    )


def _fits(arg, kind):
    return isinstance(arg, Tensor) if kind == "Tensor" else is_number(arg)


_TENSOR_OR_NUMBER = ("Tensor input, Tensor other, *, Tensor out = None",)
_OTHER_NUMBER = (*_TENSOR_OR_NUMBER, "Tensor input, Number other, *, Tensor out = None")
_EITHER_NUMBER = (
    *_TENSOR_OR_NUMBER,
    "Number self, Tensor other, *, Tensor out = None",
    "Tensor input, Number other, *, Tensor out = None",
)
_EITHER_NUMBER_NO_OUT = (
    *_TENSOR_OR_NUMBER,
    "Number self, Tensor other",
    "Tensor input, Number other, *, Tensor out = None",
)

_FLOOR_DIVIDE = (*_TENSOR_OR_NUMBER, "Tensor input, Number other")


def _pair(name, a, b, overloads):
    """The promoted arrays of a binary op; a Python number is allowed where `overloads` has a
    Number, and stays a Python number (numpy then keeps the tensor's dtype)."""
    a_num, b_num = is_number(a), is_number(b)
    number_self = any(sig.startswith("Number self") for sig in overloads)
    ok = (isinstance(a, Tensor) or (a_num and number_self)) and (isinstance(b, Tensor) or b_num)
    if not ok or (a_num and b_num):
        raise _combination_error(name, (a, b), overloads)
    if isinstance(a, Tensor):
        return operands(a, b)
    bd, ad = operands(b, a)
    return ad, bd


def _both_tensors(name, a, b):
    _tensor_arg(name, a, "input", 1)
    _tensor_arg(name, b, "other", 2)
    return operands(a, b)


def _dtype_of(ad, bd):
    return (ad if hasattr(ad, "dtype") else bd).dtype


def _to_float(ad, bd):
    """Integer and bool operands compute in float32, PyTorch's default float."""
    if _dtype_of(ad, bd).kind == "f":
        return ad, bd
    f = np.float32
    return (
        ad.astype(f) if hasattr(ad, "dtype") else float(ad),
        bd.astype(f) if hasattr(bd, "dtype") else float(bd),
    )


def _run(fn, ad, bd):
    try:
        return wrap(fn(ad, bd))
    except ValueError:
        raise broadcast_error(np.shape(ad), np.shape(bd)) from None


def _record(out, node_cls, a, b, ad, bd, saved=()):
    """Attach node_cls to out when a or b needs grad; the node learns the broadcast shapes."""
    if requires_grad(a, b):
        node = node_cls((a, b), saved)
        sa, sb = np.shape(ad), np.shape(bd)
        node.shapes = None if sa == sb else (sa, sb)
        node.other = b if not isinstance(b, Tensor) else None
        node.casts = grad_casts(out, a, b)
        track(out, node)
    return out


class _Binary(Node):
    __slots__ = ("shapes", "other")

    def reduce(self, grad, i):
        return grad if self.shapes is None else sum_to(grad, self.shapes[i])


def _no_zero_divisor(ad, bd):
    """Integer division by zero is an error in PyTorch (numpy would give 0)."""
    if _dtype_of(ad, bd).kind in "iub" and bool(
        (bd == 0).any() if hasattr(bd, "dtype") else bd == 0
    ):
        raise RuntimeError("ZeroDivisionError")


class NotImplementedBackward(Node):
    """PyTorch's grad_fn for an op with no derivative: recorded, but backward raises."""

    __slots__ = ("op",)

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, g):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


NotImplementedBackward.__name__ = NotImplementedBackward.__qualname__ = "NotImplemented"


def _no_derivative(out, op, a, b):
    if requires_grad(a, b):
        node = NotImplementedBackward((a, b))
        node.op = op
        track(out, node)
    return out


# -- atan2, hypot, logaddexp (tensors only, float results) -----------------------------------------
class Atan2Backward0(_Binary):
    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        r = g / (a * a + b * b)
        return (
            self.reduce(r * b, 0) if self.needs_grad(0) else None,
            self.reduce(-r * a, 1) if self.needs_grad(1) else None,
        )


def atan2(input, other):
    ad, bd = _to_float(*_both_tensors("atan2", input, other))
    out = _run(lambda x, y: xp(x).arctan2(x, y), ad, bd)
    return _record(out, Atan2Backward0, input, other, ad, bd, (input, other))


arctan2 = atan2


def _float_only(name, ad, bd):
    dt = _dtype_of(ad, bd)
    if dt.kind != "f":
        raise _not_implemented(f"{name}_cpu", dt)


class HypotBackward0(_Binary):
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
    ad, bd = _both_tensors("hypot", input, other)
    _float_only("hypot", ad, bd)
    out = _run(lambda x, y: xp(x).hypot(x, y), ad, bd)
    return _record(out, HypotBackward0, input, other, ad, bd, (input, other, out.detach()))


class LogaddexpBackward0(_Binary):
    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        return (
            self.reduce(g / (exp(b - a) + 1), 0) if self.needs_grad(0) else None,
            self.reduce(g / (exp(a - b) + 1), 1) if self.needs_grad(1) else None,
        )


def logaddexp(input, other):
    ad, bd = _both_tensors("logaddexp", input, other)
    _float_only("logaddexp", ad, bd)
    out = _run(lambda x, y: xp(x).logaddexp(x, y), ad, bd)
    return _record(out, LogaddexpBackward0, input, other, ad, bd, (input, other))


# -- copysign --------------------------------------------------------------------------------------
class CopysignBackward0(_Binary):
    """Tensor other: it gets a zero gradient (PyTorch's), input gets out/input (0 at 0)."""

    __slots__ = ()
    saves_output = True

    def backward(self, g):
        a, out = self.unpack()
        ad, od = a._data, out._data
        m = xp(od)
        # out/a is +-1, piecewise constant in both inputs: a constant of the formula
        ratio = const(m.where(ad == 0, 0, od / m.where(ad == 0, 1, ad)).astype(od.dtype))
        ga = self.reduce(g * ratio, 0) if self.needs_grad(0) else None
        gb = None
        if self.needs_grad(1):
            gd = g._data
            gb = const(xp(gd).zeros(self.shapes[1] if self.shapes else gd.shape, gd.dtype))
        return (ga, gb)


class CopysignBackward1(CopysignBackward0):
    """Number other."""

    __slots__ = ()


def copysign(input, other):
    ad, bd = _to_float(*_pair("copysign", input, other, _OTHER_NUMBER))
    out = _run(lambda x, y: xp(x).copysign(x, y), ad, bd)
    cls = CopysignBackward0 if isinstance(other, Tensor) else CopysignBackward1
    return _record(out, cls, input, other, ad, bd, (input, out.detach()))


# -- fmod, remainder, floor_divide -----------------------------------------------------------------
def _integer_kernel(name, ad, bd, kernel):
    if _dtype_of(ad, bd).kind == "b":
        raise _not_implemented(kernel, np.dtype(bool))


class FmodBackward0(_Binary):
    """Number other."""

    __slots__ = ()

    def backward(self, g):
        return (g, None)


class _QuotientBackward(_Binary):
    """a - q * b for a quotient q that is piecewise constant: the gradient to a is g, to b
    -g * q. `quotient(m, a, b)` says which q (fmod truncates, remainder floors)."""

    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        gb = None
        if self.needs_grad(1):
            ad, bd = a._data, b._data
            gb = self.reduce(-g * const(self.quotient(xp(ad), ad, bd)), 1)
        return (self.reduce(g, 0) if self.needs_grad(0) else None, gb)


class FmodBackward1(_QuotientBackward):
    __slots__ = ()

    @staticmethod
    def quotient(m, a, b):
        return m.trunc(a / b)


def fmod(input, other):
    ad, bd = _pair("fmod", input, other, _OTHER_NUMBER)
    _integer_kernel("fmod", ad, bd, "fmod_cpu")
    _no_zero_divisor(ad, bd)
    out = _run(lambda x, y: xp(x).fmod(x, y), ad, bd)
    if isinstance(other, Tensor):
        return _record(out, FmodBackward1, input, other, ad, bd, (input, other))
    return _record(out, FmodBackward0, input, other, ad, bd)


def _remainder(x, y):
    """The sign of the divisor, as Python's %; for floats fmod corrected, so -0.0 stays -0.0
    as in PyTorch (numpy's remainder gives +0.0)."""
    m = xp(x if hasattr(x, "dtype") else y)
    if _dtype_of(x, y).kind != "f":
        return m.remainder(x, y)
    r = m.fmod(x, y)
    return m.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


class RemainderBackward0(FmodBackward0):
    """Number other."""

    __slots__ = ()


class RemainderBackward1(_QuotientBackward):
    __slots__ = ()

    @staticmethod
    def quotient(m, a, b):
        return m.floor_divide(a, b)


def remainder(input, other):
    ad, bd = _pair("remainder", input, other, _EITHER_NUMBER_NO_OUT)
    _integer_kernel("remainder", ad, bd, "remainder_cpu")
    _no_zero_divisor(ad, bd)
    out = _run(_remainder, ad, bd)
    if not isinstance(input, Tensor):  # remainder(number, tensor) has no derivative in PyTorch
        return _no_derivative(out, "remainder", input, other)
    if isinstance(other, Tensor):
        return _record(out, RemainderBackward1, input, other, ad, bd, (input, other))
    return _record(out, RemainderBackward0, input, other, ad, bd)


def floor_divide(input, other):
    """Rounds the quotient towards -inf, keeps integer dtypes; no derivative (as PyTorch)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise _combination_error("floor_divide", (input, other), _FLOOR_DIVIDE)
    if not isinstance(other, Tensor) and not is_number(other):
        raise _combination_error("floor_divide", (input, other), _FLOOR_DIVIDE)
    ad, bd = _pair("floor_divide", input, other, _EITHER_NUMBER)
    _integer_kernel("floor_divide", ad, bd, "div_floor_cpu")
    _no_zero_divisor(ad, bd)
    out = _run(lambda x, y: xp(x if hasattr(x, "dtype") else y).floor_divide(x, y), ad, bd)
    return _no_derivative(out, "floor_divide", input, other)


# -- lerp ------------------------------------------------------------------------------------------
_C_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "int64": "long int",
    "int32": "int",
    "uint8": "unsigned char",
    "bool": "bool",
}


def _lerp_dtype_check(input, t, what):
    if t._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"expected dtype {_C_NAMES[input._data.dtype.name]} for `{what}` but got dtype "
            f"{_C_NAMES[t._data.dtype.name]}"
        )


class LerpBackward0(Node):
    """Number weight."""

    __slots__ = ("shapes", "weight")

    def backward(self, g):
        sa, sb = self.shapes[:2]
        w = self.weight
        return (
            sum_to(g * (1 - w), sa) if self.needs_grad(0) else None,
            sum_to(g * w, sb) if self.needs_grad(1) else None,
        )


class LerpBackward1(Node):
    """Tensor weight."""

    __slots__ = ("shapes",)

    def backward(self, g):
        a, b, w = self.unpack()
        sa, sb, sw = self.shapes
        return (
            sum_to(g * (1 - w), sa) if self.needs_grad(0) else None,
            sum_to(g * w, sb) if self.needs_grad(1) else None,
            sum_to(g * (b - a), sw) if self.needs_grad(2) else None,
        )


def lerp(input, end, weight):
    """input + weight * (end - input), as PyTorch evaluates it (from the nearer end)."""
    if not (
        isinstance(input, Tensor)
        and isinstance(end, Tensor)
        and (isinstance(weight, Tensor) or is_number(weight))
    ):
        raise _combination_error(
            "lerp",
            (input, end, weight),
            (
                "Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
                "Tensor input, Tensor end, Number weight, *, Tensor out = None",
            ),
        )
    _lerp_dtype_check(input, end, "end")
    w_is_tensor = isinstance(weight, Tensor)
    if w_is_tensor and weight._data.ndim:  # PyTorch lets a 0-d weight of another dtype through
        _lerp_dtype_check(input, weight, "weight")
    ad, bd = operands(input, end)
    if ad.dtype.kind != "f":
        raise _not_implemented(
            "lerp_kernel_tensor" if w_is_tensor else "lerp_kernel_scalar", ad.dtype
        )
    m = xp(ad)
    wd = weight._data.astype(ad.dtype, copy=False) if w_is_tensor else weight
    try:
        diff = bd - ad
        if w_is_tensor:
            data = m.where(m.abs(wd) < 0.5, ad + wd * diff, bd - diff * (1 - wd))
        else:
            data = ad + wd * diff if abs(wd) < 0.5 else bd - diff * (1 - wd)
    except ValueError:
        raise _lerp_shapes([ad.shape, bd.shape, np.shape(wd)]) from None
    out = wrap(data.astype(ad.dtype, copy=False))
    if requires_grad(input, end, weight):
        if w_is_tensor:
            node = LerpBackward1((input, end, weight), (input, end, weight))
            node.shapes = (ad.shape, bd.shape, wd.shape)
            node.casts = grad_casts(out, input, end, weight)
        else:
            node = LerpBackward0((input, end))
            node.shapes = (ad.shape, bd.shape)
            node.weight = weight
        track(out, node)
    return out


def _lerp_shapes(shapes):
    """The broadcast error of lerp's shapes: name the first pair that clashes."""
    try:
        np.broadcast_shapes(shapes[0], shapes[1])
    except ValueError:
        return broadcast_error(shapes[0], shapes[1])
    return broadcast_error(np.broadcast_shapes(shapes[0], shapes[1]), shapes[2])


# -- xlogy, float_power ----------------------------------------------------------------------------
def _xlogy(x, y):
    m = xp(x if hasattr(x, "dtype") else y)
    with np.errstate(all="ignore"):
        r = m.where(x == 0, 0, x * m.log(y))
    return m.where(m.isnan(y), np.nan, r).astype(_dtype_of(x, y), copy=False)


class XlogyBackward0(_Binary):
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


class XlogyBackward1(_Binary):
    """Number self."""

    __slots__ = ("self_number",)

    def backward(self, g):
        (b,) = self.unpack()
        return (None, g * self.self_number / b)


class XlogyBackward2(_Binary):
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
    ad, bd = _to_float(*_pair("xlogy", input, other, _EITHER_NUMBER))
    out = _run(_xlogy, ad, bd)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return _record(out, XlogyBackward0, input, other, ad, bd, (input, other))
    if isinstance(other, Tensor):
        if requires_grad(other):
            node = XlogyBackward1((None, other), (other,))
            node.self_number = input
            node.shapes, node.other = None, None
            track(out, node)
        return out
    return _record(out, XlogyBackward2, input, other, ad, bd, (input,))


def float_power(input, exponent):
    """pow computed in float64, whatever the operands' dtypes."""
    overloads = (
        "Tensor input, Tensor exponent, *, Tensor out = None",
        "Number self, Tensor exponent, *, Tensor out = None",
        "Tensor input, Number exponent, *, Tensor out = None",
    )
    _pair("float_power", input, exponent, overloads)
    if isinstance(input, Tensor):
        input = input.double()
    else:
        input = float(input)
    if isinstance(exponent, Tensor):
        exponent = exponent.double()
    else:
        exponent = float(exponent)
    return pow(input, exponent)


# -- logic (no gradient) ---------------------------------------------------------------------------
def _logical(name, fn):
    def op(input, other):
        ad, bd = _both_tensors(name, input, other)
        return _run(fn, ad != 0, bd != 0)

    op.__name__ = op.__qualname__ = name
    return op


logical_and = _logical("logical_and", lambda x, y: x & y)
logical_or = _logical("logical_or", lambda x, y: x | y)
logical_xor = _logical("logical_xor", lambda x, y: x ^ y)


# -- shifts ----------------------------------------------------------------------------------------
def _shift(name, kernel, left):
    def op(input, other):
        ad, bd = _pair(name, input, other, _EITHER_NUMBER_NO_OUT)
        dt = _dtype_of(ad, bd)
        if dt.kind not in "iu":
            raise _not_implemented(kernel, dt)
        x = ad if hasattr(ad, "dtype") else xp(bd).asarray(ad, dtype=dt)
        bits = dt.itemsize * 8
        m = xp(x)
        # a shift count outside [0, bits) shifts everything out (PyTorch defines it; C does not)
        if hasattr(bd, "dtype"):
            out_of_range = (bd < 0) | (bd >= bits)
            s = m.where(out_of_range, 0, bd).astype(dt)
        else:
            out_of_range = bd < 0 or bd >= bits
            s = dt.type(0 if out_of_range else bd)
        try:
            shifted = x << s if left else x >> s
        except ValueError:
            raise broadcast_error(np.shape(ad), np.shape(bd)) from None
        # what is left once every bit is shifted out: 0, or the sign bits of a right shift
        spill = x >> (bits - 1) if not left and dt.kind == "i" else m.zeros_like(x)
        if hasattr(bd, "dtype"):
            data = m.where(out_of_range, spill, shifted)
        else:
            data = spill if out_of_range else shifted
        return wrap(data.astype(dt, copy=False))

    op.__name__ = op.__qualname__ = name
    return op


bitwise_left_shift = _shift("bitwise_left_shift", "lshift_cpu", True)
bitwise_right_shift = _shift("bitwise_right_shift", "rshift_cpu", False)


# -- methods and operators -------------------------------------------------------------------------
def _operator(fn, reflected=False):
    def op(self, other):
        if not (isinstance(other, Tensor) or is_number(other)):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return op


_TENSOR_ONLY = {
    "atan2",
    "arctan2",
    "hypot",
    "logaddexp",
    "logical_and",
    "logical_or",
    "logical_xor",
}
METHODS = {
    name: _tensor_other_method(globals()[name], name) if name in _TENSOR_ONLY else globals()[name]
    for name in __all__
}
METHODS.update(
    __mod__=_operator(remainder),
    __rmod__=_operator(remainder, True),
    __floordiv__=_operator(floor_divide),
    __rfloordiv__=_operator(floor_divide, True),
    __lshift__=_operator(bitwise_left_shift),
    __rlshift__=_operator(bitwise_left_shift, True),
    __rshift__=_operator(bitwise_right_shift),
    __rrshift__=_operator(bitwise_right_shift, True),
    # the in-place operators go through the name_ methods that INPLACE below creates
    __imod__=lambda self, other: self.remainder_(other),
    __ifloordiv__=lambda self, other: self.floor_divide_(other),
    __ilshift__=lambda self, other: self.bitwise_left_shift_(other),
    __irshift__=lambda self, other: self.bitwise_right_shift_(other),
)
# the bitwise ops of engine/ops/compare.py (functions and operators there) as methods too
_BITWISE = {n: getattr(_compare, n) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")}
METHODS.update(_BITWISE, bitwise_not=_compare.bitwise_not)
# PyTorch's in-place forms (name_): all but logaddexp_
INPLACE = {n: globals()[n] for n in __all__ if n != "logaddexp"}
INPLACE.update(_BITWISE, bitwise_not=_compare.bitwise_not)
FUNCTIONAL = {}
