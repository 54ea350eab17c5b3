"""Binds the ops onto Tensor as methods and operators, PyTorch's names in one table."""

import numpy as np

from . import _creation, _device, _views
from ._tensor import Tensor, wrap
from .ops import compare, family_modules, linalg, reduce, select, shape, softmax
from .ops import elementwise as ew


def _swap(fn):
    """The reflected form of a binary op: `number op tensor`."""

    def reflected(self, other):
        return fn(wrap(np.asarray(other)) if not isinstance(other, Tensor) else other, self)

    return reflected


def _or_not_implemented(fn):
    def op(self, other):
        if not isinstance(other, (Tensor, int, float, bool, np.generic)):
            return NotImplemented
        return fn(self, other)

    return op


_METHODS = {
    # arithmetic
    "add": ew.add,
    "sub": ew.sub,
    "subtract": ew.sub,
    "mul": ew.mul,
    "multiply": ew.mul,
    "div": ew.div,
    "divide": ew.div,
    "true_divide": ew.div,
    "pow": ew.pow,
    "neg": ew.neg,
    "negative": ew.neg,
    "maximum": select.maximum,
    "minimum": select.minimum,
    "exp": ew.exp,
    "log": ew.log,
    "sqrt": ew.sqrt,
    "abs": ew.abs,
    "sin": ew.sin,
    "cos": ew.cos,
    "tanh": ew.tanh,
    "sigmoid": ew.sigmoid,
    "relu": ew.relu,
    "clamp": ew.clamp,
    "clip": ew.clamp,
    "reciprocal": ew.reciprocal,
    "masked_fill": select.masked_fill,
    "where": lambda self, condition, other: select.where(condition, self, other),
    "eq": compare.eq,
    "ne": compare.ne,
    "lt": compare.lt,
    "le": compare.le,
    "gt": compare.gt,
    "ge": compare.ge,
    "isnan": compare.isnan,
    "isinf": compare.isinf,
    "logical_not": compare.logical_not,
    # reductions
    "sum": reduce.sum,
    "mean": reduce.mean,
    "max": reduce.max,
    "min": reduce.min,
    "amax": reduce.amax,
    "amin": reduce.amin,
    "argmax": reduce.argmax,
    "argmin": reduce.argmin,
    "var": reduce.var,
    "std": reduce.std,
    # softmax family
    "softmax": softmax.softmax,
    "log_softmax": softmax.log_softmax,
    # linear algebra
    "matmul": linalg.matmul,
    "mm": linalg.mm,
    "bmm": linalg.bmm,
    "dot": linalg.dot,
    "mv": linalg.mv,
    "outer": linalg.outer,
    # shapes
    "reshape": shape.reshape,
    "view": shape.view,
    "view_as": shape.view_as,
    "flatten": shape.flatten,
    "unflatten": shape.unflatten,
    "transpose": shape.transpose,
    "swapaxes": shape.transpose,
    "permute": shape.permute,
    "t": shape.t,
    "unsqueeze": shape.unsqueeze,
    "squeeze": shape.squeeze,
    "expand": shape.expand,
    "expand_as": shape.expand_as,
    "broadcast_to": shape.broadcast_to,
    "clone": shape.clone,
    "contiguous": shape.contiguous,
    "select": shape.select,
    "narrow": shape.narrow,
    "__getitem__": shape.getitem,
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

Tensor.T = property(shape.T)
Tensor.mT = property(shape.mT)

# operators
# Operators go straight to the op code (the hot path); a foreign operand gives NotImplemented.
Tensor.__add__ = Tensor.__radd__ = ew.__add__
Tensor.__sub__ = ew.__sub__
Tensor.__rsub__ = ew.__rsub__
Tensor.__mul__ = Tensor.__rmul__ = ew.__mul__
Tensor.__truediv__ = ew.__truediv__
Tensor.__rtruediv__ = ew.__rtruediv__
Tensor.__floordiv__ = _or_not_implemented(lambda a, b: ew.div(a, b, rounding_mode="floor"))
Tensor.__pow__ = ew.__pow__
Tensor.__rpow__ = ew.__rpow__
Tensor.__matmul__ = linalg.matmul
Tensor.__rmatmul__ = _swap(linalg.matmul)
Tensor.__neg__ = ew.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = ew.abs
Tensor.__eq__ = _or_not_implemented(compare.eq)
Tensor.__ne__ = _or_not_implemented(compare.ne)
Tensor.__lt__ = _or_not_implemented(compare.lt)
Tensor.__le__ = _or_not_implemented(compare.le)
Tensor.__gt__ = _or_not_implemented(compare.gt)
Tensor.__ge__ = _or_not_implemented(compare.ge)
Tensor.__and__ = Tensor.__rand__ = compare.bitwise_and
Tensor.__or__ = Tensor.__ror__ = compare.bitwise_or
Tensor.__xor__ = Tensor.__rxor__ = compare.bitwise_xor
Tensor.__invert__ = compare.bitwise_not


# -- in place: each is the out-of-place op written into this tensor's storage ---------------------
Tensor._inplace = _views.inplace
Tensor._check_inplace = _views.check_inplace
Tensor.detach_ = _views.detach_


def _inplace(op):
    def method(self, *args, **kwargs):
        return self._inplace(lambda s, *a: op(s, *a, **kwargs), *args)

    method.__name__ = op.__name__ + "_"
    return method


for _name, _op in {
    "add": ew.add,
    "sub": ew.sub,
    "mul": ew.mul,
    "div": ew.div,
    "pow": ew.pow,
    "clamp": ew.clamp,
    "clip": ew.clamp,
    "neg": ew.neg,
    "exp": ew.exp,
    "log": ew.log,
    "sqrt": ew.sqrt,
    "abs": ew.abs,
    "tanh": ew.tanh,
    "sigmoid": ew.sigmoid,
    "relu": ew.relu,
    "masked_fill": select.masked_fill,
}.items():
    setattr(Tensor, _name + "_", _inplace(_op))

Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_

# -- op families (engine/ops/__init__.py): their methods and in-place forms ------------------
for _family in family_modules():
    for _name, _fn in getattr(_family, "METHODS", {}).items():
        setattr(Tensor, _name, _fn)
    for _name, _fn in getattr(_family, "PROPERTIES", {}).items():
        setattr(Tensor, _name, property(_fn))
    for _name, _op in getattr(_family, "INPLACE", {}).items():
        setattr(Tensor, _name + "_", _inplace(_op))


# -- conversions ----------------------------------------------------------------------------------
def to(self, *args, **kwargs):
    """to(device), to(dtype), to(device, dtype), to(other); dtype changes are differentiable."""
    from . import _dtype

    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    flags = [a for a in args if isinstance(a, bool)]  # to(dtype, non_blocking, copy)
    if len(flags) == 2:
        copy = flags[1]
    args = [a for a in args if not isinstance(a, bool)]
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, _device.device)):
            device = a
        elif a is not None:
            dtype = a
    out = self
    if device is not None:
        target = _device.device(device)
        if target != self.device:
            out = _to_device(out, target)
    if dtype is not None:
        out = shape.to_dtype(out, _dtype.get(dtype), copy=copy and out is self)
    elif copy and out is self:
        out = shape.clone(self)
    return out


class _ToDeviceBackward(shape.ToCopyBackward0):
    __slots__ = ("in_device",)

    def backward(self, g):
        return (_to_device(g, self.in_device),)


_ToDeviceBackward.__name__ = _ToDeviceBackward.__qualname__ = "ToCopyBackward0"


def _to_device(t, target):
    from .autograd.grad_mode import STATE

    out = wrap(_device.move(t._data, target))
    if STATE.enabled and t._requires_grad:
        node = _ToDeviceBackward((t,))
        node.in_device = t.device
        out.grad_fn, out._requires_grad = node, True
    elif t._requires_grad and t.grad_fn is None:
        out._requires_grad = True
    return out


Tensor.to = to
Tensor.cpu = lambda self: to(self, "cpu")
Tensor.cuda = lambda self, device=None: to(
    self, "cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device
)


def _conversion(np_dtype):
    """x.float(), x.long(), ...: a copy in that dtype (x itself when it already has it)."""

    def convert(self, memory_format=None):
        return shape.to_dtype(self, np_dtype)

    return convert


for _name, _np_dtype in {
    "float": np.float32,
    "double": np.float64,
    "half": np.float16,
    "long": np.int64,
    "int": np.int32,
    "bool": np.bool_,
}.items():
    setattr(Tensor, _name, _conversion(_np_dtype))

Tensor.type_as = lambda self, other: shape.to_dtype(self, other.dtype)
Tensor.new_tensor = lambda self, data, dtype=None: _creation.tensor(
    data, dtype or self.dtype, self.device
)


def _new_filled(make):
    """new_zeros / new_ones: the tensor's dtype and device unless given."""

    def new(self, *size, dtype=None, device=None, requires_grad=False, **_layout):
        return make(
            *size,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    return new


Tensor.new_zeros = _new_filled(_creation.zeros)
Tensor.new_ones = _new_filled(_creation.ones)
# random fills and draws: PyTorch's generator and samplers (`_sampling`), `generator=` keyword-only
Tensor.uniform_ = lambda self, a=0.0, b=1.0, *, generator=None: _creation.uniform_(
    self, a, b, generator
)
Tensor.normal_ = lambda self, mean=0.0, std=1.0, *, generator=None: _creation.normal_(
    self, mean, std, generator
)
Tensor.bernoulli_ = lambda self, p=0.5, *, generator=None: _creation.bernoulli_(self, p, generator)
Tensor.bernoulli = lambda self, p=None, *, generator=None: _creation.bernoulli(self, p, generator)
Tensor.exponential_ = lambda self, lambd=1.0, *, generator=None: _creation.exponential_(
    self, lambd, generator
)
Tensor.random_ = lambda self, from_=None, to=None, *, generator=None: _creation.random_(
    self, from_, to, generator
)
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: (
    _creation.multinomial(self, num_samples, replacement, generator)
)
