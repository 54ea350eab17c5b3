/* PyTorch's CPU random stream and its float fills in C, bit for bit: mt19937's words, uniform
(rand, uniform_, and so every uniform nn.init) and normal_fill (randn, normal_ of 16 or more
contiguous elements), float32 and float64.

_generator and _distributions do the same with numpy where this module is not built (it is
optional): there float32 Box-Muller with PyTorch's AVX2 log and sin/cos polynomials takes
about 80 numpy passes over the data, ten times PyTorch's time for randn(10**6), and each
draw's words come through numpy's bounded-integer call. Here the twister runs on numpy's own
MT19937 state (so the engine's Generator keeps its state there: get_state, set_state and
fork_rng are unchanged) and each fill is one pass over the words as they are drawn. Both give
the same bits (tests/engine/test_random_kernels.py holds them to each other and to PyTorch).

The float roundings are the point, so the module is compiled with -ffp-contract=off (no fused
multiply-add unless written as fmaf/fma, where PyTorch's compiler fuses) and without fast-math;
-fno-math-errno only lets sqrt be one instruction. The maths is in _random_fill_kernel.h,
compiled twice on x86-64: portable (fmaf from libm, correctly rounded like the instruction) and
for AVX2 with FMA, chosen at import by what the CPU has. Either gives the same bits.

`bits` below is an np.random.MT19937's `capsule`; every call draws from it and moves it on.
words(bits, out, portable=False)
    Fills the writable uint32 buffer `out` with the stream's next words.
uniform_f32(bits, out, low, high, portable=False)
    `out`: a writable float32 buffer of n elements, one word each: u * (high - low) + low with
    one rounding, u the word's low 24 bits times 2**-24, low and high rounded to float32 first
    and their difference taken in float32, as PyTorch does.
uniform_f64(bits, out, low, high, portable=False)
    The same in float64, from 53 bits of two words per element (the first word high).
normal_f32(bits, out, mean, std, portable=False)
    `out`: n >= 16 float32 elements, filled as normal_fill_AVX2 fills its tensor: n uniforms,
    Box-Muller on each block of 16, and for n not a multiple of 16 the last 16 places again
    from 16 fresh uniforms; each value fused into value * std + mean.
normal_f64(bits, out, mean, std, portable=False)
    PyTorch's generic normal_fill_16 in float64 (libm's log, cos and sin), two words a uniform.
simd: whether the calls run the AVX2 copy (False: portable only; `portable` forces it). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numpy/random/bitgen.h" /* what a numpy BitGenerator's capsule holds */

/* numpy's MT19937 state, which its bitgen_t points at: the 624 words and the next one's place
(624: twist first). _generator.py checks at import that drawing here matches numpy's draws. */
#define MT_N 624
#define MT_M 397
typedef struct {
    uint32_t key[MT_N];
    int pos;
} mt_state;

#define KERNEL(name) name##_portable
#include "_random_fill_kernel.h"
#undef KERNEL
#undef LANES

#if defined(__GNUC__) && defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define KERNEL(name) name##_avx2
#include "_random_fill_kernel.h"
#undef KERNEL
#undef LANES
#pragma GCC pop_options
#define HAVE_AVX2_COPY 1
#define PICK(name, simd) ((simd) ? name##_avx2 : name##_portable)
#else
#define HAVE_AVX2_COPY 0
#define PICK(name, simd) name##_portable
#endif

/* Words are drawn and used a chunk at a time, so they stay in the first-level cache. A multiple
of 32: whole blocks of 16 normals, in float64 too (two words each). */
#define CHUNK 4096

static int use_avx2;

static mt_state *state_of(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, "BitGenerator")) {
        PyErr_SetString(PyExc_TypeError, "expected an np.random.MT19937's BitGenerator capsule");
        return NULL;
    }
    return (mt_state *)((bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator"))->state;
}

static PyObject *words(PyObject *self, PyObject *args)
{
    PyObject *capsule;
    Py_buffer out;
    int portable = 0;
    if (!PyArg_ParseTuple(args, "Ow*|p", &capsule, &out, &portable))
        return NULL;
    mt_state *st = state_of(capsule);
    if (st && out.len % 4) {
        PyErr_Format(PyExc_ValueError, "words: %zd bytes is not a whole number of words",
                     out.len);
        st = NULL;
    }
    if (st)
        PICK(draw, use_avx2 && !portable)(st, (uint32_t *)out.buf, out.len / 4);
    PyBuffer_Release(&out);
    if (!st)
        return NULL;
    Py_RETURN_NONE;
}

enum { UNIFORM_F32, UNIFORM_F64, NORMAL_F32, NORMAL_F64 };

/* The fills draw their words themselves; the GIL stays held throughout, as the state is the
numpy BitGenerator's. */
static PyObject *fill(PyObject *args, int kind)
{
    PyObject *capsule;
    Py_buffer out;
    double a, b; /* low and high, or mean and std */
    int portable = 0;
    if (!PyArg_ParseTuple(args, "Ow*dd|p", &capsule, &out, &a, &b, &portable))
        return NULL;
    int wide = kind == UNIFORM_F64 || kind == NORMAL_F64, normal = kind >= NORMAL_F32;
    Py_ssize_t item = wide ? 8 : 4, per = wide ? 2 : 1; /* words per element */
    Py_ssize_t n = out.len / item;
    mt_state *st = state_of(capsule);
    if (st && (out.len % item || (normal && n < 16))) {
        PyErr_Format(PyExc_ValueError, "random fill: %zd bytes are not %s%zd-byte elements",
                     out.len, normal ? "16 or more " : "", item);
        st = NULL;
    }
    if (!st) {
        PyBuffer_Release(&out);
        return NULL;
    }
    int simd = use_avx2 && !portable;
    void (*draw)(mt_state *, uint32_t *, Py_ssize_t) = PICK(draw, simd);
    uint32_t buf[CHUNK];
    Py_ssize_t body = normal ? n - n % 16 : n, step = CHUNK / per;
    for (Py_ssize_t done = 0; done < body; done += step) {
        Py_ssize_t m = body - done < step ? body - done : step;
        draw(st, buf, m * per);
        switch (kind) {
        case UNIFORM_F32: {
            float low = (float)a, high = (float)b;
            PICK(uniform_f32, simd)(buf, (float *)out.buf + done, m, low, high - low);
            break;
        }
        case UNIFORM_F64:
            PICK(uniform_f64, simd)(buf, (double *)out.buf + done, m, a, b - a);
            break;
        case NORMAL_F32:
            PICK(blocks_f32, simd)(buf, (float *)out.buf + done, m / 16, (float)a, (float)b);
            break;
        default:
            PICK(blocks_f64, simd)(buf, (double *)out.buf + done, m / 16, a, b);
        }
    }
    if (body < n) {
        /* PyTorch draws a uniform for each of the last n % 16 places, then recomputes the last
        16 places from 16 fresh ones: the first draws are thrown away */
        draw(st, buf, (n - body) * per);
        draw(st, buf, 16 * per);
        if (kind == NORMAL_F32)
            PICK(blocks_f32, simd)(buf, (float *)out.buf + n - 16, 1, (float)a, (float)b);
        else
            PICK(blocks_f64, simd)(buf, (double *)out.buf + n - 16, 1, a, b);
    }
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyObject *uniform_f32(PyObject *self, PyObject *args)
{
    return fill(args, UNIFORM_F32);
}

static PyObject *uniform_f64(PyObject *self, PyObject *args)
{
    return fill(args, UNIFORM_F64);
}

static PyObject *normal_f32(PyObject *self, PyObject *args)
{
    return fill(args, NORMAL_F32);
}

static PyObject *normal_f64(PyObject *self, PyObject *args)
{
    return fill(args, NORMAL_F64);
}

static PyMethodDef methods[] = {
    {"words", words, METH_VARARGS, "32-bit words of an MT19937 BitGenerator's stream"},
    {"uniform_f32", uniform_f32, METH_VARARGS, "float32 uniform_ from PyTorch's stream words"},
    {"uniform_f64", uniform_f64, METH_VARARGS, "float64 uniform_ from PyTorch's stream words"},
    {"normal_f32", normal_f32, METH_VARARGS, "float32 normal_fill from PyTorch's stream words"},
    {"normal_f64", normal_f64, METH_VARARGS, "float64 normal_fill from PyTorch's stream words"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_random_fill", "PyTorch's float random fills, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__random_fill(void)
{
#if HAVE_AVX2_COPY
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObject(m, "simd", PyBool_FromLong(use_avx2)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
