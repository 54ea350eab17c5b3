"""PyTorch's CPU samplers on numpy arrays: the same words of the stream, the same arithmetic.

Every function takes an engine `Generator` and returns a fresh float64/int/uint array in the
order PyTorch's kernels write elements (`cpu_serial_kernel` walks a tensor in memory order). The
arithmetic follows PyTorch's `DistributionsHelper.h` and `cpu/DistributionTemplates.h`: uniform
floats keep the top 24 (float32) or 53 (float64) bits of a 32- or 64-bit draw; the kernels are
built with FMA, so `x * (to - from) + from` and `x * std + mean` round once (`fma64` below,
`_avx_mathfun.fma32` in float32);
libm's `log`/`log1p` are called through Python's `math` (numpy's own SIMD versions differ from
glibc in the last bit now and then), numpy's `sin`/`cos`/`sqrt` agree with glibc's.
"""

import math

import numpy as np

from . import _avx_mathfun, _generator

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_MANTISSA = {_F16: 11, _F32: 24, _F64: 53}  # std::numeric_limits<T>::digits
_TWO_PI = 2.0 * math.pi


# -- exact float64 arithmetic --------------------------------------------------------------------
def _split(v):
    """Veltkamp's split: hi + lo == v, each with at most 26 significant bits."""
    t = v * 134217729.0  # 2**27 + 1
    hi = t - (t - v)
    return hi, v - hi


def fma64(a, b, c):
    """a * b + c with a single rounding (what the FMA instruction gives), on float64 arrays:
    the product's error by Dekker's TwoProduct, the sum's by Knuth's TwoSum."""
    a = np.asarray(a, np.float64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(np.asarray(b, np.float64))
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + err == a * b exactly
    s = p + c
    bv = s - p
    t = (p - (s - bv)) + (c - bv)  # s + t == p + c exactly
    return s + (t + err)


def _libm(fn, x):
    """glibc's `fn` (math.log / math.log1p) over an array, element by element."""
    return np.fromiter(map(fn, x.tolist()), np.float64, x.size)


# -- uniform: uniform_real_distribution -----------------------------------------------------------
def unit(g, n, dtype):
    """[0, 1) floats: the low `digits` bits of one draw each (two words for float64), scaled.
    float16 gets float32 values (PyTorch's accumulation type) for the caller to round."""
    dtype = np.dtype(dtype)
    if _generator._random_fill is not None and dtype in (_F32, _F64):
        return _uniform_c(g, n, dtype, 0.0, 1.0)
    if dtype == _F64:
        bits = g.random64(n) & np.uint64((1 << 53) - 1)
        return bits.astype(np.float64) * 2.0**-53
    digits = _MANTISSA.get(dtype, 24)
    bits = g.words(n)
    bits &= np.uint32((1 << digits) - 1)
    out = bits.astype(np.float32)
    out *= np.float32(2.0**-digits)
    return out


def _uniform_c(g, n, dtype, low, high):
    """`uniform` for float32 / float64 in one C pass (_random_fill), the same bits."""
    kernels = _generator._random_fill
    kernel = kernels.uniform_f64 if dtype == _F64 else kernels.uniform_f32
    return g.fill(kernel, np.empty(n, dtype), float(low), float(high))


def _in_place(arr):
    """Whether a C fill can write straight into `arr`: the module is built and `arr` is a
    writable C-contiguous float32/float64 host array (no fresh array, no copy into it)."""
    return (
        _generator._random_fill is not None
        and type(arr) is np.ndarray
        and arr.dtype in (_F32, _F64)
        and arr.flags.c_contiguous
        and arr.flags.writeable
    )


def uniform_into(g, arr, low, high):
    """`uniform` written into `arr` in place where a C fill can (`_in_place`); False where not."""
    if not _in_place(arr):
        return False
    kernels = _generator._random_fill
    kernel = kernels.uniform_f64 if arr.dtype == _F64 else kernels.uniform_f32
    g.fill(kernel, arr.reshape(-1), float(low), float(high))
    return True


def normal_into(g, arr, mean, std):
    """`normal_fill` written into `arr` in place where a C fill can (16 or more elements,
    `_in_place`); False where not."""
    if arr.size < 16 or not _in_place(arr):
        return False
    kernels = _generator._random_fill
    kernel = kernels.normal_f64 if arr.dtype == _F64 else kernels.normal_f32
    g.fill(kernel, arr.reshape(-1), float(mean), float(std))
    return True


def uniform(g, n, dtype, low, high):
    """`uniform_(low, high)`: x * (to - from) + from, fused, in the tensor's float type."""
    dtype = np.dtype(dtype)
    if _generator._random_fill is not None and dtype in (_F32, _F64):
        return _uniform_c(g, n, dtype, low, high)
    x = unit(g, n, dtype)
    if low == 0 and high == 1:
        return x.astype(dtype, copy=False)
    if dtype == _F64:
        lo, hi = float(low), float(high)
        return fma64(x, hi - lo, lo)
    lo, hi = np.float32(dtype.type(low)), np.float32(dtype.type(high))
    if dtype == _F32:
        return _avx_mathfun.fma32(x, hi - lo, lo)
    # float16: computed in float32 operands, rounded once to half
    return (x.astype(np.float64) * float(hi - lo) + float(lo)).astype(dtype)


# -- normal: Box-Muller, the scalar path and normal_fill ------------------------------------------
def normal_scalar(g, n, mean=0.0, std=1.0):
    """n draws of `normal_distribution<double>` (PyTorch's path for < 16 elements or a strided
    tensor): pairs of 53-bit uniforms, cos first, the sine kept in the generator for the next
    draw. Returns float64 (the caller casts, as `static_cast<scalar_t>` does)."""
    out = np.empty(n, np.float64)
    if n == 0:
        return out
    start = 0
    if g.next_double_normal is not None:
        out[0] = g.next_double_normal
        g.next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = unit(g, 2 * pairs, _F64)
        r = np.sqrt(-2.0 * _libm(math.log1p, -u[1::2]))
        theta = _TWO_PI * u[0::2]
        both = np.empty(2 * pairs, np.float64)
        both[0::2] = r * np.cos(theta)
        both[1::2] = r * np.sin(theta)
        out[start:] = both[: n - start]
        if (n - start) % 2:
            g.next_double_normal = float(both[-1])
    if mean != 0 or std != 1:
        out = fma64(out, float(std), float(mean))
    return out


def _box_muller16_f32(d, mean, std):
    """PyTorch's `normal_fill_16_AVX2` over rows of 16 float32 uniforms: the first eight give
    the radius, the last eight the angle; cosines go to the first half, sines to the second."""
    d = d.reshape(-1, 16)
    radius = _avx_mathfun.log_ps(np.float32(1) - d[:, :8])  # contiguous from here on
    radius *= np.float32(-2)
    np.sqrt(radius, out=radius)
    sin, cos = _avx_mathfun.sincos_ps(np.float32(_TWO_PI) * d[:, 8:])
    out = np.empty_like(d)
    out[:, :8] = radius * cos
    out[:, 8:] = radius * sin
    if mean != 0 or std != 1:  # the kernel's fused value * std + mean
        return _avx_mathfun.fma32(out, np.float32(std), np.float32(mean)).reshape(-1)
    out += np.float32(0)  # what the fused * 1 + 0 does: -0 becomes +0
    return out.reshape(-1)


def _box_muller16_f64(d, mean, std):
    """PyTorch's generic `normal_fill_16` in double (libm's log, cos and sin)."""
    d = d.reshape(-1, 16)
    radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - d[:, :8].reshape(-1))).reshape(-1, 8)
    theta = _TWO_PI * d[:, 8:]
    out = np.empty_like(d)
    out[:, :8] = radius * np.cos(theta)
    out[:, 8:] = radius * np.sin(theta)
    return fma64(out, float(std), float(mean)).reshape(-1)  # fused, even for 1 and 0 (-0 to +0)


def normal_fill(g, n, dtype, mean=0.0, std=1.0):
    """PyTorch's path for a contiguous tensor of >= 16 normals: n uniforms, Box-Muller on each
    block of 16, and for a size not a multiple of 16 sixteen fresh uniforms for the last 16
    places, computed again (the first draws for those places are thrown away). The C module
    `_random_fill` does it in one pass where it is built; the numpy steps below give the same
    bits where it is not."""
    dtype = np.dtype(dtype)
    work = _F64 if dtype == _F64 else _F32
    kernels = _generator._random_fill
    if kernels is not None:  # the same in C, one pass
        kernel = kernels.normal_f64 if work == _F64 else kernels.normal_f32
        out = g.fill(kernel, np.empty(n, work), float(mean), float(std))
        return out.astype(dtype, copy=False)
    fill = _box_muller16_f64 if work == _F64 else _box_muller16_f32
    data = unit(g, n, work).astype(work, copy=False)
    body = n - n % 16
    data[:body] = fill(data[:body], mean, std)
    if n % 16:
        data[n - 16 :] = fill(unit(g, 16, work).astype(work, copy=False), mean, std)
    return data.astype(dtype, copy=False)


def normal(g, n, dtype, mean=0.0, std=1.0, contiguous=True):
    if n >= 16 and contiguous:
        return normal_fill(g, n, dtype, mean, std)
    return normal_scalar(g, n, mean, std).astype(dtype)


# -- integers: random_ and randint -----------------------------------------------------------------
def int_from_to(g, n, low, high):
    """`random_(low, high)` / `randint`: (draw % range) + low as int64; a range of 2**28 or more
    takes 64-bit draws (PyTorch's threshold), a smaller one 32-bit draws."""
    span = high - low
    draws = g.random64(n) if span >= 1 << 28 else g.random(n)
    v = draws % np.uint64(span)
    return (v + np.uint64(low % (1 << 64))).view(np.int64)


def random_full(g, n, dtype):
    """`random_()` without bounds: [0, max] for integers, [0, 2**digits] for floats."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (g.random(n) & np.uint64(1)).astype(np.bool_)
    if dtype in _MANTISSA:
        wide = dtype == _F64
        draws = g.random64(n) if wide else g.random(n)
        return (draws % np.uint64((1 << _MANTISSA[dtype]) + 1)).astype(dtype)
    draws = g.random64(n) if dtype == np.int64 else g.random(n)
    return (draws % np.uint64(int(np.iinfo(dtype).max) + 1)).astype(dtype)


def randperm(g, n):
    """Fisher-Yates as PyTorch's CPU randperm does it: place i swaps with i + (draw % (n - i))."""
    if n >= 0xFFFFFFFF // 20:
        raise NotImplementedError("randperm of 214748364 or more elements")
    perm = np.arange(n, dtype=np.int64)
    if n < 2:
        return perm
    offsets = (g.random(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
    offsets += np.arange(n - 1)
    p = perm.tolist()
    for i, z in enumerate(offsets.tolist()):  # the swaps depend on each other: one at a time
        p[i], p[z] = p[z], p[i]
    return np.array(p, np.int64)


# -- bernoulli, exponential, multinomial -----------------------------------------------------------
def bernoulli_tensor(g, p):
    """One draw per element of `p` (already broadcast, in memory order): u < p, u a float32
    uniform for float32/float16 p and a float64 one for float64 p."""
    p = np.asarray(p)
    if p.dtype == _F64:
        return unit(g, p.size, _F64) < p.reshape(-1)
    return unit(g, p.size, _F32) < p.reshape(-1).astype(np.float32)


def bernoulli_scalar(g, n, p):
    """`bernoulli_(p)` with a number p: 53-bit uniform < p (PyTorch's path without MKL, which
    is also what it runs on non-Intel CPUs)."""
    return unit(g, n, _F64) < float(p)


def exponential(g, n, lambd=1.0):
    """-1/lambda * log1p(-u), u a 53-bit uniform (float64; the caller casts)."""
    u = unit(g, n, _F64)
    return (-1.0 / lambd) * _libm(math.log1p, -u)


def multinomial(g, probs, num_samples, replacement):
    """Rows of category indices. Without replacement (and for one sample) PyTorch draws
    exponentials q over the whole input and takes the top `num_samples` of p / q; with
    replacement it inverts each row's cumulative sum with one 53-bit uniform per sample."""
    rows = probs.reshape(-1, probs.shape[-1])
    n_cat = rows.shape[1]
    if not replacement or num_samples == 1:
        q = exponential(g, rows.size).astype(rows.dtype).reshape(rows.shape)
        keys = rows / q
        if num_samples == 1:
            return np.argmax(keys, axis=1)[:, None]
        return np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for i, row in enumerate(rows):
        cum = np.cumsum(row)  # sequential sums in the row's dtype, as the kernel adds them
        total = cum[-1]
        if total > 0:
            cum = cum / total
        cum[n_cat - 1] = 1
        u = unit(g, num_samples, _F64)
        out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out
