/* The per-tensor loops of summary.py's summary_tables, in C.

A traced run summarises thousands of small tensors (every value and every edge's gradient of a
1,000-node graph), and in Python each of them costs a few map() and numpy steps: more than the
op that made it. These two functions do the per-tensor part in one pass each; summary.py keeps
everything else (table layout, JSON spelling, rows with NaN or Inf) and a numpy path that does
the same where this module is not built (it is optional) or a tensor is not a numpy array.

scan(tensors, first=0) -> (where, groups), or None when some tensor's value is not a numpy array
    Dedupes the tensors by identity and groups them by (dtype, shape) in order of first
    appearance. where[i] is the row of tensors[i], counting rows across the groups in order
    from `first`, or None where tensors[i] is None (a record without a tensor); each group is
    (arrays, tensors, requires_grad, grad_fn) of its rows, grad_fn holding the grad_fn's class
    name or None.

stats(arrays, contiguous, values, stats) -> the rows that need another look
    For arrays of one float32 or float64 dtype and shape, with n elements each: copies array k
    into row k of `values` ((rows, n), C order) and writes row k of `stats` ((rows, 5) float64:
    min, max, mean, std, L2 norm). Arrays that are not C-contiguous are first passed through
    `contiguous` (numpy.ascontiguousarray). Returns the rows holding NaN or Inf, or whose
    stats overflow: summary.py redoes those and counts their NaN and Inf. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>

typedef struct {
    PyArray_Descr *dtype; /* borrowed: its first array holds it */
    int ndim;
    npy_intp *shape;      /* borrowed, likewise */
    PyObject *arrays, *tensors, *requires_grad, *grad_fn; /* new references */
} Group;

static PyObject *s_data, *s_requires_grad, *s_grad_fn, *s_name;

static int same_key(const Group *g, PyArrayObject *a)
{
    int ndim = PyArray_NDIM(a);
    if (g->ndim != ndim)
        return 0;
    npy_intp *shape = PyArray_DIMS(a);
    for (int d = 0; d < ndim; d++)
        if (g->shape[d] != shape[d])
            return 0;
    /* one dtype object throughout is the usual case; equal ones in other objects too */
    return g->dtype == PyArray_DESCR(a) || PyArray_EquivTypes(g->dtype, PyArray_DESCR(a));
}

static void groups_free(Group *groups, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_XDECREF(groups[i].arrays);
        Py_XDECREF(groups[i].tensors);
        Py_XDECREF(groups[i].requires_grad);
        Py_XDECREF(groups[i].grad_fn);
    }
    PyMem_Free(groups);
}

/* the grad_fn column's value: the class name of the tensor's grad_fn, or None */
static PyObject *grad_fn_name(PyObject *tensor, PyObject *names)
{
    PyObject *fn = PyObject_GetAttr(tensor, s_grad_fn);
    if (!fn)
        return NULL;
    if (fn == Py_None)
        return fn;
    PyObject *cls = (PyObject *)Py_TYPE(fn);
    PyObject *name = PyDict_GetItemWithError(names, cls); /* borrowed */
    if (name) {
        Py_INCREF(name);
    } else if (!PyErr_Occurred()) {
        name = PyObject_GetAttr(cls, s_name);
        if (name && PyDict_SetItem(names, cls, name) < 0)
            Py_CLEAR(name);
    }
    Py_DECREF(fn);
    return name;
}

/* append the tensor's row to its group's lists */
static int add_row(Group *g, PyObject *t, PyObject *data, PyObject *names)
{
    if (PyList_Append(g->arrays, data) < 0 || PyList_Append(g->tensors, t) < 0)
        return -1;
    PyObject *flag = PyObject_GetAttr(t, s_requires_grad);
    if (!flag)
        return -1;
    int truth = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (truth < 0 || PyList_Append(g->requires_grad, truth ? Py_True : Py_False) < 0)
        return -1;
    PyObject *name = grad_fn_name(t, names);
    if (!name)
        return -1;
    int failed = PyList_Append(g->grad_fn, name) < 0;
    Py_DECREF(name);
    return failed ? -1 : 0;
}

/* the rows' numbers, counting across the groups in order, and the groups as tuples */
static PyObject *scanned(Group *groups, Py_ssize_t n_groups, const Py_ssize_t *group_of,
                         const Py_ssize_t *index_in, Py_ssize_t n, Py_ssize_t first)
{
    Py_ssize_t *offset = PyMem_Malloc((n_groups ? n_groups : 1) * sizeof(Py_ssize_t));
    if (!offset)
        return PyErr_NoMemory();
    Py_ssize_t rows = first;
    for (Py_ssize_t g = 0; g < n_groups; g++) {
        offset[g] = rows;
        rows += PyList_GET_SIZE(groups[g].arrays);
    }
    PyObject *where = PyList_New(n), *out = PyList_New(n_groups), *result = NULL;
    for (Py_ssize_t k = 0; where && out && k < n; k++) {
        PyObject *row = group_of[k] < 0 ? Py_NewRef(Py_None)
                                        : PyLong_FromSsize_t(offset[group_of[k]] + index_in[k]);
        if (!row)
            Py_CLEAR(where);
        else
            PyList_SET_ITEM(where, k, row);
    }
    for (Py_ssize_t g = 0; where && out && g < n_groups; g++) {
        Group *grp = &groups[g];
        PyObject *tuple =
            PyTuple_Pack(4, grp->arrays, grp->tensors, grp->requires_grad, grp->grad_fn);
        if (!tuple)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, g, tuple);
    }
    if (where && out)
        result = PyTuple_Pack(2, where, out);
    Py_XDECREF(where);
    Py_XDECREF(out);
    PyMem_Free(offset);
    return result;
}

/* An open-addressing table from a tensor's address to its first position in the batch: the
   dedupe by identity, with no Python object made per tensor. */
typedef struct {
    PyObject *key;
    Py_ssize_t pos;
} Seen;

static Py_ssize_t seen_capacity(Py_ssize_t n)
{
    Py_ssize_t cap = 8;
    while (cap < 2 * n)
        cap <<= 1;
    return cap;
}

/* the first position of `t`, or -1 after making `pos` its first */
static Py_ssize_t seen_before(Seen *seen, Py_ssize_t cap, PyObject *t, Py_ssize_t pos)
{
    size_t h = ((size_t)(uintptr_t)t >> 4) * (size_t)0x9E3779B97F4A7C15ULL;
    for (size_t i = h & (size_t)(cap - 1);; i = (i + 1) & (size_t)(cap - 1)) {
        if (seen[i].key == t)
            return seen[i].pos;
        if (!seen[i].key) {
            seen[i].key = t;
            seen[i].pos = pos;
            return -1;
        }
    }
}

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *arg;
    Py_ssize_t first = 0;
    if (!PyArg_ParseTuple(args, "O|n:scan", &arg, &first))
        return NULL;
    PyObject *seq = PySequence_Fast(arg, "scan() takes a sequence of tensors");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *result = NULL;
    Py_ssize_t n_groups = 0, cap = 4, last = -1, seen_cap = seen_capacity(n);
    Group *groups = PyMem_Calloc(cap, sizeof(Group));
    Seen *seen = PyMem_Calloc(seen_cap, sizeof(Seen)); /* borrowed keys: `seq` holds them */
    PyObject *names = PyDict_New(); /* grad_fn class -> its name */
    Py_ssize_t *group_of = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    Py_ssize_t *index_in = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    if (!groups || !seen || !names || !group_of || !index_in) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *t = items[k];
        if (t == Py_None) { /* no tensor: no row */
            group_of[k] = -1;
            continue;
        }
        Py_ssize_t j = seen_before(seen, seen_cap, t, k);
        if (j >= 0) { /* a repeat: the row of its first appearance */
            group_of[k] = group_of[j];
            index_in[k] = index_in[j];
            continue;
        }
        int failed;
        PyObject *data = PyObject_GetAttr(t, s_data);
        if (!data)
            goto done;
        if (!PyArray_Check(data)) { /* on a GPU: summary.py's numpy path takes the batch */
            Py_DECREF(data);
            result = Py_NewRef(Py_None);
            goto done;
        }
        PyArrayObject *a = (PyArrayObject *)data;
        Py_ssize_t g = -1;
        if (last >= 0 && same_key(&groups[last], a))
            g = last; /* the usual case: the same shape as the tensor before */
        for (Py_ssize_t i = 0; g < 0 && i < n_groups; i++)
            if (same_key(&groups[i], a))
                g = i;
        if (g < 0) {
            if (n_groups == cap) {
                Group *more = PyMem_Realloc(groups, 2 * cap * sizeof(Group));
                if (!more) {
                    Py_DECREF(data);
                    PyErr_NoMemory();
                    goto done;
                }
                memset(more + cap, 0, cap * sizeof(Group));
                groups = more;
                cap *= 2;
            }
            Group *grp = &groups[n_groups++];
            grp->dtype = PyArray_DESCR(a);
            grp->ndim = PyArray_NDIM(a);
            grp->shape = PyArray_DIMS(a);
            grp->arrays = PyList_New(0);
            grp->tensors = PyList_New(0);
            grp->requires_grad = PyList_New(0);
            grp->grad_fn = PyList_New(0);
            if (!grp->arrays || !grp->tensors || !grp->requires_grad || !grp->grad_fn) {
                Py_DECREF(data);
                goto done;
            }
            g = n_groups - 1;
        }
        last = g;
        group_of[k] = g;
        index_in[k] = PyList_GET_SIZE(groups[g].arrays);
        failed = add_row(&groups[g], t, data, names) < 0;
        Py_DECREF(data);
        if (failed)
            goto done;
    }
    result = scanned(groups, n_groups, group_of, index_in, n, first);

done:
    PyMem_Free(seen);
    Py_XDECREF(names);
    PyMem_Free(group_of);
    PyMem_Free(index_in);
    if (groups)
        groups_free(groups, n_groups);
    Py_DECREF(seq);
    return result;
}

/* A row's stats from its min, max, mean and sum of squared deviations: writes them into out and
   returns 0, or 1 when the row holds NaN or Inf (not `finite`) or its stats overflow (summary.py
   redoes such rows). The sum of squares is the deviations' plus n * mean^2, two sums that never
   cancel. */
static int finish_row(int finite, double lo, double hi, double mean, double squares,
                      Py_ssize_t n, double *out)
{
    if (!finite)
        return 1;
    out[0] = lo;
    out[1] = hi;
    out[2] = mean;
    out[3] = sqrt(squares / (double)n);
    out[4] = sqrt(squares + (double)n * mean * mean);
    for (int j = 0; j < 5; j++)
        if (!isfinite(out[j]))
            return 1;
    return 0;
}

/* min, max, mean, std (population) and L2 norm of one row, the sums in double (see finish_row
   for what it returns). The deviations from the mean are summed in a second pass, so an offset
   like 1e8 does not spoil the std. A row of one value gets that value as its mean, exactly, and
   no spread (a sum does not give it back): its deviations are all zero. */
#define ROW_STATS(TYPE)                                                                      \
    static int row_stats_##TYPE(const TYPE *x, Py_ssize_t n, double *out)                   \
    {                                                                                        \
        TYPE lo = x[0], hi = x[0];                                                           \
        double sum = 0.0;                                                                    \
        int finite = 1;                                                                      \
        for (Py_ssize_t i = 0; i < n; i++) {                                                 \
            TYPE v = x[i];                                                                   \
            finite &= isfinite(v) != 0;                                                      \
            lo = v < lo ? v : lo;                                                            \
            hi = v > hi ? v : hi;                                                            \
            sum += (double)v;                                                                \
        }                                                                                    \
        if (!finite)                                                                         \
            return 1;                                                                        \
        double mean = lo == hi ? (double)lo : sum / (double)n, squares = 0.0;                \
        for (Py_ssize_t i = 0; lo != hi && i < n; i++) {                                     \
            double d = (double)x[i] - mean;                                                  \
            squares += d * d;                                                                \
        }                                                                                    \
        return finish_row(finite, lo, hi, mean, squares, n, out);                            \
    }

/* The same for four rows of n values one after another (x; out: four rows of 5), into redo[4].
   Each row's sums run in that row's order, as row_stats runs them, so every row gets the same
   numbers; four independent chains of additions take about the time of one (a row's sum waits
   on its previous addition, not on the other rows'). A row of one value runs its second pass
   too: its deviations are all zero, so its squares stay 0, as row_stats leaves them. */
#define FIRST_PASS(r)                                                                        \
    {                                                                                        \
        TYPE v = x##r[i];                                                                    \
        fin##r &= isfinite(v) != 0;                                                          \
        lo##r = v < lo##r ? v : lo##r;                                                       \
        hi##r = v > hi##r ? v : hi##r;                                                       \
        sum##r += (double)v;                                                                 \
    }
#define SECOND_PASS(r)                                                                       \
    {                                                                                        \
        double d = (double)x##r[i] - mean##r;                                                \
        sq##r += d * d;                                                                      \
    }
#define ROW_STATS4(TYPE)                                                                     \
    static void row_stats4_##TYPE(const TYPE *x, Py_ssize_t n, double *out, int *redo)      \
    {                                                                                        \
        const TYPE *x0 = x, *x1 = x + n, *x2 = x + 2 * n, *x3 = x + 3 * n;                   \
        TYPE lo0 = x0[0], hi0 = x0[0], lo1 = x1[0], hi1 = x1[0];                             \
        TYPE lo2 = x2[0], hi2 = x2[0], lo3 = x3[0], hi3 = x3[0];                             \
        double sum0 = 0.0, sum1 = 0.0, sum2 = 0.0, sum3 = 0.0;                               \
        int fin0 = 1, fin1 = 1, fin2 = 1, fin3 = 1;                                          \
        for (Py_ssize_t i = 0; i < n; i++) {                                                 \
            FIRST_PASS(0) FIRST_PASS(1) FIRST_PASS(2) FIRST_PASS(3)                          \
        }                                                                                    \
        double mean0 = lo0 == hi0 ? (double)lo0 : sum0 / (double)n;                         \
        double mean1 = lo1 == hi1 ? (double)lo1 : sum1 / (double)n;                         \
        double mean2 = lo2 == hi2 ? (double)lo2 : sum2 / (double)n;                         \
        double mean3 = lo3 == hi3 ? (double)lo3 : sum3 / (double)n;                         \
        double sq0 = 0.0, sq1 = 0.0, sq2 = 0.0, sq3 = 0.0;                                   \
        if (fin0 & fin1 & fin2 & fin3) { /* else the rows are redone one by one */          \
            for (Py_ssize_t i = 0; i < n; i++) {                                             \
                SECOND_PASS(0) SECOND_PASS(1) SECOND_PASS(2) SECOND_PASS(3)                  \
            }                                                                                \
            redo[0] = finish_row(fin0, lo0, hi0, mean0, sq0, n, out);                        \
            redo[1] = finish_row(fin1, lo1, hi1, mean1, sq1, n, out + 5);                    \
            redo[2] = finish_row(fin2, lo2, hi2, mean2, sq2, n, out + 10);                   \
            redo[3] = finish_row(fin3, lo3, hi3, mean3, sq3, n, out + 15);                   \
        } else {                                                                             \
            for (int r = 0; r < 4; r++)                                                      \
                redo[r] = row_stats_##TYPE(x + r * n, n, out + 5 * r);                       \
        }                                                                                    \
    }

#define TYPE float
ROW_STATS(float)
ROW_STATS4(float)
#undef TYPE
#define TYPE double
ROW_STATS(double)
ROW_STATS4(double)
#undef TYPE

static PyObject *stats(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *arrays, *contiguous;
    PyArrayObject *values, *out;
    if (!PyArg_ParseTuple(args, "O!OO!O!", &PyList_Type, &arrays, &contiguous, &PyArray_Type,
                          &values, &PyArray_Type, &out))
        return NULL;
    Py_ssize_t rows = PyList_GET_SIZE(arrays);
    int type = PyArray_TYPE(values);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || !PyArray_ISCARRAY(values) ||
        !PyArray_ISNOTSWAPPED(values) || PyArray_NDIM(values) != 2 ||
        PyArray_DIM(values, 0) != rows || PyArray_TYPE(out) != NPY_FLOAT64 ||
        !PyArray_ISCARRAY(out) || PyArray_SIZE(out) != rows * 5) {
        PyErr_SetString(PyExc_ValueError,
                        "stats(): values must be (rows, n) float32 or float64, stats (rows, 5)");
        return NULL;
    }
    npy_intp numel = PyArray_DIM(values, 1);
    Py_ssize_t row_bytes = numel * PyArray_ITEMSIZE(values);
    char *dst = PyArray_BYTES(values);
    double *st = (double *)PyArray_DATA(out);
    PyObject *again = PyList_New(0);
    for (Py_ssize_t k = 0; again && k < rows; k++, dst += row_bytes, st += 5) {
        PyObject *a = PyList_GET_ITEM(arrays, k), *copy = NULL;
        if (!PyArray_Check(a) || PyArray_TYPE((PyArrayObject *)a) != type ||
            PyArray_SIZE((PyArrayObject *)a) != numel) {
            PyErr_SetString(PyExc_ValueError, "stats(): an array of another dtype or size");
            Py_CLEAR(again);
            break;
        }
        if (!PyArray_ISCARRAY_RO((PyArrayObject *)a) ||
            !PyArray_ISNOTSWAPPED((PyArrayObject *)a)) {
            /* a strided view (a broadcast gradient, a transpose) */
            a = copy = PyObject_CallOneArg(contiguous, a);
            if (!copy || !PyArray_Check(copy) || !PyArray_ISCARRAY_RO((PyArrayObject *)a)) {
                if (copy)
                    PyErr_SetString(PyExc_ValueError, "stats(): no contiguous copy");
                Py_XDECREF(copy);
                Py_CLEAR(again);
                break;
            }
        }
        memcpy(dst, PyArray_DATA((PyArrayObject *)a), row_bytes);
        Py_XDECREF(copy);
        /* the stats of rows k-3..k once the fourth is copied, of the last rows one by one:
           redo[r] says whether row k-3+r needs another look, for r from `from` */
        int redo[4] = {0, 0, 0, 0}, from = 4;
        if (numel == 0) { /* no values: no stats */
            redo[3] = 1;
            from = 3;
        } else if ((k & 3) == 3) {
            if (type == NPY_FLOAT64)
                row_stats4_double((const double *)(dst - 3 * row_bytes), numel, st - 15, redo);
            else
                row_stats4_float((const float *)(dst - 3 * row_bytes), numel, st - 15, redo);
            from = 0;
        } else if (k == rows - 1) { /* the rows after the last four */
            from = 3 - (int)(k & 3);
            for (int r = from; r < 4; r++) {
                char *row = dst - (3 - r) * row_bytes;
                double *row_st = st - 5 * (3 - r);
                redo[r] = type == NPY_FLOAT64
                              ? row_stats_double((const double *)row, numel, row_st)
                              : row_stats_float((const float *)row, numel, row_st);
            }
        }
        for (int r = from; again && r < 4; r++) {
            if (!redo[r])
                continue;
            PyObject *row = PyLong_FromSsize_t(k - 3 + r);
            if (!row || PyList_Append(again, row) < 0)
                Py_CLEAR(again);
            Py_XDECREF(row);
        }
    }
    return again;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Dedupe tensors by identity and group them by dtype and shape."},
    {"stats", stats, METH_VARARGS, "Copy float rows into one array and take their stats."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tables", "summary.py's per-tensor loops, in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tables(void)
{
    import_array();
    s_data = PyUnicode_InternFromString("_data");
    s_requires_grad = PyUnicode_InternFromString("_requires_grad");
    s_grad_fn = PyUnicode_InternFromString("grad_fn");
    s_name = PyUnicode_InternFromString("__name__");
    if (!s_data || !s_requires_grad || !s_grad_fn || !s_name)
        return NULL;
    return PyModule_Create(&module);
}
