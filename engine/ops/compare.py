"""Comparisons, logical and bitwise ops, isnan/isinf: results without a gradient."""

import numpy as np

from ._common import (
    broadcast_error,
    operands,
    wrap,
    xp,
)


# -- comparisons and logic (no gradient) ----------------------------------------------------------
def _compare(fn):
    def op(input, other):
        ad, bd = operands(input, other)
        try:
            return wrap(fn(ad, bd))
        except ValueError:
            raise broadcast_error(ad.shape, getattr(bd, "shape", ())) from None

    op.__name__ = fn.__name__
    return op


eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = _compare(np.less)
le = _compare(np.less_equal)
gt = _compare(np.greater)
ge = _compare(np.greater_equal)


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
        raise NotImplementedError(
            f"\"bitwise_not_cpu\" not implemented for '{input.dtype.legacy_name[:-6]}'"
        )
    return wrap(~d)


def logical_not(input):
    return wrap(input._data == 0)


def isnan(input):
    return wrap(xp(input._data).isnan(input._data))


def isinf(input):
    return wrap(xp(input._data).isinf(input._data))
