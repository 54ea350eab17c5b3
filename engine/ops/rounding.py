"""Rounding and sign: floor, ceil, round (to decimals too), trunc/fix, frac, sign and sgn.
Piecewise constant, so their gradients are zero (frac's is the identity); integers come back
unchanged, bools are refused as PyTorch refuses them."""

from ._common import STATE, Node, check_tensor, const, not_implemented, track, wrap, xp

__all__ = ["floor", "ceil", "round", "trunc", "fix", "frac", "sign", "sgn"]


def _zeros_like(g):
    d = g._data
    return const(xp(d).zeros_like(d))


class FloorBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (_zeros_like(g),)


class CeilBackward0(FloorBackward0):
    __slots__ = ()


class TruncBackward0(FloorBackward0):
    __slots__ = ()


class RoundBackward0(FloorBackward0):
    __slots__ = ()


class RoundBackward1(FloorBackward0):
    """round with decimals=."""

    __slots__ = ()


class SignBackward0(FloorBackward0):
    __slots__ = ()


class SgnBackward0(FloorBackward0):
    __slots__ = ()


def _piecewise(name, input, fn, node_cls, kernel):
    """A rounding op: integers come back unchanged (a copy), bools are refused."""
    check_tensor(name, input)
    d = input._data
    if d.dtype == bool:
        raise not_implemented(kernel, d.dtype)
    out = wrap(fn(d) if d.dtype.kind == "f" else d.copy())
    if STATE.enabled and input._requires_grad:
        track(out, node_cls((input,)))
    return out


def floor(input):
    return _piecewise("floor", input, lambda d: xp(d).floor(d), FloorBackward0, "floor_vml_cpu")


def ceil(input):
    return _piecewise("ceil", input, lambda d: xp(d).ceil(d), CeilBackward0, "ceil_vml_cpu")


def trunc(input):
    return _piecewise("trunc", input, lambda d: xp(d).trunc(d), TruncBackward0, "trunc_vml_cpu")


fix = trunc


def round(input, *, decimals=None):
    """Half to even, as PyTorch. decimals=None is PyTorch's plain round (RoundBackward0); any
    decimals given, 0 included, is its round.decimals overload (RoundBackward1)."""
    if decimals is None:
        return _piecewise("round", input, lambda d: xp(d).rint(d), RoundBackward0, "round_vml_cpu")
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(
            "round() received an invalid combination of arguments - got (Tensor, "
            f"decimals={type(decimals).__name__}), but expected one of:\n"
            " * (Tensor input, *, Tensor out = None)\n"
            " * (Tensor input, *, int decimals, Tensor out = None)\n"
        )
    check_tensor("round", input)
    if input._data.dtype.kind != "f":
        raise not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", input._data.dtype)
    if decimals == 0:
        return _piecewise("round", input, lambda d: xp(d).rint(d), RoundBackward1, "")
    return _piecewise("round", input, lambda d: _round_decimals(d, decimals), RoundBackward1, "")


def _round_decimals(d, decimals):
    m = xp(d)
    scale = 10.0 ** abs(decimals)  # a Python float: the product keeps d's dtype
    if decimals > 0:
        return m.rint(d * scale) / scale
    return m.rint(d / scale) * scale


def sign(input):
    """-1, 0 or 1 (0 for nan, as PyTorch); bools stay bools, integers keep their dtype."""
    check_tensor("sign", input)
    return _sign(input, SignBackward0)


def sgn(input):
    """sign, for real tensors (PyTorch's sgn differs only for complex ones)."""
    check_tensor("sgn", input)
    return _sign(input, SgnBackward0)


def _sign(input, node_cls):
    d = input._data
    m = xp(d)
    if d.dtype == bool:
        data = d.copy()
    elif d.dtype.kind == "f":
        data = m.sign(d)
        data = m.where(m.isnan(d), 0, data).astype(d.dtype, copy=False)
    else:
        data = m.sign(d)
    out = wrap(data)
    if STATE.enabled and input._requires_grad:
        track(out, node_cls((input,)))
    return out


class FracBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g,)


def frac(input):
    check_tensor("frac", input)
    d = input._data
    if d.dtype.kind != "f":
        raise not_implemented("frac_cpu", d.dtype)
    out = wrap(d - xp(d).trunc(d))
    if STATE.enabled and input._requires_grad:
        track(out, FracBackward0((input,)))
    return out


METHODS = {name: globals()[name] for name in __all__}
INPLACE = dict(METHODS)
FUNCTIONAL = {}
