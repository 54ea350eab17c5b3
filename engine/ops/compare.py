"""Comparisons and the predicates: eq, ne, lt, le, gt, ge (and their operators), isnan, isinf,
isfinite, isclose, allclose. Results without a gradient."""

import numpy as np

from ._binary import operator_method
from ._common import (
    broadcast_error,
    check_tensor,
    operands,
    tensor_arg,
    tensor_other_method,
    type_name,
    wrap,
    xp,
)

__all__ = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "isnan",
    "isinf",
    "isfinite",
    "isclose",
    "allclose",
]


# -- comparisons -----------------------------------------------------------------------------------
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


# -- predicates ------------------------------------------------------------------------------------
def isnan(input):
    return wrap(xp(input._data).isnan(input._data))


def isinf(input):
    return wrap(xp(input._data).isinf(input._data))


def isfinite(input):
    check_tensor("isfinite", input)
    d = input._data
    if d.dtype.kind != "f":
        return wrap(xp(d).ones(d.shape, dtype=bool))
    return wrap(xp(d).isfinite(d))


def _check_tolerance(name, v):
    if v < 0:
        raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (equal infinities are close)."""
    tensor_arg("isclose", input, "input", 1)
    tensor_arg("isclose", other, "other", 2)
    ad, bd = input._data, other._data
    if ad.dtype != bd.dtype:
        raise RuntimeError(f"{type_name(ad.dtype)} did not match {type_name(bd.dtype)}")
    _check_tolerance("rtol", rtol)
    _check_tolerance("atol", atol)
    ad, bd = operands(input, other)  # the device check
    m = xp(ad)
    try:
        close = ad == bd
    except ValueError:
        raise broadcast_error(ad.shape, bd.shape) from None
    if equal_nan and ad.dtype.kind == "f":
        close = close | (m.isnan(ad) & m.isnan(bd))
    if rtol == 0 and atol == 0:
        return wrap(close)
    if ad.dtype.kind != "f":
        ad, bd = ad.astype(np.float32), bd.astype(np.float32)
    with np.errstate(all="ignore"):
        err = m.abs(ad - bd)
        close = close | (m.isfinite(err) & (err <= atol + rtol * m.abs(bd)))
    return wrap(close)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


# -- exports ---------------------------------------------------------------------------------------
METHODS = {name: globals()[name] for name in __all__}
METHODS["isclose"] = tensor_other_method(isclose, "isclose")
METHODS["allclose"] = tensor_other_method(allclose, "allclose")
METHODS.update(
    {f"__{n}__": operator_method(globals()[n]) for n in ("eq", "ne", "lt", "le", "gt", "ge")}
)
INPLACE = {}
FUNCTIONAL = {}
