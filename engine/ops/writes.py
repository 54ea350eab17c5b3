"""The ops that exist only as writes: fill_, zero_, copy_ and `t[key] = value`.

Each is an out-of-place op with its backward node, run in place by engine/_views.py's `inplace`
(the version counter, the leaf and view checks, CopySlices when written through a view).
"""

from .._tensor import Tensor
from .._views import inplace
from ._common import STATE, Node, broadcast_error, track, wrap, xp
from .reduce import sum_to
from .shape import _index_key, getitem, index_put

__all__ = []


class ZeroBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g.new_zeros(g._data.shape),)


class FillBackward2(ZeroBackward0):
    """fill_ with a number: the old value no longer matters."""

    __slots__ = ()


class FillBackward3(Node):
    """fill_ with a 0-d tensor: every element is that value, so it gets the sum."""

    __slots__ = ()

    def backward(self, g):
        return (
            g.new_zeros(g._data.shape) if self.needs_grad(0) else None,
            g.sum() if self.needs_grad(1) else None,
        )


class CopyBackwards(Node):
    """copy_(src): the old value gets zeros; src gets the gradient summed back to its shape,
    in its own dtype and device."""

    __slots__ = ("src_shape", "src_dtype", "src_device")

    def backward(self, g):
        gs = None
        if self.needs_grad(1):
            gs = sum_to(g, self.src_shape).to(self.src_device, self.src_dtype)
        return (g.new_zeros(g._data.shape) if self.needs_grad(0) else None, gs)


def _filled(input, value):
    d = input._data
    out = wrap(xp(d).full(d.shape, value, d.dtype))
    if STATE.enabled and input._requires_grad:
        track(out, FillBackward2((input,)))
    return out


def _filled_with_tensor(input, value):
    d = input._data
    out = wrap(xp(d).broadcast_to(value._data.astype(d.dtype), d.shape).copy())
    if STATE.enabled and (input._requires_grad or value._requires_grad):
        track(out, FillBackward3((input, value)))
    return out


def _zeroed(input):
    d = input._data
    out = wrap(xp(d).zeros(d.shape, d.dtype))
    if STATE.enabled and input._requires_grad:
        track(out, ZeroBackward0((input,)))
    return out


def _copied(input, src):
    d, sd = input._data, src._data
    try:
        data = xp(d).broadcast_to(sd.astype(d.dtype, copy=False), d.shape).copy()
    except ValueError:
        raise broadcast_error(d.shape, sd.shape) from None
    out = wrap(data)
    if STATE.enabled and (input._requires_grad or src._requires_grad):
        node = CopyBackwards((input, src))
        node.src_shape, node.src_dtype, node.src_device = sd.shape, src.dtype, src.device
        track(out, node)
    return out


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        return inplace(self, _filled_with_tensor, value.to(self.device))
    return inplace(self, _filled, value)


def zero_(self):
    return inplace(self, _zeroed)


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    src = src if src.device == self.device else src.to(self.device)
    return inplace(self, _copied, src)


def setitem(self, key, value):
    """t[key] = value. A basic index (ints, slices) writes through the view t[key], as PyTorch
    does (the base's grad_fn becomes CopySlices); an advanced one is PyTorch's index_put_."""
    if isinstance(value, Tensor) and value.device != self.device:
        value = value.to(self.device)
    _, basic = _index_key(key, self._data)
    if not basic:
        inplace(self, index_put, key, value)
        return
    if not isinstance(value, Tensor):
        value = wrap(xp(self._data).asarray(value, dtype=self._data.dtype))
    copy_(getitem(self, key), value)


METHODS = {"fill_": fill_, "zero_": zero_, "copy_": copy_, "__setitem__": setitem}
