"""The binary-op framework every two-operand op uses: broadcasting, PyTorch's dtype promotion,
Python numbers where PyTorch takes a Number (and its TypeError where it does not), the node
that sums a broadcast input's gradient back to its shape, and the operator methods' rule (a
foreign operand gives NotImplemented).

`binary` is the hot path of arithmetic (it computes and records in one call); ops that compute
their own arrays take their operands from `pair` or `both_tensors`, then `run` and `record`.
"""

import numpy as np

from ._common import (
    STATE,
    Node,
    Tensor,
    broadcast_error,
    grad_casts,
    is_number,
    not_implemented,
    operands,
    requires_grad,
    tensor_arg,
    track,
    wrap,
)
from .reduce import sum_to


class BinaryNode(Node):
    # shapes: the two input shapes when the op broadcast them (else None); other: the Python
    # number operand, if there was one
    __slots__ = ("shapes", "other")

    def reduce(self, grad, i):
        """The gradient for input i, summed back to its shape if it was broadcast."""
        return grad if self.shapes is None else sum_to(grad, self.shapes[i])


def binary(a, b, compute, node_cls, save, dunder=False):
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


def record(out, node_cls, a, b, ad, bd, saved=()):
    """Attach node_cls to out when a or b needs grad; the node learns the broadcast shapes."""
    if requires_grad(a, b):
        node = node_cls((a, b), saved)
        sa, sb = np.shape(ad), np.shape(bd)
        node.shapes = None if sa == sb else (sa, sb)
        node.other = b if not isinstance(b, Tensor) else None
        node.casts = grad_casts(out, a, b)
        track(out, node)
    return out


def run(fn, ad, bd):
    try:
        return wrap(fn(ad, bd))
    except ValueError:
        raise broadcast_error(np.shape(ad), np.shape(bd)) from None


# -- operands --------------------------------------------------------------------------------------
def combination_error(name, args, overloads):
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


TENSOR_OR_NUMBER = ("Tensor input, Tensor other, *, Tensor out = None",)


OTHER_NUMBER = (*TENSOR_OR_NUMBER, "Tensor input, Number other, *, Tensor out = None")


EITHER_NUMBER = (
    *TENSOR_OR_NUMBER,
    "Number self, Tensor other, *, Tensor out = None",
    "Tensor input, Number other, *, Tensor out = None",
)


EITHER_NUMBER_NO_OUT = (
    *TENSOR_OR_NUMBER,
    "Number self, Tensor other",
    "Tensor input, Number other, *, Tensor out = None",
)


def pair(name, a, b, overloads):
    """The promoted arrays of a binary op; a Python number is allowed where `overloads` has a
    Number, and stays a Python number (numpy then keeps the tensor's dtype)."""
    a_num, b_num = is_number(a), is_number(b)
    number_self = any(sig.startswith("Number self") for sig in overloads)
    ok = (isinstance(a, Tensor) or (a_num and number_self)) and (isinstance(b, Tensor) or b_num)
    if not ok or (a_num and b_num):
        raise combination_error(name, (a, b), overloads)
    if isinstance(a, Tensor):
        return operands(a, b)
    bd, ad = operands(b, a)
    return ad, bd


def both_tensors(name, a, b):
    tensor_arg(name, a, "input", 1)
    tensor_arg(name, b, "other", 2)
    return operands(a, b)


def dtype_of(ad, bd):
    return (ad if hasattr(ad, "dtype") else bd).dtype


def to_float(ad, bd):
    """Integer and bool operands compute in float32, PyTorch's default float."""
    if dtype_of(ad, bd).kind == "f":
        return ad, bd
    f = np.float32
    return (
        ad.astype(f) if hasattr(ad, "dtype") else float(ad),
        bd.astype(f) if hasattr(bd, "dtype") else float(bd),
    )


def float_only(name, ad, bd):
    dt = dtype_of(ad, bd)
    if dt.kind != "f":
        raise not_implemented(f"{name}_cpu", dt)


# -- methods and operators -------------------------------------------------------------------------
def operator_method(fn, reflected=False):
    def op(self, other):
        if not (isinstance(other, Tensor) or is_number(other)):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return op
