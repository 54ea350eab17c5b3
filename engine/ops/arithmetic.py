"""Arithmetic: add, sub, mul, neg, abs, copysign, lerp, and the operators + - * (with their
reflected and in-place forms), unary - and abs(). Division lives in division.py, powers in
powers.py.

Each forward sits beside its backward node, the chain rule written with engine ops (so a
create_graph backward can differentiate it again). Broadcast inputs get their gradient summed
back to their own shape (`BinaryNode.reduce`, engine/ops/_binary.py).
"""

import builtins
import operator

import numpy as np

from ._binary import (
    OTHER_NUMBER,
    BinaryNode,
    binary,
    combination_error,
    pair,
    record,
    run,
    to_float,
)
from ._common import (
    STATE,
    Node,
    Tensor,
    broadcast_error,
    const,
    grad_casts,
    is_number,
    not_implemented,
    operands,
    requires_grad,
    track,
    wrap,
    xp,
)
from .reduce import sum_to

__all__ = [
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "neg",
    "negative",
    "abs",
    "copysign",
    "lerp",
]


# -- add, sub -----------------------------------------------------------------------------------
class AddBackward0(BinaryNode):
    __slots__ = ()
    alpha = 1  # set on the node only for add(..., alpha=)

    def backward(self, g):
        gb = None
        if self.needs_grad(1):
            gb = self.reduce(g if self.alpha == 1 else g * self.alpha, 1)
        return (self.reduce(g, 0) if self.needs_grad(0) else None, gb)


class SubBackward0(AddBackward0):
    __slots__ = ()

    def backward(self, g):
        return (
            self.reduce(g, 0) if self.needs_grad(0) else None,
            self.reduce(g * -self.alpha, 1) if self.needs_grad(1) else None,
        )


def add(input, other, *, alpha=1):
    if alpha == 1:
        return binary(input, other, operator.add, AddBackward0, False)
    out = binary(input, other, lambda x, y: x + alpha * y, AddBackward0, False)
    if out.grad_fn is not None:
        out.grad_fn.alpha = alpha
    return out


def sub(input, other, *, alpha=1):
    if input._data.dtype.kind == "b" or (isinstance(other, Tensor) and other._data.dtype == bool):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead."
        )
    if alpha == 1:
        return binary(input, other, operator.sub, SubBackward0, False)
    else:
        out = binary(input, other, lambda x, y: x - alpha * y, SubBackward0, False)
    if out.grad_fn is not None:
        out.grad_fn.alpha = alpha
    return out


class RsubBackward1(BinaryNode):
    __slots__ = ()

    def backward(self, g):
        return (-g, None)


def rsub(input, number):
    """number - input, for a Python number on the left."""
    return binary(input, number, _reversed_sub, RsubBackward1, False)


def _reversed_sub(x, y):
    return y - x


subtract = sub


# -- mul ------------------------------------------------------------------------------------------
class MulBackward0(BinaryNode):
    __slots__ = ()

    def backward(self, g):
        if self.other is not None:
            return (g * self.other, None)
        a, b = self.unpack()
        (na, _), (nb, _) = self.next_functions
        return (
            self.reduce(g * b, 0) if na is not None else None,
            self.reduce(g * a, 1) if nb is not None else None,
        )


def mul(input, other):
    return binary(input, other, operator.mul, MulBackward0, True)


multiply = mul


# -- neg, abs, copysign --------------------------------------------------------------------------
class NegBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (-g,)


def neg(input):
    if input._data.dtype == bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator "
            "instead."
        )
    out = wrap(-input._data)
    if STATE.enabled and input._requires_grad:
        track(out, NegBackward0((input,)))
    return out


negative = neg


class AbsBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * x.sign(),)


def abs(input):
    d = input._data
    out = wrap(xp(d).abs(d))
    if STATE.enabled and input._requires_grad:
        track(out, AbsBackward0((input,), (input,)))
    return out


class CopysignBackward0(BinaryNode):
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
    ad, bd = to_float(*pair("copysign", input, other, OTHER_NUMBER))
    out = run(lambda x, y: xp(x).copysign(x, y), ad, bd)
    cls = CopysignBackward0 if isinstance(other, Tensor) else CopysignBackward1
    return record(out, cls, input, other, ad, bd, (input, out.detach()))


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
        raise combination_error(
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
        raise not_implemented(
            "lerp_kernel_tensor" if w_is_tensor else "lerp_kernel_scalar", ad.dtype
        )
    m = xp(ad)
    wd = weight._data.astype(ad.dtype, copy=False) if w_is_tensor else weight
    try:
        diff = bd - ad
        if w_is_tensor:
            data = m.where(m.abs(wd) < 0.5, ad + wd * diff, bd - diff * (1 - wd))
        else:
            # builtins.abs: a Python number (this module's abs is the op)
            data = ad + wd * diff if builtins.abs(wd) < 0.5 else bd - diff * (1 - wd)
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


# -- operators: like the functions, but a foreign operand gives NotImplemented (Python's rule) ---
def __add__(a, b):  # noqa: N807
    return binary(a, b, operator.add, AddBackward0, False, True)


def __sub__(a, b):  # noqa: N807
    if isinstance(b, Tensor) or a._data.dtype == bool:
        return sub(a, b)
    return binary(a, b, operator.sub, SubBackward0, False, True)


def __rsub__(a, b):  # noqa: N807
    return binary(a, b, _reversed_sub, RsubBackward1, False, True)


def __mul__(a, b):  # noqa: N807
    return binary(a, b, operator.mul, MulBackward0, True, True)


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS.update(
    __add__=__add__,
    __radd__=__add__,
    __sub__=__sub__,
    __rsub__=__rsub__,
    __mul__=__mul__,
    __rmul__=__mul__,
    __neg__=neg,
    __pos__=lambda self: self,
    __abs__=abs,
)
INPLACE = {n: globals()[n] for n in ("add", "sub", "mul", "neg", "abs", "copysign", "lerp")}
INPLACE_OPERATORS = {"__iadd__": "add", "__isub__": "sub", "__imul__": "mul"}
FUNCTIONAL = {}
