/* Fused float32 elementwise kernels for GELU (approximate="none"), bit for bit the numpy
sequences they replace in engine/ops/_special.py (_erf32) and engine/ops/activations.py
(_gelu_derivative_erf).

Each numpy step there is one pass over the whole array and rounds to float32: the rational erf
of a (1024, 512) activation is about 27 passes, more than a millisecond, where one pass that
keeps each element in registers does the same float32 operations in the same order. Same
operations, same order, same roundings, so the same bits: compiled with -ffp-contract=off (no
fused multiply-add) and without fast-math; the clips keep numpy's NaN (a NaN compares false
and passes through). Optional, like _random_fill.c: where it is not built the numpy steps run
(tests/engine/test_fused.py holds the two to each other). Every call releases the GIL, so the
engine's intra-op threads run shares of one array in parallel.

erf32(x, out, p, q, bound, add, lo, hi, times=None)
    x, out: float32 buffers of n elements (out writable, may be x). p: the 6 numerator
    coefficients, q: the 5 of the monic denominator (constant first), as _f32_coefs gives them,
    each rounded to float32 as numpy rounds a Python float against a float32 array.
    s = clip(x, -bound, bound); t = s * s; num = Horner(p, t) * s; den = Horner(q + [1], t);
    r = num / den (+ add when add != 0); out = clip(r, lo, hi).
    With `times` (a writable float32 buffer of n elements) also times = x * out, GELU's value.
neg_half_sq(x, out)
    out = (x * x) * -0.5.
relu(x, out)
    out = np.maximum(x, 0): x where x > 0, x's own NaN, else +0 (numpy gives +0 for -0 too).
relu_grad(g, y, out)
    out = g * (y != 0), the mask as 1.0 or 0.0 (so g * 0 keeps its sign, and inf * 0 is NaN).
adamw_f32(param, grad, exp_avg, exp_avg_sq, decay, keep, 1 - beta1, beta2, 1 - beta2,
          bias_correction2_sqrt, eps, lr / bias_correction1)
    AdamW._update's numpy steps (optim/adamw.py, no amsgrad, no maximize) on each element, in
    place on param and the two averages; each scalar rounded to float32 as numpy rounds it.
put_planes(idx, g, out, planes, per, hw)
    out (planes, hw) float32 zeroed, then out[p, idx[p, j]] = g[p, j] for idx (planes, per)
    int64 indices within a plane that never repeat in it (a max pool's gradient put back):
    numpy's zeros and fancy assignment, the same bits. IndexError for an index outside [0, hw).
row_max(x, out, n)
    out[r] = the largest of x's row r (rows of n floats) other than NaN, which compares false
    (a row's first element is kept even when NaN). A maximum is exact, so the order of the
    comparisons does not change it (but for which zero of a row holding both: softmax's result
    is the same bits either way, see softmax.py).
gelu_grad_finish(e, x, cdf, inv)
    e = ((e * inv) * x) + cdf, in place: e holds exp(-x*x/2) (numpy's exp: its float32 exp has
    its own SIMD rounding, which is why the derivative is two calls around np.exp). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

static int get_f32(PyObject *obj, Py_buffer *view, int writable, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                                          (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0) {
        PyErr_Format(PyExc_TypeError, "%s: a contiguous float32 buffer is needed", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int get_coefs(PyObject *seq, float *out, Py_ssize_t n, const char *name) {
    PyObject *fast = PySequence_Fast(seq, name);
    if (fast == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd coefficients expected", name, n);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1.0 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (float)v;
    }
    Py_DECREF(fast);
    return 0;
}

static inline float clip(float v, float lo, float hi) {
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    return v;
}

CLONES static void erf_loop(const float *x, float *out, float *times, Py_ssize_t n,
                            const float *p, const float *q, float bound, float add, int has_add,
                            float lo, float hi) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float xi = x[i];
        float s = clip(xi, -bound, bound);
        float t = s * s;
        float num = t * p[5];
        num = num + p[4];
        num = num * t;
        num = num + p[3];
        num = num * t;
        num = num + p[2];
        num = num * t;
        num = num + p[1];
        num = num * t;
        num = num + p[0];
        num = num * s;
        float den = t + q[4];
        den = den * t;
        den = den + q[3];
        den = den * t;
        den = den + q[2];
        den = den * t;
        den = den + q[1];
        den = den * t;
        den = den + q[0];
        float r = num / den;
        if (has_add)
            r = r + add;
        r = clip(r, lo, hi);
        out[i] = r;
        if (times != NULL)
            times[i] = xi * r;
    }
}

static PyObject *erf32(PyObject *self, PyObject *args) {
    PyObject *xo, *oo, *po, *qo, *to = Py_None;
    double bound, add, lo, hi;
    if (!PyArg_ParseTuple(args, "OOOOdddd|O", &xo, &oo, &po, &qo, &bound, &add, &lo, &hi, &to))
        return NULL;
    float p[6], q[5];
    if (get_coefs(po, p, 6, "p") < 0 || get_coefs(qo, q, 5, "q") < 0)
        return NULL;
    Py_buffer x, o, t;
    if (get_f32(xo, &x, 0, "x") < 0)
        return NULL;
    if (get_f32(oo, &o, 1, "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    int has_times = to != Py_None;
    if (has_times && get_f32(to, &t, 1, "times") < 0) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&o);
        return NULL;
    }
    Py_ssize_t n = x.len / 4;
    if (o.len / 4 != n || (has_times && t.len / 4 != n)) {
        PyErr_SetString(PyExc_ValueError, "erf32: buffers of different sizes");
    } else {
        Py_BEGIN_ALLOW_THREADS
        erf_loop((const float *)x.buf, (float *)o.buf, has_times ? (float *)t.buf : NULL, n, p,
                 q, (float)bound, (float)add, add != 0.0, (float)lo, (float)hi);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&o);
    if (has_times)
        PyBuffer_Release(&t);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

CLONES static void neg_half_sq_loop(const float *x, float *out, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float v = x[i] * x[i];
        out[i] = v * -0.5f;
    }
}

/* fn(x, out): an elementwise float32 loop of x into out (same sizes), without the GIL */
static PyObject *elementwise(PyObject *args, const char *name,
                             void (*loop)(const float *, float *, Py_ssize_t)) {
    PyObject *xo, *oo;
    if (!PyArg_ParseTuple(args, "OO", &xo, &oo))
        return NULL;
    Py_buffer x, o;
    if (get_f32(xo, &x, 0, "x") < 0)
        return NULL;
    if (get_f32(oo, &o, 1, "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    if (o.len != x.len) {
        PyErr_Format(PyExc_ValueError, "%s: buffers of different sizes", name);
    } else {
        Py_BEGIN_ALLOW_THREADS
        loop((const float *)x.buf, (float *)o.buf, x.len / 4);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&o);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *neg_half_sq(PyObject *self, PyObject *args) {
    return elementwise(args, "neg_half_sq", neg_half_sq_loop);
}

CLONES static void grad_finish_loop(float *e, const float *x, const float *cdf, float inv,
                                    Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float v = e[i] * inv;
        v = v * x[i];
        e[i] = v + cdf[i];
    }
}

static PyObject *gelu_grad_finish(PyObject *self, PyObject *args) {
    PyObject *eo, *xo, *co;
    double inv;
    if (!PyArg_ParseTuple(args, "OOOd", &eo, &xo, &co, &inv))
        return NULL;
    Py_buffer e, x, c;
    if (get_f32(eo, &e, 1, "e") < 0)
        return NULL;
    if (get_f32(xo, &x, 0, "x") < 0) {
        PyBuffer_Release(&e);
        return NULL;
    }
    if (get_f32(co, &c, 0, "cdf") < 0) {
        PyBuffer_Release(&e);
        PyBuffer_Release(&x);
        return NULL;
    }
    if (x.len != e.len || c.len != e.len) {
        PyErr_SetString(PyExc_ValueError, "gelu_grad_finish: buffers of different sizes");
    } else {
        Py_BEGIN_ALLOW_THREADS
        grad_finish_loop((float *)e.buf, (const float *)x.buf, (const float *)c.buf, (float)inv,
                         e.len / 4);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&e);
    PyBuffer_Release(&x);
    PyBuffer_Release(&c);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

CLONES static void row_max_loop(const float *x, float *out, Py_ssize_t rows, Py_ssize_t n) {
    for (Py_ssize_t r = 0; r < rows; r++) {
        const float *row = x + r * n;
        /* 16 lanes side by side (independent, so the compiler keeps them in vector registers),
        then the lanes and the tail */
        float lane[16];
        Py_ssize_t j = 0;
        if (n >= 16) {
            for (int k = 0; k < 16; k++)
                lane[k] = row[k];
            for (j = 16; j + 16 <= n; j += 16)
                for (int k = 0; k < 16; k++) {
                    float v = row[j + k];
                    lane[k] = v > lane[k] ? v : lane[k];
                }
        } else {
            for (int k = 0; k < 16; k++)
                lane[k] = row[0];
        }
        float m = lane[0];
        for (int k = 1; k < 16; k++)
            m = lane[k] > m ? lane[k] : m;
        for (; j < n; j++) {
            float v = row[j];
            m = v > m ? v : m;
        }
        out[r] = m;
    }
}

static PyObject *row_max(PyObject *self, PyObject *args) {
    PyObject *xo, *oo;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OOn", &xo, &oo, &n))
        return NULL;
    Py_buffer x, o;
    if (get_f32(xo, &x, 0, "x") < 0)
        return NULL;
    if (get_f32(oo, &o, 1, "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    Py_ssize_t rows = o.len / 4;
    if (n <= 0 || x.len / 4 != rows * n) {
        PyErr_SetString(PyExc_ValueError, "row_max: x must hold len(out) rows of n > 0");
    } else {
        Py_BEGIN_ALLOW_THREADS
        row_max_loop((const float *)x.buf, (float *)o.buf, rows, n);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&o);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

CLONES static void relu_loop(const float *x, float *out, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float v = x[i];
        out[i] = (v > 0.0f || v != v) ? v : 0.0f;
    }
}

CLONES static void relu_grad_loop(const float *g, const float *y, float *out, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = g[i] * (y[i] != 0.0f ? 1.0f : 0.0f);
}

static PyObject *relu(PyObject *self, PyObject *args) {
    return elementwise(args, "relu", relu_loop);
}

static PyObject *relu_grad(PyObject *self, PyObject *args) {
    PyObject *go, *yo, *oo;
    if (!PyArg_ParseTuple(args, "OOO", &go, &yo, &oo))
        return NULL;
    Py_buffer g, y, o;
    if (get_f32(go, &g, 0, "g") < 0)
        return NULL;
    if (get_f32(yo, &y, 0, "y") < 0) {
        PyBuffer_Release(&g);
        return NULL;
    }
    if (get_f32(oo, &o, 1, "out") < 0) {
        PyBuffer_Release(&g);
        PyBuffer_Release(&y);
        return NULL;
    }
    if (y.len != g.len || o.len != g.len) {
        PyErr_SetString(PyExc_ValueError, "relu_grad: buffers of different sizes");
    } else {
        Py_BEGIN_ALLOW_THREADS
        relu_grad_loop((const float *)g.buf, (const float *)y.buf, (float *)o.buf, g.len / 4);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&g);
    PyBuffer_Release(&y);
    PyBuffer_Release(&o);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

CLONES static void adamw_loop(float *p, const float *g, float *m, float *v, Py_ssize_t n,
                              int decay, float keep, float one_minus_beta1, float beta2,
                              float one_minus_beta2, float bc2_sqrt, float eps, float step) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float pi = p[i], gi = g[i];
        if (decay)
            pi = pi * keep;
        float t = gi - m[i];
        t = t * one_minus_beta1;
        float mi = m[i] + t;
        float vi = v[i] * beta2;
        t = gi * one_minus_beta2;
        t = t * gi;
        vi = vi + t;
        float d = sqrtf(vi);
        d = d / bc2_sqrt;
        d = d + eps;
        float u = mi / d;
        u = u * step;
        p[i] = pi - u;
        m[i] = mi;
        v[i] = vi;
    }
}

static PyObject *adamw_f32(PyObject *self, PyObject *args) {
    PyObject *po, *go, *mo, *vo;
    int decay;
    double keep, omb1, b2, omb2, bc2, eps, step;
    if (!PyArg_ParseTuple(args, "OOOOpddddddd", &po, &go, &mo, &vo, &decay, &keep, &omb1, &b2,
                          &omb2, &bc2, &eps, &step))
        return NULL;
    Py_buffer p, g, m, v;
    if (get_f32(po, &p, 1, "param") < 0)
        return NULL;
    if (get_f32(go, &g, 0, "grad") < 0) {
        PyBuffer_Release(&p);
        return NULL;
    }
    if (get_f32(mo, &m, 1, "exp_avg") < 0) {
        PyBuffer_Release(&p);
        PyBuffer_Release(&g);
        return NULL;
    }
    if (get_f32(vo, &v, 1, "exp_avg_sq") < 0) {
        PyBuffer_Release(&p);
        PyBuffer_Release(&g);
        PyBuffer_Release(&m);
        return NULL;
    }
    if (g.len != p.len || m.len != p.len || v.len != p.len) {
        PyErr_SetString(PyExc_ValueError, "adamw_f32: buffers of different sizes");
    } else {
        Py_BEGIN_ALLOW_THREADS
        adamw_loop((float *)p.buf, (const float *)g.buf, (float *)m.buf, (float *)v.buf,
                   p.len / 4, decay, (float)keep, (float)omb1, (float)b2, (float)omb2,
                   (float)bc2, (float)eps, (float)step);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&p);
    PyBuffer_Release(&g);
    PyBuffer_Release(&m);
    PyBuffer_Release(&v);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static int put_planes_loop(const int64_t *idx, const float *g, float *out, Py_ssize_t planes,
                           Py_ssize_t per, Py_ssize_t hw) {
    memset(out, 0, (size_t)(planes * hw) * sizeof(float));
    for (Py_ssize_t p = 0; p < planes; p++, idx += per, g += per, out += hw)
        for (Py_ssize_t j = 0; j < per; j++) {
            int64_t at = idx[j];
            if (at < 0 || at >= hw)
                return 1;
            out[at] = g[j];
        }
    return 0;
}

static PyObject *put_planes(PyObject *self, PyObject *args) {
    PyObject *io, *go, *oo;
    Py_ssize_t planes, per, hw;
    if (!PyArg_ParseTuple(args, "OOOnnn", &io, &go, &oo, &planes, &per, &hw))
        return NULL;
    Py_buffer ix, g, o;
    if (PyObject_GetBuffer(io, &ix, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (get_f32(go, &g, 0, "g") < 0) {
        PyBuffer_Release(&ix);
        return NULL;
    }
    if (get_f32(oo, &o, 1, "out") < 0) {
        PyBuffer_Release(&ix);
        PyBuffer_Release(&g);
        return NULL;
    }
    int bad = 0;
    if (planes < 0 || per < 0 || hw < 0 || ix.itemsize != 8 || ix.len != planes * per * 8 ||
        g.len != planes * per * 4 || o.len != planes * hw * 4) {
        PyErr_SetString(PyExc_ValueError, "put_planes: sizes do not agree");
    } else {
        Py_BEGIN_ALLOW_THREADS
        bad = put_planes_loop((const int64_t *)ix.buf, (const float *)g.buf, (float *)o.buf,
                              planes, per, hw);
        Py_END_ALLOW_THREADS
        if (bad)
            PyErr_SetString(PyExc_IndexError, "put_planes: an index outside its plane");
    }
    PyBuffer_Release(&ix);
    PyBuffer_Release(&g);
    PyBuffer_Release(&o);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"put_planes", put_planes, METH_VARARGS, "out = 0, then out[p, idx[p, j]] = g[p, j]"},
    {"adamw_f32", adamw_f32, METH_VARARGS, "one AdamW step of float32 arrays, in place"},
    {"relu", relu, METH_VARARGS, "out = np.maximum(x, 0) in float32"},
    {"relu_grad", relu_grad, METH_VARARGS, "out = g * (y != 0) in float32"},
    {"row_max", row_max, METH_VARARGS, "the maximum of each row of n floats, NaN skipped"},
    {"erf32", erf32, METH_VARARGS, "float32 rational erf with its constants folded in"},
    {"neg_half_sq", neg_half_sq, METH_VARARGS, "out = (x * x) * -0.5 in float32"},
    {"gelu_grad_finish", gelu_grad_finish, METH_VARARGS, "e = e * inv * x + cdf in float32"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fused", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fused(void) { return PyModule_Create(&module); }
