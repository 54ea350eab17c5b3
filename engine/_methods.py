"""Binds the op families onto Tensor (methods, operators, properties, in-place forms: what each
module of engine/ops declares), then the conversions (to, cpu, float, type, ...) and the
random fills."""

import numpy as np

from . import _creation, _device, _dtype, _sampling, _views
from ._tensor import Tensor, wrap
from .autograd.grad_mode import STATE
from .ops import family_modules, shape


def _inplace(op):
    def method(self, *args, **kwargs):
        return self._inplace(lambda s, *a: op(s, *a, **kwargs), *args)

    method.__name__ = op.__name__ + "_"
    return method


# -- the op families (engine/ops/__init__.py): functions, operators, properties, in-place forms --
Tensor._inplace = _views.inplace
Tensor._check_inplace = _views.check_inplace
Tensor.detach_ = _views.detach_

for _family in family_modules():
    for _name, _fn in getattr(_family, "METHODS", {}).items():
        setattr(Tensor, _name, _fn)
    for _name, _fn in getattr(_family, "PROPERTIES", {}).items():
        setattr(Tensor, _name, property(_fn))
    for _name, _op in getattr(_family, "INPLACE", {}).items():
        setattr(Tensor, _name + "_", _inplace(_op))
    for _name, _of in getattr(_family, "INPLACE_OPERATORS", {}).items():
        setattr(Tensor, _name, getattr(Tensor, _of + "_"))


# -- conversions ----------------------------------------------------------------------------------
def to(self, *args, **kwargs):
    """to(device), to(dtype), to(device, dtype), to(other); dtype changes are differentiable."""
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
Tensor.char = lambda self, memory_format=None: self.to(_dtype.int8)
Tensor.short = lambda self, memory_format=None: self.to(_dtype.int16)


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type(): the legacy type string; Tensor.type(dtype or string): a cast."""
    if dtype is None:
        dtype = kwargs.pop("dtype", None)
    if dtype is None:
        prefix = "torch.cuda." if self.is_cuda else "torch."
        return prefix + self.dtype.legacy_name
    if isinstance(dtype, str):
        dtype, device = _dtype.from_type_string(dtype)
        out = self if device == self.device.type else self.to(device)
        return out.to(dtype)
    if isinstance(dtype, type):
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return self.to(dtype)


Tensor.type = type_

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
Tensor.uniform_ = lambda self, a=0.0, b=1.0, *, generator=None: _sampling.uniform_(
    self, a, b, generator
)
Tensor.normal_ = lambda self, mean=0.0, std=1.0, *, generator=None: _sampling.normal_(
    self, mean, std, generator
)
Tensor.bernoulli_ = lambda self, p=0.5, *, generator=None: _sampling.bernoulli_(self, p, generator)
Tensor.bernoulli = lambda self, p=None, *, generator=None: _sampling.bernoulli(self, p, generator)
Tensor.exponential_ = lambda self, lambd=1.0, *, generator=None: _sampling.exponential_(
    self, lambd, generator
)
Tensor.random_ = lambda self, from_=None, to=None, *, generator=None: _sampling.random_(
    self, from_, to, generator
)
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: (
    _sampling.multinomial(self, num_samples, replacement, generator)
)
