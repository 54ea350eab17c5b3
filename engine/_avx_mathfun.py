"""Float32 log and sin/cos exactly as PyTorch's AVX2 `randn` kernel computes them.

PyTorch fills a contiguous float32 tensor of 16 or more normals (`normal_fill_AVX2`) with
Box-Muller on eight lanes at a time, using the Cephes-style polynomials of `avx_mathfun.h`
(Pommier's sse_mathfun ported to AVX) rather than libm. The kernel is built with FMA enabled, so
the compiler fuses the multiply-adds of those polynomials. To give the same float32 bits the
engine evaluates the same polynomials with the same roundings: a plain float32 operation where
the kernel has one, and a fused multiply-add (the product exact in float64, one rounding to
float32) where the compiler fuses. Which steps fuse was read off the installed PyTorch's output
(tests/engine/test_random_streams.py pins it on many seeds and sizes).
"""

import numpy as np

_F32 = np.float32
_F64 = np.float64


_LOW29 = np.int64((1 << 29) - 1)  # the float64 mantissa bits below float32's
_HALF29 = np.int64(1 << 28)  # ... as they read on a value halfway between two float32s


def fma32(a, b, c):
    """a * b + c with one rounding to float32, as the FMA instruction gives it, for float32
    values a, b, c (c may be held in float64). The product is exact in float64; the sum is
    rounded there first, which is harmless unless it lands exactly halfway between two float32
    values while the exact sum was not: for those (rare) elements the second rounding goes the
    way the first one's error (Knuth's TwoSum) points."""
    p = np.multiply(a, b, dtype=_F64)  # the cast rides along in the multiply's loop
    s = p + c
    r = s.astype(_F32)
    s = s.reshape(-1)
    ties = np.flatnonzero((s.view(np.int64) & _LOW29) == _HALF29)
    if ties.size:
        pt = np.broadcast_to(p, r.shape).reshape(-1)[ties]
        ct = np.broadcast_to(np.asarray(c, _F64), r.shape).reshape(-1)[ties]
        st = s[ties]
        back = st - pt
        err = (pt - (st - back)) + (ct - back)  # st + err == pt + ct exactly
        off = err != 0
        st[off] = np.nextafter(st[off], np.copysign(np.inf, err[off]))  # off the halfway point
        r.reshape(-1)[ties] = st.astype(_F32)
    return r


# -- log: Cephes logf -------------------------------------------------------------------------
_SQRTHF = _F32(0.707106781186547524)
_LOG_P = [
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
]
_LOG_P = [_F64(_F32(p)) for p in _LOG_P]
_LOG_Q1 = _F64(_F32(-2.12194440e-4))
_LOG_Q2 = _F64(_F32(0.693359375))


def log_ps(x):
    """Natural log of positive normal float32 `x` (the kernel's inputs are in (0, 1])."""
    bits = np.maximum(x, _F32(1.17549435e-38)).view(np.int32)
    e = ((bits >> 23) - 126).astype(_F32)  # exponent + 1, the mantissa scaled into [0.5, 1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)
    small = m < _SQRTHF  # below sqrt(1/2): use 2m - 1 and one less in the exponent
    e -= small.astype(_F32)
    m = (m - _F32(1)) + np.where(small, m, _F32(0))
    z = m * m
    y = np.full(m.shape, _F32(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = fma32(y, m, p)
    y = y * m
    y = fma32(y, z, e * _F32(_LOG_Q1))
    y = fma32(z, _F64(-0.5), y)
    return fma32(e, _LOG_Q2, m + y)


# -- sin and cos together: Cephes sinf/cosf -----------------------------------------------------
_FOPI = _F32(1.27323954473516)  # 4 / pi
_DP = [
    _F64(_F32(-0.78515625)),
    _F64(_F32(-2.4187564849853515625e-4)),
    _F64(_F32(-3.77489497744594108e-8)),
]
_COS_P = [
    _F64(_F32(c)) for c in (2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002)
]
_SIN_P = [_F64(_F32(c)) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]


def sincos_ps(x):
    """(sin x, cos x) of float32 `x` >= 0 (the kernel's angles are 2*pi*u, u in [0, 1))."""
    neg = np.signbit(x)
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)
    j = (j + 1) & ~1  # the octant, rounded up to even
    y = j.astype(_F32)
    for dp in _DP:  # extended-precision reduction: x - j * pi/4 in three parts
        x = fma32(y, dp, x)
    z = x * x
    yc = fma32(np.full(z.shape, _F32(_COS_P[0])), z, _COS_P[1])
    yc = fma32(yc, z, _COS_P[2])
    yc = yc * z
    yc = fma32(yc, z, -(z * _F32(0.5))) + _F32(1)
    ys = fma32(np.full(z.shape, _F32(_SIN_P[0])), z, _SIN_P[1])
    ys = fma32(ys, z, _SIN_P[2])
    ys = ys * z
    ys = fma32(ys, x, x)
    first = (j & 2) == 0  # which polynomial is the sine in this octant
    s = np.where(first, ys, yc)
    c = np.where(first, yc, ys)
    s = np.where(neg ^ ((j & 4) != 0), -s, s)
    c = np.where((~(j - 2) & 4) != 0, -c, c)
    return s, c
