"""Division: div (true, floor and trunc rounding), reciprocal, floor_divide, fmod, remainder,
and the operators / // % with their reflected and in-place forms.

Integer division by zero is PyTorch's error, not numpy's 0. The rounded quotients are piecewise
constant: their gradients are zero, and fmod's and remainder's gradient to the divisor takes the
quotient as a constant.
"""

import operator

import numpy as np

from ..autograd.grad_mode import no_grad
from ._binary import (
    EITHER_NUMBER,
    EITHER_NUMBER_NO_OUT,
    OTHER_NUMBER,
    TENSOR_OR_NUMBER,
    BinaryNode,
    binary,
    combination_error,
    dtype_of,
    operator_method,
    pair,
    record,
    run,
)
from ._common import (
    Node,
    Tensor,
    const,
    is_number,
    no_derivative,
    not_implemented,
    operands,
    requires_grad,
    track,
    wrap,
    xp,
)
from ._unary import unary
from .arithmetic import mul

__all__ = [
    "div",
    "divide",
    "true_divide",
    "reciprocal",
    "floor_divide",
    "fmod",
    "remainder",
]


# -- div ------------------------------------------------------------------------------------------
class DivBackward0(BinaryNode):
    __slots__ = ()

    def backward(self, g):
        if self.other is not None:
            return (g / self.other, None)
        a, b = self.unpack()
        return (
            self.reduce(g / b, 0) if self.needs_grad(0) else None,
            self.reduce(-g * a / (b * b), 1) if self.needs_grad(1) else None,
        )


def _true_divide(x, y):
    r = x / y
    if r.dtype == np.float64 and x.dtype.kind in "iub" and getattr(y, "dtype", None) != np.float64:
        r = r.astype(np.float32)  # PyTorch divides integers into the default float dtype
    return r


class DivBackward2(Node):
    """div of two tensors with a rounding mode: piecewise constant, so zero gradients."""

    __slots__ = ("in_shapes",)

    def backward(self, g):
        return tuple(
            g.new_zeros(shape) if self.needs_grad(i) else None
            for i, shape in enumerate(self.in_shapes)
        )


class DivBackward3(DivBackward2):
    """div by a number with a rounding mode."""

    __slots__ = ()


def div(input, other, *, rounding_mode=None):
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        with no_grad():
            q = binary(input, other, _true_divide, DivBackward0, False)._data
            q = xp(q).floor(q) if rounding_mode == "floor" else xp(q).trunc(q)
            kind = operands(input, other)[0].dtype
            out = wrap(q.astype(kind) if kind.kind in "iu" else q)
        if out._data.dtype.kind == "f" and requires_grad(input, other):
            if isinstance(other, Tensor):
                node = DivBackward2((input, other))
                node.in_shapes = (input._data.shape, other._data.shape)
            else:
                node = DivBackward3((input,))
                node.in_shapes = (input._data.shape,)
            track(out, node)
        return out
    if input._data.dtype.kind == "f":
        return binary(input, other, operator.truediv, DivBackward0, True)
    return binary(input, other, _true_divide, DivBackward0, True)


def rdiv(input, number):
    """number / input: PyTorch writes it as reciprocal(input) * number."""
    return mul(reciprocal(input), number)


divide = true_divide = div


class ReciprocalBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (-g * y * y,)


def reciprocal(input):
    return unary(input, _np_reciprocal, ReciprocalBackward0, True)


def _np_reciprocal(d):
    return 1 / d


# -- fmod, remainder, floor_divide -----------------------------------------------------------------
_FLOOR_DIVIDE = (*TENSOR_OR_NUMBER, "Tensor input, Number other")


def _no_zero_divisor(ad, bd):
    """Integer division by zero is an error in PyTorch (numpy would give 0)."""
    if dtype_of(ad, bd).kind in "iub" and bool(
        (bd == 0).any() if hasattr(bd, "dtype") else bd == 0
    ):
        raise RuntimeError("ZeroDivisionError")


def _integer_kernel(name, ad, bd, kernel):
    if dtype_of(ad, bd).kind == "b":
        raise not_implemented(kernel, np.dtype(bool))


class FmodBackward0(BinaryNode):
    """Number other."""

    __slots__ = ()

    def backward(self, g):
        return (g, None)


class _QuotientBackward(BinaryNode):
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
    ad, bd = pair("fmod", input, other, OTHER_NUMBER)
    _integer_kernel("fmod", ad, bd, "fmod_cpu")
    _no_zero_divisor(ad, bd)
    out = run(lambda x, y: xp(x).fmod(x, y), ad, bd)
    if isinstance(other, Tensor):
        return record(out, FmodBackward1, input, other, ad, bd, (input, other))
    return record(out, FmodBackward0, input, other, ad, bd)


def _remainder(x, y):
    """The sign of the divisor, as Python's %; for floats fmod corrected, so -0.0 stays -0.0
    as in PyTorch (numpy's remainder gives +0.0)."""
    m = xp(x if hasattr(x, "dtype") else y)
    if dtype_of(x, y).kind != "f":
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
    ad, bd = pair("remainder", input, other, EITHER_NUMBER_NO_OUT)
    _integer_kernel("remainder", ad, bd, "remainder_cpu")
    _no_zero_divisor(ad, bd)
    out = run(_remainder, ad, bd)
    if not isinstance(input, Tensor):  # remainder(number, tensor) has no derivative in PyTorch
        return no_derivative(out, "remainder", input, other)
    if isinstance(other, Tensor):
        return record(out, RemainderBackward1, input, other, ad, bd, (input, other))
    return record(out, RemainderBackward0, input, other, ad, bd)


def floor_divide(input, other):
    """Rounds the quotient towards -inf, keeps integer dtypes; no derivative (as PyTorch)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise combination_error("floor_divide", (input, other), _FLOOR_DIVIDE)
    if not isinstance(other, Tensor) and not is_number(other):
        raise combination_error("floor_divide", (input, other), _FLOOR_DIVIDE)
    ad, bd = pair("floor_divide", input, other, EITHER_NUMBER)
    _integer_kernel("floor_divide", ad, bd, "div_floor_cpu")
    _no_zero_divisor(ad, bd)
    out = run(lambda x, y: xp(x if hasattr(x, "dtype") else y).floor_divide(x, y), ad, bd)
    return no_derivative(out, "floor_divide", input, other)


# -- operators: like the functions, but a foreign operand gives NotImplemented (Python's rule) ---
def __truediv__(a, b):  # noqa: N807
    if a._data.dtype.kind == "f":
        return binary(a, b, operator.truediv, DivBackward0, True, True)
    return binary(a, b, _true_divide, DivBackward0, True, True)


def __rtruediv__(a, b):  # noqa: N807
    return rdiv(a, b) if is_number(b) else NotImplemented


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS.update(
    __truediv__=__truediv__,
    __rtruediv__=__rtruediv__,
    __mod__=operator_method(remainder),
    __rmod__=operator_method(remainder, True),
    __floordiv__=operator_method(floor_divide),
    __rfloordiv__=operator_method(floor_divide, True),
    # the in-place operators go through the name_ methods that INPLACE below creates
    __imod__=lambda self, other: self.remainder_(other),
    __ifloordiv__=lambda self, other: self.floor_divide_(other),
)
INPLACE = {n: globals()[n] for n in ("div", "true_divide", "floor_divide", "fmod", "remainder")}
INPLACE_OPERATORS = {"__itruediv__": "div"}
FUNCTIONAL = {}
