"""The error function on arrays: erf and erfc (for the erf family, erf.py), the normal CDF
built on the same erf (for gelu, activations.py), and exp(-x*x) without the rounding error of x*x.

numpy has no erf, so on the CPU it is evaluated here from rational approximations fitted for this
module (weighted least squares iterated towards the minimax fit, in 50-digit arithmetic, on
Chebyshev nodes of each interval); each is a handful of whole-array passes, with no loop over
terms or elements:

- float64 (the fitted error is below 1e-17 relative, so results are good to a few ulp):
  |x| < 0.5   erf(x)  = x * P(x^2)                    (degree 8; erfc = 1 - erf)
  0.5..6      erfc(x) = exp(-x^2) * P(x) / Q(x)        (degree 8/8; erf = 1 - erfc)
  >= 6        erfc(x) = exp(-x^2) / x * P(u) / Q(u)    (u = 1/x^2, degree 4/4; erf = 1)
- float32 (and the narrower floats), computed in float32: one rational for all x, with x clipped
  to [-4, 4] where erf rounds to +-1: erf(x) = x * P(x^2) / Q(x^2) (degree 5/5, fitted error
  2.5e-8 relative, under float32's half ulp). erfc in float32 comes from the float64 path, since
  its tail needs relative accuracy that 1 - erf cannot give.

cupy has both functions in cupyx.scipy.special; arrays that are not numpy's go there.
"""

import functools
import math

import numpy as np

from .. import _threads
from . import _fused_kernels

# float64, |x| < 0.5: erf(x) / x as a polynomial in t = x^2, lowest degree first
_SMALL = (
    1.1283791670955126,
    -0.3761263890318347,
    0.11283791670924921,
    -0.026866170632743547,
    0.005223977370702458,
    -0.0008548297553176326,
    0.00012053325564505546,
    -1.4845612528954276e-05,
    1.4723487842564174e-06,
)
_SPLIT_SMALL = 0.5

# float64, 0.5 <= x < 6: erfc(x) * exp(x^2) = P(x) / Q(x)
_MID_P = (
    0.9999999999380894,
    1.7354871665202916,
    1.4978895023107888,
    0.7989209595371143,
    0.28086106492089236,
    0.06487120574737612,
    0.009158024126219409,
    0.0006187711907498018,
    3.8218171211302455e-12,
)
_MID_Q = (
    1.0,
    2.8638663326508746,
    3.729416616482379,
    2.8955033879810763,
    1.473021659818373,
    0.5059264671027544,
    0.11552981066897894,
    0.016232163155118412,
    0.0010967437926867334,
)
_SPLIT_FAR = 6.0  # erf(x) rounds to 1 in float64 from here on
_UNDERFLOW = 28.0  # erfc(x) rounds to 0 in float64 beyond this

# float64, x >= 6: x * erfc(x) * exp(x^2) = P(u) / Q(u), u = 1/x^2
_FAR_P = (
    0.5641895835477563,
    8.90342885040971,
    39.380420334324384,
    49.49864667027108,
    8.510422899840565,
)
_FAR_Q = (1.0, 16.280916752171883, 77.19043604802043, 115.99359733082255, 39.152529577462744)

# float32, |x| <= 4: erf(x) / x = P(t) / Q(t), t = x^2
_F32_P = (
    1.1283791397406706,
    0.19353366318364812,
    0.05310021068444443,
    0.003882844857995459,
    0.00028455290920468006,
    1.9868484672448687e-06,
)
_F32_Q = (
    1.0,
    0.5048473030750957,
    0.11534526062935194,
    0.015206257399937174,
    0.0011854465633090417,
    3.742017682666284e-05,
)
_F32_CLIP = 4.0  # erf(4) = 1 - 1.5e-8 rounds to 1 in float32


_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def _poly(t, coefs, out=None):
    """sum coefs[k] * t**k by Horner's rule, in place in `out` (a new array by default) of t's
    dtype (the Python float coefficients do not promote a float32 array)."""
    r = np.multiply(t, coefs[-1], out=out)
    r += coefs[-2]
    for c in coefs[-3::-1]:
        r *= t
        r += c
    return r


def _cupyx_special():
    import cupyx.scipy.special

    return cupyx.scipy.special


def _on_cpu(d):
    return d.__class__ is np.ndarray or isinstance(d, np.generic)


def exp_neg_sq(x):
    """exp(-x*x) for float64 x >= 0, with x*x's rounding error (up to x^2 * 1.1e-16 relative in
    the result) removed: x = hi + lo with hi a multiple of 1/16, so hi*hi is exact, and
    exp(-x^2) = exp(-hi^2) * exp(-lo * (x + hi)). Infinite x must be clipped first."""
    hi = np.round(x * 16.0)
    hi *= 1.0 / 16.0
    lo = x - hi
    lo *= x + hi
    r = np.exp(-(hi * hi))
    r *= np.exp(-lo)
    return r


@functools.lru_cache(maxsize=8)
def _f32_coefs(scale, mul):
    """The float32 rational rewritten for mul * erf(scale * x) as a function of x: numerator
    coefficients, and the denominator's divided by its leading one (left implicit, saving a
    pass)."""
    a2 = scale * scale
    p = [c * scale * mul * a2**k for k, c in enumerate(_F32_P)]
    q = [c * a2**k for k, c in enumerate(_F32_Q)]
    lead = q[-1]
    return tuple(c / lead for c in p), tuple(c / lead for c in q[:-1])


def _erf32(x, scale=1.0, mul=1.0, add=0.0):
    """add + mul * erf(scale * x) of a 1-d float32 array, in float32, with the constants folded
    into the coefficients; three new arrays (a large temporary costs page faults as well as its
    pass)."""
    p_c, q_c = _f32_coefs(scale, mul)
    bound = _F32_CLIP / scale
    lim = abs(mul)
    if _fused_kernels.takes(x):
        out = np.empty_like(x)  # the steps below in one pass, the same bits
        _fused_kernels.kernels.erf32(x, out, p_c, q_c, bound, add, add - lim, add + lim)
        return out
    s = np.clip(x, -bound, bound)  # nan stays nan
    t = s * s
    p = _poly(t, p_c)
    p *= s
    q = np.add(t, q_c[-1], out=s)  # the monic denominator, in s's buffer
    for c in q_c[-2::-1]:
        q *= t
        q += c
    p /= q
    if add:
        p += add
    # the rational form overshoots |erf| = 1 by an ulp near the clip; a cdf of -6e-8 made
    # gelu(-10) positive where PyTorch's is -0
    np.clip(p, add - lim, add + lim, out=p)
    return p


def _erfc_mid(a, exp_sq):
    """erfc(a) for float64 0.5 <= a < 6 (nan passes through)."""
    r = _poly(a, _MID_P)
    r /= _poly(a, _MID_Q)
    r *= exp_sq(a)
    return r


def _erfc_far(a):
    """erfc(a) for float64 a >= 6 (+inf included)."""
    a = np.minimum(a, _UNDERFLOW)
    u = 1.0 / (a * a)
    r = _poly(u, _FAR_P)
    r /= _poly(u, _FAR_Q)
    r /= a
    r *= exp_neg_sq(a)
    return r


def _plain_exp_neg_sq(a):
    return np.exp(-(a * a))


def _erf64(x):
    """erf of a 1-d float64 array. For |x| >= 0.5 it is 1 - erfc, and erfc < 0.48 there, so
    the plain exp(-x*x) is accurate enough."""
    a = np.abs(x)
    small = a < _SPLIT_SMALL
    if small.all():
        return x * _poly(x * x, _SMALL)
    out = np.empty_like(x)
    big = ~small
    if small.any():
        xs = x[small]
        out[small] = xs * _poly(xs * xs, _SMALL)
    else:
        big = slice(None)
    ab = np.minimum(a[big], _SPLIT_FAR)  # erf is 1 from there on (inf included; nan stays)
    r = _erfc_mid(ab, _plain_exp_neg_sq)
    np.subtract(1.0, r, out=r)
    out[big] = np.copysign(r, x[big])
    return out


def _erfc64(x):
    """erfc of a 1-d float64 array, accurate relative to itself (tails included)."""
    a = np.abs(x)
    small = a < _SPLIT_SMALL
    far = a >= _SPLIT_FAR
    mid = ~(small | far)  # nan goes here and stays nan
    out = np.empty_like(x)
    if small.any():
        xs = x[small]
        out[small] = 1.0 - xs * _poly(xs * xs, _SMALL)
    if mid.any():
        out[mid] = _erfc_mid(a[mid], exp_neg_sq)
    if far.any():
        out[far] = _erfc_far(a[far])
    neg = (x < 0) & ~small  # small x already got 1 - erf(x) with its sign
    if neg.any():
        out[neg] = 2.0 - out[neg]  # only where erfc(|x|) < 0.5, so no cancellation
    return out


def _apply(d, f64, f32):
    """Run the 1-d kernel for d's precision on a flat float view or copy of d and restore d's
    shape and dtype."""
    d = np.asarray(d)
    if d.dtype.itemsize <= 4 and f32 is not None:
        kernel, flat = f32, d.astype(np.float32, copy=False).reshape(-1)
    else:
        kernel, flat = f64, d.astype(np.float64, copy=False).reshape(-1)
    if _threads.worth(flat.size):  # elementwise kernels: parts of the array on the threads
        r = np.empty_like(flat)

        def share(s, e):
            r[s:e] = kernel(flat[s:e])

        _threads.over_rows(share, flat.size, flat.size, grain=4096)
    else:
        r = kernel(flat)
    return r.reshape(d.shape).astype(d.dtype, copy=False)


def erf(d):
    """erf of a float array, in its dtype."""
    if not _on_cpu(d):
        return _cupyx_special().erf(d)
    return _apply(d, _erf64, _erf32)


def erfc(d):
    """erfc of a float array, in its dtype (float32 computes in float64 for its tail)."""
    if not _on_cpu(d):
        return _cupyx_special().erfc(d)
    return _apply(d, _erfc64, None)


def _cdf64(x):
    r = _erf64(x * _INV_SQRT_2)
    r += 1.0
    r *= 0.5
    return r


def normal_cdf(d):
    """The standard normal CDF, (1 + erf(d / sqrt 2)) / 2 (as PyTorch's gelu writes it, rather
    than a tail-accurate form), of a float array in its dtype; in float32 the constants fold
    into the kernel's coefficients."""
    if not _on_cpu(d):
        r = _cupyx_special().erf(d * _INV_SQRT_2)
        r += 1.0
        r *= 0.5
        return r
    return _apply(d, _cdf64, _cdf32)


def _cdf32(x):
    return _erf32(x, _INV_SQRT_2, 0.5, 0.5)


def gelu_derivative32(out, d, cdf, inv_sqrt_2pi):
    """activations._gelu_derivative_erf's steps on arrays that _fused_kernels takes: numpy's
    exp between two passes of _fused (its float32 exp rounds as numpy's SIMD loop does)."""
    kernels = _fused_kernels.kernels
    kernels.neg_half_sq(d, out)
    np.exp(out, out=out)
    kernels.gelu_grad_finish(out, d, cdf, inv_sqrt_2pi)
    return out


def gelu_parts(d):
    """(d * Phi(d), Phi(d)): GELU's value and the CDF its backward reuses. A contiguous float32
    numpy array takes one pass for both where _fused is built (the same bits as the steps)."""
    kernels = _fused_kernels.kernels
    if kernels is None or d.__class__ is not np.ndarray or d.dtype != np.float32 or d.ndim == 0:
        cdf = normal_cdf(d)
        return d * cdf, cdf
    d = np.ascontiguousarray(d)
    p_c, q_c = _f32_coefs(_INV_SQRT_2, 0.5)
    bound = _F32_CLIP / _INV_SQRT_2  # as _erf32 works them out
    flat = d.reshape(-1)
    cdf, value = np.empty_like(flat), np.empty_like(flat)

    def share(s, e):
        kernels.erf32(flat[s:e], cdf[s:e], p_c, q_c, bound, 0.5, 0.0, 1.0, value[s:e])

    _threads.over_rows(share, flat.size, 3 * flat.size, grain=4096)
    return value.reshape(d.shape), cdf.reshape(d.shape)
