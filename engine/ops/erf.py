"""The error function family: erf, erfc, erfinv. numpy has none: engine/ops/_special.py
evaluates erf and erfc on arrays (float64 to a few ulp, float32 in float32); on the GPU they go
to cupyx.scipy.special, as erfinv does here."""

import math

import numpy as np

from . import _special
from ._common import Node
from ._unary import float_op
from .exp_log import exp

__all__ = ["erf", "erfc", "erfinv"]


_SQRT_PI = math.sqrt(math.pi)


# numpy has no erf: engine/ops/_special.py evaluates erf and erfc on arrays (float64 to a few
# ulp, float32 in float32); on the GPU it hands them to cupyx.scipy.special, as erfinv does here.
def _np_erf(d):
    return _special.erf(d)


def _np_erfc(d):
    return _special.erfc(d)


def _np_erfinv(d):
    """Winitzki's closed form (to ~2e-3), then two Halley steps (cubic convergence) on erf; for
    |x| > 0.5 the steps solve erfc(y) = 1 - |x| instead, where 1 - |x| is exact."""
    if d.__class__ is not np.ndarray:
        return _special._cupyx_special().erfinv(d)
    x = d.astype(np.float64).reshape(-1)  # 1-d: numpy gives scalars for 0-d results
    ax = np.abs(x)
    c = 1 - ax
    a = 0.147
    with np.errstate(all="ignore"):
        log_term = np.log(c * (1 + ax))
        p = 2 / (math.pi * a) + log_term / 2
        y = np.sqrt(np.sqrt(p * p - log_term / a) - p)
        tail = ax > 0.5
        for _ in range(2):
            # erf(y) - |x|, computed without cancellation
            f = np.where(tail, c - _special.erfc(y), _special.erf(y) - ax)
            step = f / ((2 / _SQRT_PI) * _special.exp_neg_sq(y))
            y = y - step / (1 + y * step)
    y = np.where(ax == 1, np.inf, np.where(ax > 1, np.nan, y))
    return np.copysign(y, x).astype(d.dtype, copy=False).reshape(d.shape)


class ErfBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * (2 / _SQRT_PI) * exp(-x * x),)


class ErfcBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (x,) = self.unpack()
        return (g * (-2 / _SQRT_PI) * exp(-x * x),)


class ErfinvBackward0(Node):
    __slots__ = ()
    saves_output = True

    def backward(self, g):
        (y,) = self.unpack()
        return (g * (_SQRT_PI / 2) * exp(y * y),)


erf = float_op("erf", _np_erf, ErfBackward0)


erfc = float_op("erfc", _np_erfc, ErfcBackward0)


erfinv = float_op("erfinv", _np_erfinv, ErfinvBackward0, True)


METHODS = {name: globals()[name] for name in __all__}
INPLACE = dict(METHODS)
FUNCTIONAL = {}
