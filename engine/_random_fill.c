/* PyTorch's CPU float fills from its random stream in C, bit for bit: uniform (rand, uniform_,
and so every uniform nn.init) and normal_fill (randn, normal_ of 16 or more contiguous
elements), float32 and float64.

_distributions does the same with numpy where this module is not built (it is optional): there
float32 Box-Muller with PyTorch's AVX2 log and sin/cos polynomials takes about 80 numpy passes
over the data, ten times PyTorch's time for randn(10**6), and a uniform with bounds several;
here each is one pass. Both give the same bits (tests/engine/test_random_kernels.py holds them
to each other and to PyTorch). The words themselves come from the generator (numpy's
mt19937, which is PyTorch's), drawn in bulk before the call.

The float roundings are the point, so the module is compiled with -ffp-contract=off (no fused
multiply-add unless written as fmaf/fma, where PyTorch's compiler fuses) and without fast-math;
-fno-math-errno only lets sqrt be one instruction. The maths is in _random_fill_kernel.h,
compiled twice on x86-64: portable (fmaf from libm, correctly rounded like the instruction) and
for AVX2 with FMA, chosen at import by what the CPU has. Either gives the same bits.

uniform_f32(words, out, low, high, portable=False)
    `out`: a writable float32 buffer of n elements; `words`: n 32-bit words of PyTorch's stream.
    out[i] = the top-24-bit uniform of words[i] * (high - low) + low, one rounding, low and
    high rounded to float32 first and their difference taken in float32, as PyTorch does.
uniform_f64(words, out, low, high, portable=False)
    The same in float64, from 53 bits of two words per element (the first word high).
normal_f32(words, out, mean, std, portable=False)
    `out`: n >= 16 float32 elements; `words`: n words, then 16 more when n is not a multiple of
    16 (the fresh uniforms PyTorch draws to recompute the last 16 places). Fills `out` as
    normal_fill_AVX2 fills its tensor, each value fused into value * std + mean.
normal_f64(words, out, mean, std, portable=False)
    PyTorch's generic normal_fill_16 in float64 (libm's log, cos and sin), two words a uniform.
simd: whether the calls run the AVX2 copy (False: portable only; `portable` forces it). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

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

static int use_avx2;

enum { UNIFORM_F32, UNIFORM_F64, NORMAL_F32, NORMAL_F64 };

static PyObject *fill(PyObject *args, int kind)
{
    Py_buffer words, out;
    double a, b; /* low and high, or mean and std */
    int portable = 0;
    if (!PyArg_ParseTuple(args, "y*w*dd|p", &words, &out, &a, &b, &portable))
        return NULL;
    int wide = kind == UNIFORM_F64 || kind == NORMAL_F64, normal = kind >= NORMAL_F32;
    Py_ssize_t item = wide ? 8 : 4, per = wide ? 2 : 1; /* words per element */
    Py_ssize_t n = out.len / item;
    Py_ssize_t tail = normal && n % 16 ? 16 : 0;
    if (out.len % item || (normal && n < 16) || words.len != (n + tail) * per * 4) {
        PyErr_Format(PyExc_ValueError,
                     "random fill: %zd output bytes (%zd-byte elements%s) and %zd word bytes "
                     "do not fit",
                     out.len, item, normal ? ", at least 16" : "", words.len);
        PyBuffer_Release(&words);
        PyBuffer_Release(&out);
        return NULL;
    }
    int simd = use_avx2 && !portable;
    (void)simd; /* unused where there is no AVX2 copy */
    const uint32_t *w = (const uint32_t *)words.buf;
    Py_ssize_t blocks = n / 16;
    Py_BEGIN_ALLOW_THREADS;
    switch (kind) {
    case UNIFORM_F32: {
        float low = (float)a, high = (float)b;
        PICK(uniform_f32, simd)(w, (float *)out.buf, n, low, high - low);
        break;
    }
    case UNIFORM_F64:
        PICK(uniform_f64, simd)(w, (double *)out.buf, n, a, b - a);
        break;
    case NORMAL_F32: {
        float *o = (float *)out.buf, mean = (float)a, std = (float)b;
        PICK(blocks_f32, simd)(w, o, blocks, mean, std);
        if (tail)
            PICK(blocks_f32, simd)(w + n, o + n - 16, 1, mean, std);
        break;
    }
    default: {
        double *o = (double *)out.buf;
        PICK(blocks_f64, simd)(w, o, blocks, a, b);
        if (tail)
            PICK(blocks_f64, simd)(w + 2 * n, o + n - 16, 1, a, b);
    }
    }
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&words);
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
