/* PyTorch's normal_fill (a contiguous float tensor of 16 or more normals) in C, bit for bit.

_distributions.normal_fill does this with numpy where the module is not built (it is optional):
float32 Box-Muller with PyTorch's AVX2 log and sin/cos polynomials takes about 80 numpy passes
over the data there, ten times PyTorch's time for randn(10**6); here it is one pass. Both give
the same bits (tests/engine/test_random_kernels.py holds them to each other and to PyTorch).

The float roundings are the point, so the module is compiled with -ffp-contract=off (no fused
multiply-add unless written as fmaf/fma, where PyTorch's compiler fuses) and without fast-math;
-fno-math-errno only lets sqrt be one instruction. The maths is in _normal_fill_kernel.h,
compiled twice on x86-64: portable (fmaf from libm, correctly rounded like the instruction) and
for AVX2 with FMA, chosen at import by what the CPU has. Either gives the same bits.

f32(words, out, mean, std, portable=False)
    `out`: a writable float32 buffer of n >= 16 elements. `words`: n 32-bit words of PyTorch's
    stream, then 16 more when n is not a multiple of 16 (the fresh uniforms PyTorch draws to
    recompute the last 16 places). Fills `out` as normal_fill_AVX2 fills its tensor, each value
    fused into value * std + mean, mean and std rounded to float32 first as PyTorch casts them.
f64(words, out, mean, std, portable=False)
    The same for float64 (PyTorch's generic normal_fill_16, libm's log, cos and sin): two words
    per uniform, the first the high half, so 2n words (+ 32).
simd: whether f32 and f64 run the AVX2 copy (False: portable only, or forced by `portable`). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define KERNEL(name) name##_portable
#include "_normal_fill_kernel.h"
#undef KERNEL
#undef LANES

#if defined(__GNUC__) && defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define KERNEL(name) name##_avx2
#include "_normal_fill_kernel.h"
#undef KERNEL
#undef LANES
#pragma GCC pop_options
#define HAVE_AVX2_COPY 1
#else
#define HAVE_AVX2_COPY 0
#endif

static int use_avx2;

static PyObject *fill(PyObject *args, int wide)
{
    Py_buffer words, out;
    double mean, std;
    int portable = 0;
    if (!PyArg_ParseTuple(args, "y*w*dd|p", &words, &out, &mean, &std, &portable))
        return NULL;
    Py_ssize_t item = wide ? 8 : 4, per = wide ? 2 : 1;
    Py_ssize_t n = out.len / item;
    Py_ssize_t tail = n % 16 ? 16 : 0;
    if (out.len % item || n < 16 || words.len != (n + tail) * per * 4) {
        PyErr_Format(PyExc_ValueError,
                     "normal fill: %zd output bytes (%zd-byte elements, at least 16) and %zd "
                     "word bytes do not fit",
                     out.len, item, words.len);
        PyBuffer_Release(&words);
        PyBuffer_Release(&out);
        return NULL;
    }
    int simd = use_avx2 && !portable;
    const uint32_t *w = (const uint32_t *)words.buf;
    Py_ssize_t blocks = n / 16;
    Py_BEGIN_ALLOW_THREADS;
    if (wide) {
        double *o = (double *)out.buf;
        void (*run)(const uint32_t *, double *, Py_ssize_t, double, double) = blocks_f64_portable;
#if HAVE_AVX2_COPY
        if (simd)
            run = blocks_f64_avx2;
#endif
        run(w, o, blocks, mean, std);
        if (tail)
            run(w + 2 * n, o + n - 16, 1, mean, std);
    } else {
        float *o = (float *)out.buf;
        float m = (float)mean, s = (float)std;
        void (*run)(const uint32_t *, float *, Py_ssize_t, float, float) = blocks_f32_portable;
#if HAVE_AVX2_COPY
        if (simd)
            run = blocks_f32_avx2;
#endif
        run(w, o, blocks, m, s);
        if (tail)
            run(w + n, o + n - 16, 1, m, s);
    }
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&words);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyObject *f32(PyObject *self, PyObject *args)
{
    return fill(args, 0);
}

static PyObject *f64(PyObject *self, PyObject *args)
{
    return fill(args, 1);
}

static PyMethodDef methods[] = {
    {"f32", f32, METH_VARARGS, "float32 normal_fill from PyTorch's stream words"},
    {"f64", f64, METH_VARARGS, "float64 normal_fill from PyTorch's stream words"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_normal_fill", "PyTorch's normal_fill, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__normal_fill(void)
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
