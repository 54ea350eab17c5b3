"""Elementwise ops. Each forward sits beside its backward node, the chain rule written with engine
ops (so a create_graph backward can differentiate it again). Broadcast inputs get their gradient
summed back to their own shape by `sum_to`."""

import math
import operator

import numpy as np

from .. import _threads
from ._common import (
    STATE,
    Node,
    Tensor,
    broadcast_error,
    const,
    float_data,
    grad_casts,
    is_number,
    operands,
    requires_grad,
    sum_to,
    track,
    wrap,
    xp,
)
from .select import maximum, minimum


def _binary(a, b, compute, node_cls, save, dunder=False):
    """Run a broadcasting binary op and, when needed, record `node_cls` with the saved operands."""
    ad = a._data
    b_is_tensor = isinstance(b, Tensor)
    promoted = False
    if b_is_tensor and b._data.dtype is ad.dtype and b._data.__class__ is ad.__class__:
        bd = b._data  # the common case needs no promotion
    elif b.__class__ is float and ad.dtype.kind == "f":
        bd = b
    else:
        if dunder and not b_is_tensor and not is_number(b):
            return NotImplemented  # let Python try the other operand, then word the TypeError
        ad, bd = operands(a, b)
        promoted = True
    try:
        data = compute(ad, bd)
    except ValueError:
        raise broadcast_error(ad.shape, getattr(bd, "shape", ())) from None
    out = wrap(data)
    if STATE.enabled and (a._requires_grad or (b_is_tensor and b._requires_grad)):
        # with a Python number as `other`, mul and div need nothing saved (PyTorch's choice too)
        node = node_cls((a, b), (a, b) if save and b_is_tensor else ())
        if b_is_tensor:
            sa, sb = ad.shape, bd.shape
            node.shapes = None if sa == sb else (sa, sb)  # None: nothing was broadcast
            node.other = None
        else:
            node.shapes, node.other = None, b
        if promoted:
            node.casts = grad_casts(out, a, b)
        track(out, node)
    return out


class _BinaryNode(Node):
    # shapes: the two input shapes when the op broadcast them (else None); other: the Python
    # number operand, if there was one
    __slots__ = ("shapes", "other")

    def reduce(self, grad, i):
        """The gradient for input i, summed back to its shape if it was broadcast."""
        return grad if self.shapes is None else sum_to(grad, self.shapes[i])


# -- add, sub -----------------------------------------------------------------------------------
class AddBackward0(_BinaryNode):
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
        return _binary(input, other, operator.add, AddBackward0, False)
    out = _binary(input, other, lambda x, y: x + alpha * y, AddBackward0, False)
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
        return _binary(input, other, operator.sub, SubBackward0, False)
    else:
        out = _binary(input, other, lambda x, y: x - alpha * y, SubBackward0, False)
    if out.grad_fn is not None:
        out.grad_fn.alpha = alpha
    return out


class RsubBackward1(_BinaryNode):
    __slots__ = ()

    def backward(self, g):
        return (-g, None)


def rsub(input, number):
    """number - input, for a Python number on the left."""
    return _binary(input, number, _reversed_sub, RsubBackward1, False)


def _reversed_sub(x, y):
    return y - x


# -- mul, div -------------------------------------------------------------------------------------
class MulBackward0(_BinaryNode):
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
    return _binary(input, other, operator.mul, MulBackward0, True)


class DivBackward0(_BinaryNode):
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
        with _no_grad():
            q = _binary(input, other, _true_divide, DivBackward0, False)._data
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
        return _binary(input, other, operator.truediv, DivBackward0, True)
    return _binary(input, other, _true_divide, DivBackward0, True)


def rdiv(input, number):
    """number / input: PyTorch writes it as reciprocal(input) * number."""
    return mul(reciprocal(input), number)


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


# -- unary ---------------------------------------------------------------------------------------
def _unary(x, fn, node_cls, save_output):
    d = x._data
    if d.dtype.kind != "f":
        d = d.astype(np.float32)  # PyTorch's float ops take integers to the default float
    out = wrap(fn(d))
    if STATE.enabled and x._requires_grad:
        out.grad_fn = node_cls((x,), (out.detach(),) if save_output else (x,))
        out._requires_grad = True
    return out


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


class ExpBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * y,)


def exp(input):
    return _unary(input, _np_exp, ExpBackward0, True)


class LogBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g / x,)


def log(input):
    return _unary(input, _np_log, LogBackward0, False)


class SqrtBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g / (2 * y),)


def sqrt(input):
    return _unary(input, _np_sqrt, SqrtBackward0, True)


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


class SinBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * x.cos(),)


def sin(input):
    return _unary(input, _np_sin, SinBackward0, False)


class CosBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * -x.sin(),)


def cos(input):
    return _unary(input, _np_cos, CosBackward0, False)


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
    return _unary(input, _np_tanh, TanhBackward0, True)


class SigmoidBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (sigmoid_backward(g, y),)


def sigmoid_backward(grad, output):
    """grad * output * (1 - output) as one op."""
    gd, yd = grad._data, output._data
    out = wrap(gd * (yd - yd * yd))
    if STATE.enabled and (grad._requires_grad or output._requires_grad):
        track(out, SigmoidBackwardBackward0((grad, output), (grad, output)))
    return out


class SigmoidBackwardBackward0(Node):
    __slots__ = ()

    def backward(self, gg):
        g, y = self.unpack()
        (ng, _), (ny, _) = self.next_functions
        return (
            gg * y * (1 - y) if ng is not None else None,
            gg * g * (1 - 2 * y) if ny is not None else None,
        )


def sigmoid(input):
    return _unary(input, _np_sigmoid, SigmoidBackward0, True)


class ReciprocalBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (-g * y * y,)


def reciprocal(input):
    return _unary(input, _np_reciprocal, ReciprocalBackward0, True)


class ReluBackward0(Node):
    __slots__ = ()
    saves_output = True

    # y is relu's output: 0, positive or NaN. PyTorch passes the gradient where y <= 0 is
    # false, NaN included, so the mask is y != 0 (not y > 0, which would stop it at a NaN)
    def backward(self, g):
        (y,) = self.unpack()
        if STATE.enabled:  # create_graph: keep it an engine op on g
            return (g * const((y._data != 0).astype(g._data.dtype)),)
        gd, yd = g._data, y._data
        if gd.size >= _threads.MIN_WORK and gd.dtype == yd.dtype and _threads.can_split(gd, yd):
            return (wrap(_threads.elementwise(_relu_grad, np.empty(gd.shape, gd.dtype), gd, yd)),)
        return (wrap(gd * (yd != 0)),)  # one pass, the mask stays boolean


def _relu_grad(out, g, y):
    np.multiply(g, y != 0, out=out)


def _relu(out, d):
    np.maximum(d, 0, out=out)


def relu(input):
    d = input._data
    if d.dtype == bool:
        data = d
    elif d.size >= _threads.MIN_WORK and _threads.can_split(d):
        data = _threads.elementwise(_relu, np.empty(d.shape, d.dtype), d)
    else:
        data = xp(d).maximum(d, 0)
    out = wrap(data)
    if STATE.enabled and input._requires_grad:
        track(out, ReluBackward0((input,), (out.detach(),)))
    return out


class LeakyReluBackward0(Node):
    __slots__ = ("negative_slope",)

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        return (g * const(xp(d).where(d > 0, 1.0, self.negative_slope).astype(d.dtype)),)


def leaky_relu(input, negative_slope=0.01):
    d = float_data(input)
    out = wrap(xp(d).where(d > 0, d, d * negative_slope))
    if STATE.enabled and input._requires_grad:
        node = LeakyReluBackward0((input,), (input,))
        node.negative_slope = negative_slope
        track(out, node)
    return out


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


def _np_exp(d):
    return xp(d).exp(d)


def _np_log(d):
    return xp(d).log(d)


def _np_sqrt(d):
    return xp(d).sqrt(d)


def _np_sin(d):
    return xp(d).sin(d)


def _np_cos(d):
    return xp(d).cos(d)


def _np_tanh(d):
    return xp(d).tanh(d)


def _np_sigmoid(d):
    m = xp(d)
    e = m.exp(-d)
    if d.ndim == 0:
        return 1 / (1 + e)
    e += 1
    return m.reciprocal(e, out=e)


def _np_reciprocal(d):
    return 1 / d


class _no_grad:  # noqa: N801 - a tiny local twin of autograd.no_grad, to avoid an import cycle
    def __enter__(self):
        self.prev, STATE.enabled = STATE.enabled, False

    def __exit__(self, *exc):
        STATE.enabled = self.prev


# -- operators: like the functions, but a foreign operand gives NotImplemented (Python's rule) ---
def __add__(a, b):  # noqa: N807
    return _binary(a, b, operator.add, AddBackward0, False, True)


def __sub__(a, b):  # noqa: N807
    if isinstance(b, Tensor) or a._data.dtype == bool:
        return sub(a, b)
    return _binary(a, b, operator.sub, SubBackward0, False, True)


def __rsub__(a, b):  # noqa: N807
    return _binary(a, b, _reversed_sub, RsubBackward1, False, True)


def __mul__(a, b):  # noqa: N807
    return _binary(a, b, operator.mul, MulBackward0, True, True)


def __truediv__(a, b):  # noqa: N807
    if a._data.dtype.kind == "f":
        return _binary(a, b, operator.truediv, DivBackward0, True, True)
    return _binary(a, b, _true_divide, DivBackward0, True, True)


def __rtruediv__(a, b):  # noqa: N807
    return rdiv(a, b) if is_number(b) else NotImplemented


def __pow__(a, b):  # noqa: N807
    return pow(a, b) if isinstance(b, Tensor) or is_number(b) else NotImplemented


def __rpow__(a, b):  # noqa: N807
    return rpow(a, b) if is_number(b) else NotImplemented
