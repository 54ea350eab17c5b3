"""What every op module shares: operand promotion, PyTorch's argument checks and error wording,
the node of an op without a derivative."""

import numpy as np

from .._device import xp
from .._dtype import from_numpy, result_type, scalar_result
from .._tensor import Tensor, wrap, wrap_dim
from ..autograd.grad_mode import STATE
from ..autograd.graph import Node

__all__ = [
    "Node",
    "STATE",
    "Tensor",
    "wrap",
    "wrap_dim",
    "xp",
    "operands",
    "broadcast_error",
    "float_data",
    "track",
    "requires_grad",
    "const",
    "dims_of",
    "is_number",
    "grad_casts",
    "check_tensor",
    "tensor_arg",
    "type_name",
    "not_implemented",
    "tensor_other_method",
    "NotImplementedBackward",
    "no_derivative",
]

_NUMBER = (int, float)  # bool is an int


def is_number(x):
    return isinstance(x, (int, float, np.generic))


def track(out, node):
    out.grad_fn = node
    out._requires_grad = True
    return out


def requires_grad(*args):
    """Whether an op on these arguments records a node: grad mode on and some input needs grad."""
    return STATE.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args)


def const(array):
    """A tensor for a constant of a backward formula (a mask, a one-hot): never requires grad."""
    return wrap(array)


def float_data(x):
    """x's array, as float32 when it holds integers or bools (PyTorch's unary float ops do that)."""
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(np.float32)


def grad_casts(out, *inputs):
    """Per input, the dtype its gradient must be cast back to when the op promoted it (None where
    no cast is needed); None when nothing was promoted. The backward engine applies it."""
    dt = out._data.dtype
    casts = tuple(
        x.dtype
        if isinstance(x, Tensor)
        and x._requires_grad
        and x._data.dtype != dt
        and x._data.dtype.kind == "f"
        else None
        for x in inputs
    )
    return casts if any(c is not None for c in casts) else None


def operands(a, b):
    """The arrays of a binary op's operands, promoted as PyTorch promotes. `b` may be a number."""
    ad = a._data
    if isinstance(b, Tensor):
        bd = b._data
        if ad.dtype != bd.dtype:
            dt = result_type(ad, bd)
            ad, bd = ad.astype(dt, copy=False), bd.astype(dt, copy=False)
        if ad.__class__ is not bd.__class__:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{b.device if ad.__class__ is np.ndarray else a.device} and cpu!"
            )
        return ad, bd
    if isinstance(b, np.generic):
        b = b.item()
    if not isinstance(b, _NUMBER):
        raise TypeError(f"argument 'other' must be Tensor or Number, not {type(b).__name__}")
    if ad.dtype.kind != "f":
        ad = ad.astype(scalar_result(ad.dtype, b), copy=False)
        if ad.dtype.kind in "iu" and type(b) is int:
            info = np.iinfo(ad.dtype)
            if not info.min <= b <= info.max:  # PyTorch wraps the number to the tensor's dtype
                b = np.asarray(b if b <= np.iinfo(np.int64).max else b - 2**64, np.int64)
                b = b.astype(ad.dtype).item()
    return ad, b


def broadcast_error(sa, sb):
    """PyTorch's message for shapes that do not broadcast (it names the rightmost clash)."""
    sa, sb = tuple(sa), tuple(sb)
    n = max(len(sa), len(sb))
    for i in range(n - 1, -1, -1):
        off = n - 1 - i
        x = sa[len(sa) - 1 - off] if off < len(sa) else 1
        y = sb[len(sb) - 1 - off] if off < len(sb) else 1
        if x != y and x != 1 and y != 1:
            return RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b "
                f"({y}) at non-singleton dimension {i}"
            )
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


def dims_of(dim, ndim):
    """A reduction's dims as a sorted tuple of non-negative ints; None or () means all. A 0-d
    tensor accepts dim 0 and -1 (as PyTorch does) and has no axis to reduce."""
    if dim is None:
        return tuple(range(ndim))
    if ndim == 0:
        dims = [wrap_dim(d, 0) for d in (dim if isinstance(dim, (list, tuple)) else (dim,))]
        if len(dims) > 1:
            raise RuntimeError("dim 0 appears multiple times in the list of dims")
        return ()
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        dims = tuple(sorted(wrap_dim(d, ndim) for d in dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        return dims
    return (wrap_dim(dim, ndim),)


# -- arguments and PyTorch's messages about them ---------------------------------------------------
def check_tensor(name, x):
    tensor_arg(name, x, "input", 1)


def tensor_arg(name, x, arg, pos):
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def type_name(dtype):
    """PyTorch's short scalar-type name in kernel messages: Float, Double, Long, Bool..."""
    return from_numpy(dtype).legacy_name[:-6]


def not_implemented(kernel, dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(dtype)}'")


def tensor_other_method(fn, name):
    """The method form of an op that takes tensors only: PyTorch counts `other` as position 1."""

    def method(self, other, *args, **kwargs):
        tensor_arg(name, other, "other", 1)
        return fn(self, other, *args, **kwargs)

    method.__name__ = name
    return method


# -- ops without a derivative ----------------------------------------------------------------------
class NotImplementedBackward(Node):
    """PyTorch's grad_fn for an op with no derivative: recorded, but backward raises."""

    __slots__ = ("op",)

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, g):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


NotImplementedBackward.__name__ = NotImplementedBackward.__qualname__ = "NotImplemented"


def no_derivative(out, op, a, b):
    if requires_grad(a, b):
        node = NotImplementedBackward((a, b))
        node.op = op
        track(out, node)
    return out
