"""Logical and bitwise ops, shifts included, with the operators & | ^ ~ << >> (reflected and
in-place forms of the shifts). Results without a gradient."""

import numpy as np

from ._binary import EITHER_NUMBER_NO_OUT, both_tensors, dtype_of, operator_method, pair, run
from ._common import broadcast_error, not_implemented, operands, tensor_other_method, wrap, xp

__all__ = [
    "logical_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
]


# -- logical ops -----------------------------------------------------------------------------------
def logical_not(input):
    return wrap(input._data == 0)


def _logical(name, fn):
    def op(input, other):
        ad, bd = both_tensors(name, input, other)
        return run(fn, ad != 0, bd != 0)

    op.__name__ = op.__qualname__ = name
    return op


logical_and = _logical("logical_and", lambda x, y: x & y)


logical_or = _logical("logical_or", lambda x, y: x | y)


logical_xor = _logical("logical_xor", lambda x, y: x ^ y)


# -- bitwise ops -----------------------------------------------------------------------------------
def _logic(name, fn):
    def op(input, other):
        ad, bd = operands(input, other)
        if (
            ad.dtype.kind == "f"
            or getattr(bd, "dtype", np.dtype(int)).kind == "f"
            or isinstance(bd, float)
        ):
            raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Float'")
        return wrap(fn(ad, bd))

    return op


bitwise_and = _logic("bitwise_and", np.bitwise_and)


bitwise_or = _logic("bitwise_or", np.bitwise_or)


bitwise_xor = _logic("bitwise_xor", np.bitwise_xor)


def bitwise_not(input):
    d = input._data
    if d.dtype.kind == "f":
        raise not_implemented("bitwise_not_cpu", d.dtype)
    return wrap(~d)


def _shift(name, kernel, left):
    def op(input, other):
        ad, bd = pair(name, input, other, EITHER_NUMBER_NO_OUT)
        dt = dtype_of(ad, bd)
        if dt.kind not in "iu":
            raise not_implemented(kernel, dt)
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


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS.update(
    {n: tensor_other_method(globals()[n], n) for n in ("logical_and", "logical_or", "logical_xor")}
)
METHODS.update(
    __and__=bitwise_and,
    __rand__=bitwise_and,
    __or__=bitwise_or,
    __ror__=bitwise_or,
    __xor__=bitwise_xor,
    __rxor__=bitwise_xor,
    __invert__=bitwise_not,
    __lshift__=operator_method(bitwise_left_shift),
    __rlshift__=operator_method(bitwise_left_shift, True),
    __rshift__=operator_method(bitwise_right_shift),
    __rrshift__=operator_method(bitwise_right_shift, True),
    # the in-place operators go through the name_ methods that INPLACE below creates
    __ilshift__=lambda self, other: self.bitwise_left_shift_(other),
    __irshift__=lambda self, other: self.bitwise_right_shift_(other),
)
# PyTorch's in-place forms (name_): all but logical_not_
INPLACE = {n: globals()[n] for n in __all__ if n != "logical_not"}
FUNCTIONAL = {}
