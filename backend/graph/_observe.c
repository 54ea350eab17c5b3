/* The executor's per-node loops, in C: the uncached forward loop (forward_paths.forward_fresh),
which edge each engine node's gradients belong to (backward_watch.lined_up), and the observer
that records them as the backward pass runs (backward_watch.BackwardWatch.observer).

A traced run computes and keeps a thousand or more small ops, checks the engine node of each,
and the observer sees every node the backward pass runs and queues a record for each edge's
gradient. In Python that bookkeeping cost as much as the small ops it watches; here it is a
few attribute reads, a dict lookup and a few appends per node. forward_paths.py and
backward_watch.py keep the Python versions, which do the same where this module is not built
(it is optional), and the tests hold the two to the same results.

lined_up(next_functions, inputs, watched, flat, accumulator_of) -> watched, some of them, or None
    What backward_watch.lined_up returns, the same way: whether an op's engine node sends each
    watched edge's gradient back at that edge's position (next_functions[position] is the
    edge's input's grad_fn, or its AccumulateGrad for a leaf that requires grad:
    accumulator_of(input)), and which of the edges carry one (those whose input needs none are
    left out). Edge k's input is flat[k], or inputs[its position] where flat is None.

Observer(watch, pending, code, checkpoint, every, node_grads, edge_grads, quiet)
    Called as observer(node, grad_inputs, grad_outputs) after each node (observe_backward).
    For a node in `watch` ({engine node: (node id or None, output nr, then for each edge: its
    position among the node's inputs, edge id, its `grads` item, its source, whether it is
    the source's only consumer)}, one flat tuple: backward_watch.watch_entry): calls
    checkpoint() every `every` watched nodes, then, unless
    `quiet`, records grad_outputs[nr] as the node id's gradient and each edge's gradient
    (grad_inputs[position]; for an only consumer, also as the source's gradient): into
    node_grads / edge_grads, and queued on `pending` as (code, key, gradient, None).

Forward(values, metas, pending, ctx, watch, node_hook, add_leaf, target, backward, max_elements,
        max_bytes, check_numel, limits, clock, checkpoint, check_seconds, accumulator_of,
        tensor, code)
    Called as forward(rows, start, total) on a plan's rows (plan.Step.row): runs them from
    `start` as forward_paths.forward_fresh's Python loop runs each, and stops at the first one
    it hands back (see forward_vectorcall). Which op failed, when one did, is its `failed`. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static PyObject *s_grad_fn, *s_requires_grad;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall; /* calls skip building an argument tuple */
    PyObject *watch, *pending, *code, *checkpoint, *node_grads, *edge_grads;
    Py_ssize_t every, since;
    int quiet;
} Observer;

static PyObject *observer_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames);

static int observer_traverse(Observer *self, visitproc visit, void *arg)
{
    Py_VISIT(self->watch);
    Py_VISIT(self->pending);
    Py_VISIT(self->code);
    Py_VISIT(self->checkpoint);
    Py_VISIT(self->node_grads);
    Py_VISIT(self->edge_grads);
    return 0;
}

static int observer_clear(Observer *self)
{
    Py_CLEAR(self->watch);
    Py_CLEAR(self->pending);
    Py_CLEAR(self->code);
    Py_CLEAR(self->checkpoint);
    Py_CLEAR(self->node_grads);
    Py_CLEAR(self->edge_grads);
    return 0;
}

static void observer_dealloc(Observer *self)
{
    PyObject_GC_UnTrack(self);
    observer_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int observer_init(Observer *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"watch",     "pending",    "code",       "checkpoint",
                            "every",     "node_grads", "edge_grads", "quiet",
                            NULL};
    PyObject *watch, *pending, *code, *checkpoint, *node_grads, *edge_grads;
    Py_ssize_t every;
    int quiet;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!OOnO!O!p", names, &PyDict_Type, &watch,
                                     &PyList_Type, &pending, &code, &checkpoint, &every,
                                     &PyDict_Type, &node_grads, &PyDict_Type, &edge_grads,
                                     &quiet))
        return -1;
    if (every < 1) {
        PyErr_SetString(PyExc_ValueError, "Observer(): every must be at least 1");
        return -1;
    }
    Py_XSETREF(self->watch, Py_NewRef(watch));
    Py_XSETREF(self->pending, Py_NewRef(pending));
    Py_XSETREF(self->code, Py_NewRef(code));
    Py_XSETREF(self->checkpoint, Py_NewRef(checkpoint));
    Py_XSETREF(self->node_grads, Py_NewRef(node_grads));
    Py_XSETREF(self->edge_grads, Py_NewRef(edge_grads));
    self->every = every;
    self->since = 0;
    self->vectorcall = observer_vectorcall;
    self->quiet = quiet;
    return 0;
}

/* seq[i] as a new reference: seq is the engine's tuple or list of gradients */
static PyObject *item(PyObject *seq, Py_ssize_t i)
{
    if (PyTuple_CheckExact(seq) && i >= 0 && i < PyTuple_GET_SIZE(seq))
        return Py_NewRef(PyTuple_GET_ITEM(seq, i));
    if (PyList_CheckExact(seq) && i >= 0 && i < PyList_GET_SIZE(seq))
        return Py_NewRef(PyList_GET_ITEM(seq, i));
    return PySequence_GetItem(seq, i); /* anything else, and IndexError, as Python says it */
}

/* key's gradient is g: into grads, and queued as (code, key, g, None) */
static int record(Observer *self, PyObject *grads, PyObject *id, PyObject *key, PyObject *g)
{
    if (PyDict_SetItem(grads, id, g) < 0)
        return -1;
    PyObject *queued = PyTuple_Pack(4, self->code, key, g, Py_None);
    if (!queued)
        return -1;
    int failed = PyList_Append(self->pending, queued);
    Py_DECREF(queued);
    return failed;
}

static int malformed(void)
{
    PyErr_SetString(PyExc_TypeError,
                    "Observer: a watch entry is (node id, output nr, then per edge: position, "
                    "edge id, item, source, only consumer)");
    return -1;
}

/* what the observer does for a watched node, entry = watch[node] */
static int observe(Observer *self, PyObject *entry, PyObject *grad_inputs, PyObject *grad_outputs)
{
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 2 ||
        (PyTuple_GET_SIZE(entry) - 2) % 5 != 0)
        return malformed();
    PyObject *nid = PyTuple_GET_ITEM(entry, 0);
    if (nid != Py_None) {
        Py_ssize_t nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 1));
        if (nr == -1 && PyErr_Occurred())
            return -1;
        PyObject *g = item(grad_outputs, nr);
        if (!g)
            return -1;
        int failed = g != Py_None && record(self, self->node_grads, nid, nid, g) < 0;
        Py_DECREF(g);
        if (failed)
            return -1;
    }
    for (Py_ssize_t k = 2; k < PyTuple_GET_SIZE(entry); k += 5) {
        PyObject **edge = &PyTuple_GET_ITEM(entry, k); /* position, id, item, source, single */
        Py_ssize_t pos = PyLong_AsSsize_t(edge[0]);
        if (pos == -1 && PyErr_Occurred())
            return -1;
        PyObject *g = item(grad_inputs, pos);
        if (!g)
            return -1;
        int failed = 0;
        if (g != Py_None) {
            /* the source's only consumer: the source's gradient is this one */
            int single = PyObject_IsTrue(edge[4]);
            failed = single < 0 || record(self, self->edge_grads, edge[1], edge[2], g) < 0 ||
                     (single && record(self, self->node_grads, edge[3], edge[3], g) < 0);
        }
        Py_DECREF(g);
        if (failed)
            return -1;
    }
    return 0;
}

static PyObject *observer_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames)
{
    Observer *self = (Observer *)callable;
    if (PyVectorcall_NARGS(nargsf) != 3 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError,
                        "Observer takes exactly 3 arguments (node, grad_inputs, grad_outputs)");
        return NULL;
    }
    PyObject *entry = PyDict_GetItemWithError(self->watch, args[0]); /* borrowed */
    if (!entry) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE; /* a node of no editor edge (inside a composite, say) */
    }
    Py_INCREF(entry); /* checkpoint() runs Python code */
    int failed = 0;
    if (++self->since >= self->every) { /* a node's backward takes microseconds */
        self->since = 0;
        PyObject *r = PyObject_CallNoArgs(self->checkpoint); /* Cancelled, a limit */
        failed = !r;
        Py_XDECREF(r);
    }
    if (!failed && !self->quiet)
        failed = observe(self, entry, args[1], args[2]) < 0;
    Py_DECREF(entry);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

static PyTypeObject ObserverType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "backend.graph._observe.Observer",
    .tp_basicsize = sizeof(Observer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Observer, vectorcall),
    .tp_doc = "The executor's backward observer: the gradient along every watched edge.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)observer_init,
    .tp_dealloc = (destructor)observer_dealloc,
    .tp_traverse = (traverseproc)observer_traverse,
    .tp_clear = (inquiry)observer_clear,
    .tp_call = PyVectorcall_Call,
};

/* the edge's input: flat[k], or inputs[pos] (borrowed) */
static PyObject *edge_input(PyObject *inputs, PyObject *flat, Py_ssize_t k, Py_ssize_t pos)
{
    PyObject *seq = flat == Py_None ? inputs : flat;
    Py_ssize_t i = flat == Py_None ? pos : k;
    if (!PyList_CheckExact(seq) && !PyTuple_CheckExact(seq)) {
        PyErr_SetString(PyExc_TypeError, "lined_up(): inputs and flat are lists or tuples");
        return NULL;
    }
    if (i < 0 || i >= PySequence_Fast_GET_SIZE(seq)) {
        PyErr_SetString(PyExc_IndexError, "lined_up(): an edge's position is past the inputs");
        return NULL;
    }
    return PySequence_Fast_GET_ITEM(seq, i);
}

/* 1 when `t` takes part in the gradient (a grad_fn, or requires_grad), and in *want the node
   next_functions must hold for it (a new reference; None for an input that takes no part) */
static int wanted(PyObject *t, PyObject *accumulator_of, PyObject **want)
{
    PyObject *fn = PyObject_GetAttr(t, s_grad_fn);
    if (!fn)
        return -1;
    if (fn != Py_None) {
        *want = fn;
        return 1;
    }
    Py_DECREF(fn);
    PyObject *flag = PyObject_GetAttr(t, s_requires_grad);
    if (!flag)
        return -1;
    int truth = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (truth < 0)
        return -1;
    *want = truth ? PyObject_CallOneArg(accumulator_of, t) : Py_NewRef(Py_None);
    return *want ? truth : -1;
}

/* lined_up's work (see the top of this file): a new reference to watched, some of it or None */
static PyObject *lined_up_edges(PyObject *nf, PyObject *inputs, PyObject *watched, PyObject *flat,
                                PyObject *accumulator_of)
{
    if (!PyTuple_CheckExact(nf) || !PyTuple_CheckExact(watched)) {
        PyErr_SetString(PyExc_TypeError, "lined_up(): next_functions and watched are tuples");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(watched), taking = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *w = PyTuple_GET_ITEM(watched, k);
        if (!PyTuple_CheckExact(w) || PyTuple_GET_SIZE(w) < 1) {
            PyErr_SetString(PyExc_TypeError, "lined_up(): each watched edge is a tuple");
            return NULL;
        }
        Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(w, 0));
        if (pos == -1 && PyErr_Occurred())
            return NULL;
        PyObject *t = edge_input(inputs, flat, k, pos), *want;
        if (!t)
            return NULL;
        int takes = wanted(t, accumulator_of, &want);
        if (takes < 0)
            return NULL;
        taking += takes;
        int same = pos >= 0 && pos < PyTuple_GET_SIZE(nf) && PyTuple_CheckExact(PyTuple_GET_ITEM(nf, pos)) &&
                   PyTuple_GET_SIZE(PyTuple_GET_ITEM(nf, pos)) >= 1 &&
                   PyTuple_GET_ITEM(PyTuple_GET_ITEM(nf, pos), 0) == want;
        Py_DECREF(want);
        if (!same)
            Py_RETURN_NONE; /* the op's node does not take its inputs as they are */
    }
    if (taking == n)
        return Py_NewRef(watched);
    PyObject *mine = PyTuple_New(taking);
    for (Py_ssize_t k = 0, j = 0; mine && k < n; k++) {
        PyObject *w = PyTuple_GET_ITEM(watched, k);
        /* edges whose input takes part: those whose node is not None */
        Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(w, 0));
        if (PyTuple_GET_ITEM(PyTuple_GET_ITEM(nf, pos), 0) != Py_None)
            PyTuple_SET_ITEM(mine, j++, Py_NewRef(w));
    }
    return mine;
}

static PyObject *lined_up(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "lined_up(next_functions, inputs, watched, flat, accumulator_of)");
        return NULL;
    }
    return lined_up_edges(args[0], args[1], args[2], args[3], args[4]);
}

/* -- the forward loop ------------------------------------------------------------------------ */

/* What Forward's call returns besides the row it stopped at: why it stopped there. */
enum { DONE, SLOW, ALIASED, NO_TENSOR, TOO_MANY };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *values, *metas, *pending, *ctx, *watch, *node_hook, *add_leaf, *target;
    PyObject *check_numel, *limits, *clock, *checkpoint, *accumulator_of, *tensor, *code;
    PyObject *failed; /* the node whose op raised what the call raises, else None */
    long long max_elements, max_bytes;
    double check_seconds, next_check;
    int backward;
} Forward;

#define FORWARD_OBJECTS(X)                                                                   \
    X(values) X(metas) X(pending) X(ctx) X(watch) X(node_hook) X(add_leaf) X(target)         \
    X(check_numel) X(limits) X(clock) X(checkpoint) X(accumulator_of) X(tensor) X(code)      \
    X(failed)

static int forward_traverse(Forward *self, visitproc visit, void *arg)
{
#define VISIT(name) Py_VISIT(self->name);
    FORWARD_OBJECTS(VISIT)
#undef VISIT
    return 0;
}

static int forward_clear(Forward *self)
{
#define CLEAR(name) Py_CLEAR(self->name);
    FORWARD_OBJECTS(CLEAR)
#undef CLEAR
    return 0;
}

static void forward_dealloc(Forward *self)
{
    PyObject_GC_UnTrack(self);
    forward_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *forward_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames);

static int forward_init(Forward *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"values",     "metas",    "pending",        "ctx",
                            "watch",      "node_hook", "add_leaf",      "target",
                            "backward",   "max_elements", "max_bytes",  "check_numel",
                            "limits",     "clock",    "checkpoint",     "check_seconds",
                            "accumulator_of", "tensor", "code",         NULL};
    PyObject *values, *metas, *pending, *ctx, *watch, *node_hook, *add_leaf, *target;
    PyObject *check_numel, *limits, *clock, *checkpoint, *accumulator_of, *tensor, *code;
    int backward;
    long long max_elements, max_bytes;
    double check_seconds;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "O!O!O!OO!OOOpLLOOOOdOO!O", names, &PyDict_Type, &values, &PyList_Type,
            &metas, &PyList_Type, &pending, &ctx, &PyDict_Type, &watch, &node_hook, &add_leaf,
            &target, &backward, &max_elements, &max_bytes, &check_numel, &limits, &clock,
            &checkpoint, &check_seconds, &accumulator_of, &PyType_Type, &tensor, &code))
        return -1;
#define SET(name) Py_XSETREF(self->name, Py_NewRef(name));
    SET(values) SET(metas) SET(pending) SET(ctx) SET(watch) SET(node_hook) SET(add_leaf)
    SET(target) SET(check_numel) SET(limits) SET(clock) SET(checkpoint) SET(accumulator_of)
    SET(tensor) SET(code)
#undef SET
    Py_XSETREF(self->failed, Py_NewRef(Py_None));
    self->backward = backward;
    self->max_elements = max_elements;
    self->max_bytes = max_bytes;
    self->check_seconds = check_seconds;
    self->next_check = 0.0;
    self->vectorcall = forward_vectorcall;
    return 0;
}

static PyObject *s_node_id, *s_data, *s_size, *s_nbytes, *s_shape, *s_dtype, *s_next_functions,
    *s_output_nr, *s_output_nr_slot, *s_register_hook;

/* clock() as a double, or -1 with an exception set */
static double now(Forward *self)
{
    PyObject *t = PyObject_CallNoArgs(self->clock);
    if (!t)
        return -1.0;
    double v = PyFloat_AsDouble(t);
    Py_DECREF(t);
    return v == -1.0 && PyErr_Occurred() ? -1.0 : v;
}

/* an integer attribute of an array that is not numpy's (cupy's), or -1 with an exception */
static long long int_attr(PyObject *a, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(a, name);
    if (!v)
        return -1;
    long long n = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return n;
}

/* the row's stop: (row, why, total, tensor or None) */
static PyObject *stopped(Py_ssize_t row, int why, long long total, PyObject *out)
{
    return Py_BuildValue("(niLO)", row, why, total, out ? out : Py_None);
}

/* the node's op on its inputs, as forward_paths.forward_fresh runs it; NULL with self->failed
   set to the node where the op itself (or its tensor's checks) raised */
static PyObject *compute(Forward *self, PyObject *row, PyObject *inputs, PyObject **data,
                         long long *size)
{
    PyObject *nid = PyTuple_GET_ITEM(row, 0), *run = PyTuple_GET_ITEM(row, 1);
    if (PyObject_SetAttr(self->ctx, s_node_id, nid) < 0)
        return NULL;
    PyObject *call[3] = {self->ctx, inputs, PyTuple_GET_ITEM(row, 2)};
    PyObject *out = PyObject_Vectorcall(run, call, 3, NULL);
    if (!out)
        goto failed;
    if (Py_TYPE(out) != (PyTypeObject *)self->tensor) {
        int is = PyObject_IsInstance(out, self->tensor);
        if (is <= 0) {
            if (is < 0) {
                Py_DECREF(out);
                goto failed;
            }
            *data = NULL;
            return out; /* no tensor: the caller says so */
        }
    }
    PyObject *a = PyObject_GetAttr(out, s_data);
    if (!a) {
        Py_DECREF(out);
        goto failed;
    }
    long long n = PyArray_Check(a) ? (long long)PyArray_SIZE((PyArrayObject *)a) : int_attr(a, s_size);
    if (n == -1 && PyErr_Occurred())
        goto failed_with;
    if (n > self->max_elements) {
        PyObject *r = PyObject_CallFunction(self->check_numel, "LO", n, self->limits);
        if (!r)
            goto failed_with;
        Py_DECREF(r);
    }
    *data = a;
    *size = n;
    return out;
failed_with:
    Py_DECREF(a);
    Py_DECREF(out);
failed:
    Py_XSETREF(self->failed, Py_NewRef(nid));
    return NULL;
}

/* (key, shape, dtype, requires_grad, grad_fn's class or None): the value's meta */
static PyObject *meta(PyObject *key, PyObject *a, PyObject *requires_grad, PyObject *gf)
{
    PyObject *shape, *dtype;
    if (PyArray_Check(a)) {
        PyArrayObject *arr = (PyArrayObject *)a;
        int nd = PyArray_NDIM(arr);
        shape = PyTuple_New(nd);
        for (int d = 0; shape && d < nd; d++) {
            PyObject *v = PyLong_FromSsize_t(PyArray_DIM(arr, d));
            if (!v)
                Py_CLEAR(shape);
            else
                PyTuple_SET_ITEM(shape, d, v);
        }
        dtype = Py_NewRef((PyObject *)PyArray_DESCR(arr));
    } else {
        shape = PyObject_GetAttr(a, s_shape);
        dtype = PyObject_GetAttr(a, s_dtype);
    }
    PyObject *cls = gf == Py_None ? Py_None : (PyObject *)Py_TYPE(gf);
    PyObject *m = shape && dtype ? PyTuple_Pack(5, key, shape, dtype, requires_grad, cls) : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    return m;
}

/* backward_watch.watch_entry: (node id or None, output nr, then each edge of `edges`, flattened):
   one tuple, which the observer reads without following a pointer per edge */
static PyObject *watch_entry(PyObject *edges, PyObject *nid, PyObject *nr)
{
    Py_ssize_t n = PyTuple_GET_SIZE(edges);
    PyObject *entry = PyTuple_New(2 + 5 * n);
    if (!entry)
        return NULL;
    PyTuple_SET_ITEM(entry, 0, Py_NewRef(nid));
    PyTuple_SET_ITEM(entry, 1, Py_NewRef(nr));
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *w = PyTuple_GET_ITEM(edges, k);
        if (!PyTuple_CheckExact(w) || PyTuple_GET_SIZE(w) != 5) {
            Py_DECREF(entry);
            malformed();
            return NULL;
        }
        for (int j = 0; j < 5; j++)
            PyTuple_SET_ITEM(entry, 2 + 5 * k + j, Py_NewRef(PyTuple_GET_ITEM(w, j)));
    }
    return entry;
}

/* In backward: the watch on out's engine node (or a hook for its gradient). 1 when its edges do
   not line up with the inputs (the caller gives it aliases), 0 when done, -1 on error. */
static int watch_node(Forward *self, PyObject *row, PyObject *inputs, PyObject *out,
                      PyObject *gf, int requires_grad)
{
    PyObject *nid = PyTuple_GET_ITEM(row, 0);
    /* one consumer: the node's gradient is that edge's, reported with the edge's */
    int single = PyObject_IsTrue(PyTuple_GET_ITEM(row, 7));
    if (single > 0)
        single = PyObject_RichCompareBool(nid, self->target, Py_NE);
    if (single < 0)
        return -1;
    int own = 0; /* whether the observer reports this node's gradient */
    if (gf != Py_None) {
        own = !single && requires_grad;
        PyObject *nf = PyObject_GetAttr(gf, s_next_functions);
        if (!nf)
            return -1;
        PyObject *mine =
            lined_up_edges(nf, inputs, PyTuple_GET_ITEM(row, 8), Py_None, self->accumulator_of);
        Py_DECREF(nf);
        if (!mine)
            return -1;
        if (mine == Py_None) {
            Py_DECREF(mine);
            return 1;
        }
        int some = PyTuple_GET_SIZE(mine) > 0, failed = 0;
        if (some || own) {
            /* the engine's own tensors: the slot behind the output_nr property, read without
               running the property's Python body */
            PyObject *nr_name =
                Py_TYPE(out) == (PyTypeObject *)self->tensor ? s_output_nr_slot : s_output_nr;
            PyObject *nr = PyObject_GetAttr(out, nr_name), *entry = NULL;
            if (nr)
                entry = watch_entry(mine, own ? nid : Py_None, nr);
            failed = !entry || PyDict_SetItem(self->watch, gf, entry) < 0;
            Py_XDECREF(nr);
            Py_XDECREF(entry);
        }
        Py_DECREF(mine);
        if (failed)
            return -1;
    }
    if (requires_grad && !single && !own) {
        PyObject *hook = PyObject_CallOneArg(self->node_hook, nid);
        if (!hook)
            return -1;
        PyObject *r = PyObject_CallMethodOneArg(out, s_register_hook, hook);
        Py_DECREF(hook);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* The plan's rows were made long before this run, and each row's tuples are a cache miss by
   the time the loop reaches them: while row i's op runs, the next row's tuple (asked for one
   row earlier) gives its sources and watched edges, and row i + 2's tuple is asked for; row
   i's own watched edges are asked for before its op runs, for lined_up after it. */
static void prefetch_rows(PyObject *rows, Py_ssize_t i)
{
    Py_ssize_t n = PyList_GET_SIZE(rows);
    PyObject *row = PyList_GET_ITEM(rows, i), *watched = PyTuple_GET_ITEM(row, 8);
    if (PyTuple_CheckExact(watched))
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(watched); k++)
            PREFETCH(PyTuple_GET_ITEM(watched, k));
    if (i + 2 < n)
        PREFETCH(PyList_GET_ITEM(rows, i + 2));
    if (i + 1 < n) {
        PyObject *next = PyList_GET_ITEM(rows, i + 1);
        if (PyTuple_CheckExact(next) && PyTuple_GET_SIZE(next) == 9) {
            PREFETCH(PyTuple_GET_ITEM(next, 3));
            PREFETCH(PyTuple_GET_ITEM(next, 8));
        }
    }
}

/* forward(rows, start, total) -> (row, why, total, tensor or None): the rows from `start` on, as
   forward_paths.forward_fresh's loop runs each, until one it leaves to Python (why: SLOW, the
   row as run_node runs it; ALIASED, its op computed (the tensor) but its edges not lined up;
   NO_TENSOR, its op gave the object returned; TOO_MANY, the values' bytes past the limit) or
   the end (DONE). `total` is the values' bytes so far, and after. */
static PyObject *forward_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames)
{
    Forward *self = (Forward *)callable;
    Py_ssize_t start;
    long long total;
    if (PyVectorcall_NARGS(nargsf) != 3 || (kwnames && PyTuple_GET_SIZE(kwnames)) ||
        !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "Forward takes (rows: list, start, total)");
        return NULL;
    }
    start = PyLong_AsSsize_t(args[1]);
    total = PyLong_AsLongLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    Py_XSETREF(self->failed, Py_NewRef(Py_None));
    PyObject *rows = args[0];
    for (Py_ssize_t i = start < 0 ? 0 : start; i < PyList_GET_SIZE(rows); i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) != 9) {
            PyErr_SetString(PyExc_TypeError, "Forward: a row is a plan.Step.row");
            return NULL;
        }
        prefetch_rows(rows, i);
        PyObject *nid = PyTuple_GET_ITEM(row, 0), *srcs = PyTuple_GET_ITEM(row, 3);
        int composite = self->backward ? PyObject_IsTrue(PyTuple_GET_ITEM(row, 4)) : 0;
        if (composite < 0)
            return NULL;
        if (srcs == Py_None || composite)
            return stopped(i, SLOW, total, NULL);
        if (!PyTuple_CheckExact(srcs)) {
            PyErr_SetString(PyExc_TypeError, "Forward: a row's sources are a tuple");
            return NULL;
        }
        /* cancel and the time limit: a checkpoint per node cost a tenth of a small op */
        double t = now(self);
        if (t == -1.0 && PyErr_Occurred())
            return NULL;
        if (t >= self->next_check) {
            PyObject *r = PyObject_CallNoArgs(self->checkpoint);
            if (!r)
                return NULL;
            Py_DECREF(r);
            t = now(self);
            if (t == -1.0 && PyErr_Occurred())
                return NULL;
            self->next_check = t + self->check_seconds;
        }
        Py_ssize_t n_in = PyTuple_GET_SIZE(srcs);
        PyObject *inputs = PyList_New(n_in);
        if (!inputs)
            return NULL;
        for (Py_ssize_t k = 0; k < n_in; k++) {
            PyObject *v = PyDict_GetItemWithError(self->values, PyTuple_GET_ITEM(srcs, k));
            if (!v && PyErr_Occurred()) {
                Py_DECREF(inputs);
                return NULL;
            }
            PyList_SET_ITEM(inputs, k, Py_NewRef(v ? v : Py_None));
        }
        PyObject *a = NULL;
        long long size = 0;
        PyObject *out = compute(self, row, inputs, &a, &size);
        if (!out) {
            Py_DECREF(inputs);
            return NULL;
        }
        if (!a) {
            Py_DECREF(inputs);
            PyObject *r = stopped(i, NO_TENSOR, total, out);
            Py_DECREF(out);
            return r;
        }
        PyObject *gf = NULL, *rg = NULL, *m = NULL, *queued = NULL;
        int requires_grad = -1, failed = 1;
        gf = PyObject_GetAttr(out, s_grad_fn);
        rg = gf ? PyObject_GetAttr(out, s_requires_grad) : NULL;
        if (rg)
            requires_grad = PyObject_IsTrue(rg);
        if (requires_grad < 0)
            goto fail;
        if (self->backward) {
            int aliased = watch_node(self, row, inputs, out, gf, requires_grad);
            if (aliased < 0)
                goto fail;
            if (aliased) {
                PyObject *r = stopped(i, ALIASED, total, out);
                Py_DECREF(inputs);
                Py_DECREF(out);
                Py_DECREF(a);
                Py_DECREF(gf);
                Py_DECREF(rg);
                return r;
            }
        }
        long long nbytes = PyArray_Check(a) ? (long long)PyArray_NBYTES((PyArrayObject *)a)
                                            : int_attr(a, s_nbytes);
        if (nbytes == -1 && PyErr_Occurred())
            goto fail;
        total += nbytes;
        if (total > self->max_bytes) {
            PyObject *r = stopped(i, TOO_MANY, total, NULL);
            Py_DECREF(inputs);
            Py_DECREF(out);
            Py_DECREF(a);
            Py_DECREF(gf);
            Py_DECREF(rg);
            return r;
        }
        if (PyDict_SetItem(self->values, nid, out) < 0)
            goto fail;
        m = meta(PyTuple_GET_ITEM(row, 6), a, rg, gf);
        if (!m || PyList_Append(self->metas, m) < 0)
            goto fail;
        if (requires_grad && gf == Py_None) {
            int source = PyObject_IsTrue(PyTuple_GET_ITEM(row, 5));
            if (source < 0)
                goto fail;
            if (source) {
                PyObject *r = PyObject_CallFunctionObjArgs(self->add_leaf, nid, Py_None, out, NULL);
                if (!r)
                    goto fail;
                Py_DECREF(r);
            }
        }
        queued = PyTuple_Pack(4, self->code, nid, out, Py_None);
        if (!queued || PyList_Append(self->pending, queued) < 0)
            goto fail;
        failed = 0;
    fail:
        Py_XDECREF(queued);
        Py_XDECREF(m);
        Py_XDECREF(gf);
        Py_XDECREF(rg);
        Py_DECREF(a);
        Py_DECREF(out);
        Py_DECREF(inputs);
        if (failed)
            return NULL;
    }
    return stopped(PyList_GET_SIZE(rows), DONE, total, NULL);
}

static PyMemberDef forward_members[] = {
    {"failed", T_OBJECT, offsetof(Forward, failed), READONLY,
     "the node whose op raised what the last call raised, else None"},
    {NULL},
};

static PyTypeObject ForwardType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "backend.graph._observe.Forward",
    .tp_basicsize = sizeof(Forward),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Forward, vectorcall),
    .tp_doc = "The uncached forward loop of a run (forward_paths.forward_fresh).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)forward_init,
    .tp_dealloc = (destructor)forward_dealloc,
    .tp_traverse = (traverseproc)forward_traverse,
    .tp_clear = (inquiry)forward_clear,
    .tp_call = PyVectorcall_Call,
    .tp_members = forward_members,
};

static PyMethodDef methods[] = {
    {"lined_up", (PyCFunction)(void (*)(void))lined_up, METH_FASTCALL,
     "Which watched edges' gradients an op's engine node sends back, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_observe", "The executor's watch on the backward pass, in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__observe(void)
{
    import_array();
    s_grad_fn = PyUnicode_InternFromString("grad_fn");
    s_requires_grad = PyUnicode_InternFromString("_requires_grad");
    s_node_id = PyUnicode_InternFromString("node_id");
    s_data = PyUnicode_InternFromString("_data");
    s_size = PyUnicode_InternFromString("size");
    s_nbytes = PyUnicode_InternFromString("nbytes");
    s_shape = PyUnicode_InternFromString("shape");
    s_dtype = PyUnicode_InternFromString("dtype");
    s_next_functions = PyUnicode_InternFromString("next_functions");
    s_output_nr = PyUnicode_InternFromString("output_nr");
    s_output_nr_slot = PyUnicode_InternFromString("_output_nr");
    s_register_hook = PyUnicode_InternFromString("register_hook");
    if (!s_grad_fn || !s_requires_grad || !s_node_id || !s_data || !s_size || !s_nbytes ||
        !s_shape || !s_dtype || !s_next_functions || !s_output_nr || !s_output_nr_slot || !s_register_hook)
        return NULL;
    if (PyType_Ready(&ObserverType) < 0 || PyType_Ready(&ForwardType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddObjectRef(m, "Observer", (PyObject *)&ObserverType) < 0 ||
              PyModule_AddObjectRef(m, "Forward", (PyObject *)&ForwardType) < 0))
        Py_CLEAR(m);
    return m;
}
