/* mt19937's words and PyTorch's CPU uniform and normal_fill loops, one element at a time in C,
with the float roundings of the kernels PyTorch runs (see _random_fill.c for why and how).

_random_fill.c includes this file twice: once for the portable build and, on x86-64, once
under `#pragma GCC target("avx2,fma")`, with KERNEL(name) giving each copy its own names. In
the second copy the compiler turns fmaf into the FMA instruction and the loops over the eight
lanes of a block into AVX2 vector code; the operations and so the bits are the same in both.

The float32 maths mirror _avx_mathfun.py step for step: a plain float32 operation where
PyTorch's AVX2 kernel has one, fmaf where its compiler fuses a multiply and an add. The
constants are the float32 values of the Cephes coefficients, written in hex so that no decimal
conversion can round them differently. */

#define LANES 8

/* -- the stream: mt19937's words, as numpy's MT19937 (and PyTorch's generator) give them ---- */
/* The next 624 words of state (the twist): word i becomes word i + 397 (round the ring: past
the end, a word this twist has already renewed) xor a mix of its own top bit and the next
word's low 31 bits. Three runs: i + 397 inside the ring, past its end, and the last word,
whose next word is the (renewed) first. */
static void KERNEL(twist)(uint32_t *key)
{
#define MT_MIX(hi, lo, far) \
    ((far) ^ ((((hi) & 0x80000000u) | ((lo) & 0x7fffffffu)) >> 1) ^ \
     ((0u - ((lo) & 1u)) & 0x9908b0dfu))
    int i;
    for (i = 0; i < MT_N - MT_M; i++)
        key[i] = MT_MIX(key[i], key[i + 1], key[i + MT_M]);
    for (; i < MT_N - 1; i++)
        key[i] = MT_MIX(key[i], key[i + 1], key[i + MT_M - MT_N]);
    key[MT_N - 1] = MT_MIX(key[MT_N - 1], key[0], key[MT_M - 1]);
#undef MT_MIX
}

/* n words from the state, tempered, twisting whenever the 624 are used up */
static void KERNEL(draw)(mt_state *st, uint32_t *out, Py_ssize_t n)
{
    while (n > 0) {
        if (st->pos >= MT_N) {
            KERNEL(twist)(st->key);
            st->pos = 0;
        }
        Py_ssize_t m = MT_N - st->pos;
        if (m > n)
            m = n;
        const uint32_t *k = st->key + st->pos;
        for (Py_ssize_t i = 0; i < m; i++) {
            uint32_t y = k[i];
            y ^= y >> 11;
            y ^= (y << 7) & 0x9d2c5680u;
            y ^= (y << 15) & 0xefc60000u;
            out[i] = y ^ (y >> 18);
        }
        st->pos += (int)m;
        out += m;
        n -= m;
    }
}

/* -- uniform: 24 bits of a word (53 of two) scaled to [0, 1), then x * (high - low) + low,
fused as PyTorch's compiler fuses it ---------------------------------------------------------- */
static void KERNEL(uniform_f32)(const uint32_t *words, float *out, Py_ssize_t n, float low,
                                float span)
{
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = fmaf((float)(words[i] & 0xFFFFFF) * 0x1p-24f, span, low);
}

static inline double KERNEL(unit_f64)(const uint32_t *pair) /* the first word is the high half */
{
    return (double)(((uint64_t)pair[0] << 32 | pair[1]) & ((1ULL << 53) - 1)) * 0x1p-53;
}

static void KERNEL(uniform_f64)(const uint32_t *words, double *out, Py_ssize_t n, double low,
                                double span)
{
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = fma(KERNEL(unit_f64)(words + 2 * i), span, low);
}

/* -- float32: log and sin/cos of the AVX2 kernel, per lane ---------------------------------- */
/* Selections and sign flips are done on the bits, so the compiler sees no branch in a lane. */
static inline uint32_t KERNEL(as_bits)(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    return b;
}

static inline float KERNEL(as_float)(uint32_t b)
{
    float x;
    memcpy(&x, &b, 4);
    return x;
}

#define as_bits KERNEL(as_bits)
#define as_float KERNEL(as_float)
#define mask_of(cond) (0u - (uint32_t)(cond))

static inline float KERNEL(log_f)(float x)
{
    int32_t bits;
    memcpy(&bits, &x, 4);
    /* at least FLT_MIN (its inputs lie in (0, 1]); on bits, so the loop stays branch-free */
    bits = bits > 0x00800000 ? bits : 0x00800000;
    float e = (float)((bits >> 23) - 126); /* exponent + 1: the mantissa moves into [0.5, 1) */
    int32_t mbits = (bits & ~0x7F800000) | 0x3F000000;
    float m;
    memcpy(&m, &mbits, 4);
    int small = m < 0x1.6a09e6p-1f; /* below sqrt(1/2): 2m - 1, one less in the exponent */
    e -= as_float(as_bits(1.0f) & mask_of(small));
    m = (m - 1.0f) + as_float(as_bits(m) & mask_of(small));
    float z = m * m;
    float y = 0x1.204376p-4f;
    y = fmaf(y, m, -0x1.d7a370p-4f);
    y = fmaf(y, m, 0x1.de4a34p-4f);
    y = fmaf(y, m, -0x1.fcba9ep-4f);
    y = fmaf(y, m, 0x1.23d37ep-3f);
    y = fmaf(y, m, -0x1.555ca0p-3f);
    y = fmaf(y, m, 0x1.999d58p-3f);
    y = fmaf(y, m, -0x1.fffff8p-3f);
    y = fmaf(y, m, 0x1.555554p-2f);
    y = y * m;
    y = fmaf(y, z, e * -0x1.bd0106p-13f);
    y = fmaf(z, -0.5f, y);
    return fmaf(e, 0x1.63p-1f, m + y);
}

static inline void KERNEL(sincos_f)(float x, float *sin_out, float *cos_out)
{
    int neg = as_bits(x) >> 31;
    x = fabsf(x);
    int32_t j = (int32_t)(x * 0x1.45f306p+0f); /* 4 / pi */
    j = (j + 1) & ~1;                          /* the octant, rounded up to even */
    float y = (float)j;
    x = fmaf(y, -0x1.92p-1f, x); /* x - j * pi/4 in three parts */
    x = fmaf(y, -0x1.fb4p-13f, x);
    x = fmaf(y, -0x1.4442d2p-25f, x);
    float z = x * x;
    float yc = fmaf(0x1.99eb9cp-16f, z, -0x1.6c0c34p-10f);
    yc = fmaf(yc, z, 0x1.55554ap-5f);
    yc = yc * z;
    yc = fmaf(yc, z, -(z * 0.5f)) + 1.0f;
    float ys = fmaf(-0x1.9943f2p-13f, z, 0x1.11073cp-7f);
    ys = fmaf(ys, z, -0x1.555546p-3f);
    ys = ys * z;
    ys = fmaf(ys, x, x);
    uint32_t first = mask_of((j & 2) == 0); /* which polynomial is the sine in this octant */
    uint32_t s = (as_bits(ys) & first) | (as_bits(yc) & ~first);
    uint32_t c = (as_bits(yc) & first) | (as_bits(ys) & ~first);
    *sin_out = as_float(s ^ ((uint32_t)(neg ^ ((j & 4) != 0)) << 31));
    *cos_out = as_float(c ^ ((uint32_t)(((~(j - 2)) & 4) != 0) << 31));
}

/* Blocks of 16 float32 uniforms (the low 24 bits of 16 words, scaled): the first eight give
the radii, the last eight the angles; cosines go to the first half, sines to the second. */
static void KERNEL(blocks_f32)(const uint32_t *words, float *out, Py_ssize_t blocks, float mean,
                               float std)
{
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint32_t *w = words + 16 * b;
        float *o = out + 16 * b;
        for (int k = 0; k < LANES; k++) {
            float u1 = 1.0f - (float)(w[k] & 0xFFFFFF) * 0x1p-24f;
            float u2 = (float)(w[k + LANES] & 0xFFFFFF) * 0x1p-24f;
            float radius = sqrtf(-2.0f * KERNEL(log_f)(u1));
            float s, c;
            KERNEL(sincos_f)(0x1.921fb6p+2f * u2, &s, &c);
            o[k] = fmaf(radius * c, std, mean);
            o[k + LANES] = fmaf(radius * s, std, mean);
        }
    }
}

/* -- float64: the generic normal_fill_16 with libm ------------------------------------------ */
/* Blocks of 16 double uniforms (53 bits of two words each, the first word high). The kernel's
`radius * cos(theta) * std + mean` is compiled with contraction: one fused multiply-add. */
static void KERNEL(blocks_f64)(const uint32_t *words, double *out, Py_ssize_t blocks,
                               double mean, double std)
{
    double u[16];
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint32_t *w = words + 32 * b;
        double *o = out + 16 * b;
        for (int k = 0; k < 16; k++)
            u[k] = KERNEL(unit_f64)(w + 2 * k);
        for (int k = 0; k < LANES; k++) {
            double radius = sqrt(-2.0 * log(1.0 - u[k]));
            double theta = 0x1.921fb54442d18p+2 * u[k + LANES]; /* 2 pi */
            o[k] = fma(radius * cos(theta), std, mean);
            o[k + LANES] = fma(radius * sin(theta), std, mean);
        }
    }
}

#undef as_bits
#undef as_float
#undef mask_of
