"""The activation functions of torch.nn.functional: relu (split over the threads when large),
leaky_relu, sigmoid (with its fused backward), gelu, silu, the elu family, softplus,
hardtanh/relu6, the hard- and log-sigmoids, mish, glu, prelu, softsign, tanhshrink, softmin and
normalize. tanh lives with the hyperbolic functions in trig.py.

Each forward is computed on arrays; each backward is written with engine ops, so a create_graph
backward differentiates it again. Ops that PyTorch writes as a composite (softsign, tanhshrink,
softmin, normalize) are composites here too, so their grad_fn is the same node as PyTorch's.
"""

import math
import warnings

import numpy as np

from .. import _threads
from .._views import inplace
from . import _fused_kernels, _special
from ._common import (
    STATE,
    Node,
    const,
    dims_of,
    float_data,
    not_implemented,
    requires_grad,
    track,
    wrap,
    wrap_dim,
    xp,
)
from ._unary import unary
from .select import where
from .shape import cat
from .softmax import softmax

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _float_only(input, kernel):
    """input's array; PyTorch's kernels refuse integer and bool tensors with this message."""
    d = input._data
    if d.dtype.kind != "f":
        raise not_implemented(kernel, d.dtype)
    return d


def _inplace(input, op):
    """Run the out-of-place op and write its result into input (see engine/_views.py)."""
    return inplace(input, op)


def _record(out, node_cls, inputs, saved, **attrs):
    if requires_grad(*inputs):
        node = node_cls(inputs, saved)
        for k, v in attrs.items():
            setattr(node, k, v)
        track(out, node)
    return out


def _mask(cond, like):
    """A constant 0/1 tensor of `like`'s dtype: where a piecewise derivative takes a branch."""
    return const(cond.astype(like._data.dtype))


# -- relu, leaky_relu, sigmoid ------------------------------------------------------------------
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
        if gd.dtype == yd.dtype and _threads.can_split(gd, yd):
            return (wrap(_threads.elementwise(_relu_grad, np.empty(gd.shape, gd.dtype), gd, yd)),)
        return (wrap(gd * (yd != 0)),)  # one pass, the mask stays boolean


def _relu_grad(out, g, y):
    if _fused_kernels.takes(out, g, y):  # the same bits in one pass, without a bool mask
        _fused_kernels.kernels.relu_grad(g, y, out)
    else:
        np.multiply(g, y != 0, out=out)


def _relu(out, d):
    if _fused_kernels.takes(out, d):  # numpy's maximum against a scalar is 4x slower
        _fused_kernels.kernels.relu(d, out)
    else:
        np.maximum(d, 0, out=out)


def relu(input):
    d = input._data
    if d.dtype == bool:
        data = d
    elif _threads.can_split(d):
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
    return unary(input, _np_sigmoid, SigmoidBackward0, True)


def _np_sigmoid(d):
    m = xp(d)
    e = m.exp(-d)
    if d.ndim == 0:
        return 1 / (1 + e)
    e += 1
    return m.reciprocal(e, out=e)


# -- gelu -----------------------------------------------------------------------------------------
def _gelu_derivative(d, approximate, cdf=None):
    """gelu'(d) on an array; cdf, Phi(d), when the forward already has it."""
    m = xp(d)
    if approximate == "tanh":
        t = m.tanh(_SQRT_2_OVER_PI * (d + _GELU_C * d * d * d))
        du = _SQRT_2_OVER_PI * (1 + 3 * _GELU_C * d * d)
        return 0.5 * (1 + t) + 0.5 * d * (1 - t * t) * du
    if cdf is None:
        cdf = _special.normal_cdf(d)
    out = m.empty_like(d)  # an array even for a 0-d d
    if d.size >= _threads.MIN_WORK and d.dtype == cdf.dtype and _threads.can_split(d, cdf):
        return _threads.elementwise(_gelu_derivative_erf, out, d, cdf)
    return _gelu_derivative_erf(out, d, cdf)


def _gelu_derivative_erf(out, d, cdf):
    """d * exp(-d^2 / 2) / sqrt(2 pi) + cdf, written into out."""
    m = xp(d)
    if _fused_kernels.takes(out, d, cdf):  # the steps below in three passes, the same bits
        return _special.gelu_derivative32(out, d, cdf, _INV_SQRT_2PI)
    r = m.multiply(d, d, out=out)
    r *= -0.5
    m.exp(r, out=r)
    r *= _INV_SQRT_2PI
    r *= d
    r += cdf
    return r


class GeluBackward0(Node):
    # cdf: Phi(input) from the forward (a raw array, so the first backward skips another erf;
    # higher orders recompute it inside gelu_backward's own node)
    __slots__ = ("approximate", "cdf")

    def backward(self, g):
        (x,) = self.unpack()
        return (gelu_backward(g, x, self.approximate, _cdf=self.cdf),)


def gelu_backward(grad_output, input, approximate="none", *, _cdf=None):
    """grad_output * gelu'(input), one op whose own node differentiates it again."""
    gd = grad_output._data
    deriv = _gelu_derivative(input._data, approximate, _cdf)
    if deriv.shape == gd.shape and deriv.dtype == gd.dtype and deriv.__class__ is gd.__class__:
        deriv *= gd  # the derivative is a fresh array
    else:
        deriv = gd * deriv
    out = wrap(deriv)
    return _record(
        out,
        GeluBackwardBackward0,
        (grad_output, input),
        (grad_output, input),
        approximate=approximate,
    )


class GeluBackwardBackward0(Node):
    __slots__ = ("approximate",)

    def backward(self, gg):
        g, x = self.unpack()
        gg_g = gelu_backward(gg, x, self.approximate) if self.needs_grad(0) else None
        gg_x = None
        if self.needs_grad(1):
            if self.approximate == "tanh":
                k, c = _SQRT_2_OVER_PI, _GELU_C
                t = ((x + x * x * x * c) * k).tanh()
                du = (x * x * (3 * c) + 1) * k
                second = (1 - t * t) * (du + x * 0.5 * (x * (6 * k * c) - t * du * du * 2))
            else:
                second = (x * x * -0.5).exp() * _INV_SQRT_2PI * (2 - x * x)
            gg_x = gg * g * second
        return (gg_g, gg_x)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    d = _float_only(input, "GeluKernelImpl")
    m = xp(d)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (d + _GELU_C * d * d * d)
        data = 0.5 * d * (1 + m.tanh(inner))
        cdf = None
    else:
        data, cdf = _special.gelu_parts(d)
    return _record(wrap(data), GeluBackward0, (input,), (input,), approximate=approximate, cdf=cdf)


# -- silu, mish -----------------------------------------------------------------------------------
class SiluBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        s = x.sigmoid()
        return (g * s * (1 + x * (1 - s)),)


def _sigmoid_array(d):
    m = xp(d)
    e = m.exp(-m.abs(d))  # never overflows
    return m.where(d >= 0, 1 / (1 + e), e / (1 + e))


def silu(input, inplace=False):
    if inplace:
        return _inplace(input, silu)
    d = _float_only(input, "silu_cpu")
    return _record(wrap(d * _sigmoid_array(d)), SiluBackward0, (input,), (input,))


class MishBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        tsp = softplus(x).tanh()
        return (g * (tsp + x * x.sigmoid() * (1 - tsp * tsp)),)


def _softplus_array(d):
    m = xp(d)
    return m.maximum(d, 0) + m.log1p(m.exp(-m.abs(d)))


def mish(input, inplace=False):
    if inplace:
        return _inplace(input, mish)
    d = _float_only(input, "mish_cpu")
    data = d * xp(d).tanh(_softplus_array(d))
    return _record(wrap(data), MishBackward0, (input,), (input,))


# -- elu, selu, celu ------------------------------------------------------------------------------
class EluBackward0(Node):
    """PyTorch's one elu kernel: x > 0 ? scale*x : alpha*scale*(exp(input_scale*x) - 1)."""

    __slots__ = ("alpha", "scale", "input_scale")

    def backward(self, g):
        (x,) = self.unpack()
        neg = (x * self.input_scale).exp() * (self.alpha * self.scale * self.input_scale)
        return (g * where(const(x._data > 0), self.scale, neg),)


class CeluBackward0(EluBackward0):
    __slots__ = ()


class EluBackward1(Node):
    """The in-place forms save the result instead: for x <= 0 the derivative is
    input_scale * (result + alpha * scale)."""

    __slots__ = ("alpha", "scale", "input_scale")
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        neg = (y + self.alpha * self.scale) * self.input_scale
        return (g * where(const(y._data > 0), self.scale, neg),)


class CeluBackward1(EluBackward1):
    __slots__ = ()


def _elu(input, alpha, scale, input_scale, node_cls):
    d = _float_only(input, "elu_cpu")
    m = xp(d)
    data = m.where(d > 0, d * scale, m.expm1(m.minimum(d, 0) * input_scale) * (alpha * scale))
    out = wrap(data.astype(d.dtype, copy=False))
    saved = (out.detach(),) if node_cls.saves_output else (input,)
    return _record(
        out, node_cls, (input,), saved, alpha=alpha, scale=scale, input_scale=input_scale
    )


def elu(input, alpha=1.0, inplace=False):
    if inplace:
        return elu_(input, alpha)
    return _elu(input, alpha, 1.0, 1.0, EluBackward0)


def elu_(input, alpha=1.0):
    return _inplace(input, lambda s: _elu(s, alpha, 1.0, 1.0, EluBackward1))


def selu(input, inplace=False):
    if inplace:
        return selu_(input)
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward0)


def selu_(input):
    return _inplace(input, lambda s: _elu(s, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward1))


def _celu_check(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def celu(input, alpha=1.0, inplace=False):
    if inplace:
        return celu_(input, alpha)
    _celu_check(alpha)
    return _elu(input, alpha, 1.0, 1.0 / alpha, CeluBackward0)


def celu_(input, alpha=1.0):
    _celu_check(alpha)
    return _inplace(input, lambda s: _elu(s, alpha, 1.0, 1.0 / alpha, CeluBackward1))


# -- softplus, logsigmoid -------------------------------------------------------------------------
class SoftplusBackward0(Node):
    __slots__ = ("beta", "threshold")

    def backward(self, g):
        (x,) = self.unpack()
        linear = const(x._data * self.beta > self.threshold)
        return (g * where(linear, 1.0, (x * self.beta).sigmoid()),)


def softplus(input, beta=1.0, threshold=20.0):
    d = _float_only(input, "softplus_cpu")
    m = xp(d)
    bx = d * beta
    linear = bx > threshold
    # the exp is taken of values clipped to the threshold: the linear lanes discard it anyway
    soft = m.log1p(m.exp(m.minimum(bx, threshold))) / beta
    data = m.where(linear, d, soft).astype(d.dtype, copy=False)
    return _record(
        wrap(data), SoftplusBackward0, (input,), (input,), beta=beta, threshold=threshold
    )


class LogSigmoidBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * (-x).sigmoid(),)


def logsigmoid(input):
    d = _float_only(input, "log_sigmoid_cpu")
    m = xp(d)
    data = m.minimum(d, 0) - m.log1p(m.exp(-m.abs(d)))
    return _record(wrap(data), LogSigmoidBackward0, (input,), (input,))


# -- hardtanh, relu6, hardsigmoid, hardswish ------------------------------------------------------
class HardtanhBackward0(Node):
    """The gradient passes strictly inside (min_val, max_val)."""

    __slots__ = ("min_val", "max_val")

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        return (g * _mask((d > self.min_val) & (d < self.max_val), g),)


def _hardtanh(input, min_val, max_val):
    d = input._data
    data = xp(d).clip(d, min_val, max_val).astype(d.dtype, copy=False)
    return _record(
        wrap(data), HardtanhBackward0, (input,), (input,), min_val=min_val, max_val=max_val
    )


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return _hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _inplace(input, lambda s: _hardtanh(s, min_val, max_val))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


class HardsigmoidBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        return (g * _mask((d > -3) & (d < 3), g) * (1 / 6),)


def hardsigmoid(input, inplace=False):
    if inplace:
        return _inplace(input, hardsigmoid)
    d = _float_only(input, "hardsigmoid_cpu")
    data = xp(d).clip(d + 3, 0, 6) / 6
    return _record(wrap(data.astype(d.dtype, copy=False)), HardsigmoidBackward0, (input,), (input,))


class HardswishBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        d = x._data
        middle = _mask((d >= -3) & (d <= 3), g)
        return (g * (middle * (x / 3 + 0.5) + _mask(d > 3, g)),)


def hardswish(input, inplace=False):
    if inplace:
        return _inplace(input, hardswish)
    d = _float_only(input, "hardswish_cpu")
    data = d * xp(d).clip(d + 3, 0, 6) / 6
    return _record(wrap(data.astype(d.dtype, copy=False)), HardswishBackward0, (input,), (input,))


# -- softsign, tanhshrink, softmin (composites in PyTorch) ----------------------------------------
def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        warnings.warn(
            "Implicit dimension choice for softmin has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=_stacklevel,
        )
        dim = 0 if input._data.ndim in (0, 1, 3) else 1
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


# -- glu, prelu -----------------------------------------------------------------------------------
class GluBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        (x,) = self.unpack()
        half = x._data.shape[self.dim] // 2
        a, b = x.narrow(self.dim, 0, half), x.narrow(self.dim, half, half)
        s = b.sigmoid()
        ga = g * s
        return (cat([ga, ga * a * (1 - s)], self.dim),)


def glu(input, dim=-1):
    d = input._data
    if d.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = wrap_dim(dim, d.ndim)
    if d.shape[dim] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim} is size {d.shape[dim]}"
        )
    d = _float_only(input, "glu_cpu")
    half = d.shape[dim] // 2
    a = d[(slice(None),) * dim + (slice(0, half),)]
    b = d[(slice(None),) * dim + (slice(half, None),)]
    return _record(wrap(a * _sigmoid_array(b)), GluBackward0, (input,), (input,), dim=dim)


class PreluKernelBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        x, w = self.unpack()
        pos = x._data > 0
        wb = _channel_view(w, x._data.ndim)
        gx = gw = None
        if self.needs_grad(0):
            gx = g * where(const(pos), 1.0, wb)
        if self.needs_grad(1):
            contrib = g * x * _mask(~pos, g)
            nd = x._data.ndim
            if w._data.size == 1 or nd < 2:
                gw = contrib.sum().reshape(w._data.shape)
            else:
                gw = contrib.sum([i for i in range(nd) if i != 1])
        return (gx, gw)


def _channel_view(w, ndim):
    """The weight shaped to broadcast along dim 1 (one weight per channel), or as a scalar."""
    if w._data.size == 1 or ndim < 2:
        return w.reshape(())
    return w.reshape((1, -1) + (1,) * (ndim - 2))


def prelu(input, weight):
    if weight._data.ndim > 1:
        raise RuntimeError(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
            f"{weight._data.ndim}"
        )
    d, w = input._data, weight._data
    channels = d.shape[1] if d.ndim >= 2 else 1
    if w.size != 1 and w.size != channels:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{w.size} and channel size = {channels}."
        )
    _float_only(input, "prelu_cpu")
    if w.dtype != d.dtype:
        raise RuntimeError(
            "prelu: Type promoting not supported. Got "
            f"{input.dtype.legacy_name[:-6]} and {weight.dtype.legacy_name[:-6]}"
        )
    if w.size == 1 or d.ndim < 2:
        wb = w.reshape(())
    else:
        wb = w.reshape((1, -1) + (1,) * (d.ndim - 2))
    data = xp(d).where(d > 0, d, wb * d)
    return _record(wrap(data), PreluKernelBackward0, (input, weight), (input, weight))


# -- normalize ------------------------------------------------------------------------------------
class LinalgVectorNormBackward0(Node):
    __slots__ = ("ord", "dims", "keepdim")
    saves_output = True

    def backward(self, g):
        x, norm = self.unpack()
        if not self.keepdim:
            for dim in self.dims:
                g, norm = g.unsqueeze(dim), norm.unsqueeze(dim)
        p, d = self.ord, x._data
        if p == 0:
            return (x * 0,)
        if p == 1:
            return (g * x.sign(),)
        if p == math.inf or p == -math.inf:
            hit = (xp(d).abs(d) == norm._data).astype(d.dtype)
            share = hit / hit.sum(axis=self.dims, keepdims=True)
            return (g * x.sign() * const(share),)
        zero = const(norm._data == 0)
        safe = where(zero, 1.0, norm)  # a zero vector's norm has 0 as its (sub)gradient
        if p == 2:
            return (where(zero, 0.0, g * x / safe),)
        return (where(zero, 0.0, g * x * x.abs() ** (p - 2) / safe ** (p - 1)),)


def vector_norm(input, ord=2, dim=None, keepdim=False):
    """torch.linalg.vector_norm for real floating inputs (what normalize and
    cosine_similarity need)."""
    d = input._data
    m = xp(d)
    dims = dims_of(dim, d.ndim)
    a = m.abs(d)
    if ord == math.inf:
        r = a.max(axis=dims, keepdims=keepdim)
    elif ord == -math.inf:
        r = a.min(axis=dims, keepdims=keepdim)
    elif ord == 0:
        r = (a != 0).sum(axis=dims, keepdims=keepdim).astype(d.dtype)
    elif ord == 1:
        r = a.sum(axis=dims, keepdims=keepdim)
    elif ord == 2:
        r = m.sqrt((d * d).sum(axis=dims, keepdims=keepdim))
    else:
        r = (a**ord).sum(axis=dims, keepdims=keepdim) ** (1.0 / ord)
    out = wrap(m.asarray(r, dtype=d.dtype))
    if STATE.enabled and input._requires_grad:
        node = LinalgVectorNormBackward0((input,), (input, out.detach()))
        node.ord, node.dims, node.keepdim = ord, dims, keepdim
        track(out, node)
    return out


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = vector_norm(input, p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    result = input / denom
    if out is not None:
        out.copy_(result)
        return out
    return result


__all__ = ["relu", "sigmoid", "celu", "celu_", "prelu", "selu", "selu_"]
METHODS = {"relu": relu, "sigmoid": sigmoid, "prelu": prelu}
INPLACE = {"relu": relu, "sigmoid": sigmoid}
FUNCTIONAL = {
    "relu": relu,
    "leaky_relu": leaky_relu,
    "sigmoid": sigmoid,
    "celu": celu,
    "celu_": celu_,
    "elu": elu,
    "elu_": elu_,
    "gelu": gelu,
    "glu": glu,
    "hardsigmoid": hardsigmoid,
    "hardswish": hardswish,
    "hardtanh": hardtanh,
    "hardtanh_": hardtanh_,
    "logsigmoid": logsigmoid,
    "mish": mish,
    "normalize": normalize,
    "prelu": prelu,
    "relu6": relu6,
    "selu": selu,
    "selu_": selu_,
    "silu": silu,
    "softmin": softmin,
    "softplus": softplus,
    "softsign": softsign,
    "tanhshrink": tanhshrink,
}
