/* The executor's watch on the backward pass, in C: which editor edge each engine node's
gradients belong to (backward_watch.lined_up), and the observer that records them as the pass runs
(backward_watch.BackwardWatch.observer).

A traced run checks the engine node of every op it computes, a thousand or more per run, and
the observer sees every node the backward pass runs and queues a record for each edge's
gradient. In Python that bookkeeping cost as much as the small ops it watches; here it is a
few attribute reads, a dict lookup and a few appends per node. backward_watch.py keeps the Python
versions, which do the same where this module is not built (it is optional), and the tests
hold the two to the same results.

lined_up(next_functions, inputs, watched, flat, accumulator_of) -> watched, some of them, or None
    What backward_watch.lined_up returns, the same way: whether an op's engine node sends each
    watched edge's gradient back at that edge's position (next_functions[position] is the
    edge's input's grad_fn, or its AccumulateGrad for a leaf that requires grad:
    accumulator_of(input)), and which of the edges carry one (those whose input needs none are
    left out). Edge k's input is flat[k], or inputs[its position] where flat is None.

Observer(watch, pending, code, checkpoint, every, node_grads, edge_grads, quiet)
    Called as observer(node, grad_inputs, grad_outputs) after each node (observe_backward).
    For a node in `watch` ({engine node: (edges, node id or None, output nr)}, each edge
    (position among the node's inputs, edge id, its `grads` item, its source, whether it is
    the source's only consumer)): calls checkpoint() every `every` watched nodes, then, unless
    `quiet`, records grad_outputs[nr] as the node id's gradient and each edge's gradient
    (grad_inputs[position]; for an only consumer, also as the source's gradient): into
    node_grads / edge_grads, and queued on `pending` as (code, key, gradient, None). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

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
                    "Observer: a watch entry is (edges, node id, output nr), each edge "
                    "(position, edge id, item, source, only consumer)");
    return -1;
}

/* what the observer does for a watched node, entry = watch[node] */
static int observe(Observer *self, PyObject *entry, PyObject *grad_inputs, PyObject *grad_outputs)
{
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3 ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 0)))
        return malformed();
    PyObject *edges = PyTuple_GET_ITEM(entry, 0), *nid = PyTuple_GET_ITEM(entry, 1);
    if (nid != Py_None) {
        Py_ssize_t nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 2));
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
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(edges); k++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, k);
        if (!PyTuple_CheckExact(edge) || PyTuple_GET_SIZE(edge) != 5)
            return malformed();
        Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(edge, 0));
        if (pos == -1 && PyErr_Occurred())
            return -1;
        PyObject *g = item(grad_inputs, pos);
        if (!g)
            return -1;
        int failed = 0;
        if (g != Py_None) {
            PyObject *eid = PyTuple_GET_ITEM(edge, 1), *key = PyTuple_GET_ITEM(edge, 2);
            PyObject *source = PyTuple_GET_ITEM(edge, 3);
            /* the source's only consumer: the source's gradient is this one */
            int single = PyObject_IsTrue(PyTuple_GET_ITEM(edge, 4));
            failed = single < 0 || record(self, self->edge_grads, eid, key, g) < 0 ||
                     (single && record(self, self->node_grads, source, source, g) < 0);
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

static PyObject *lined_up(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "lined_up(next_functions, inputs, watched, flat, accumulator_of)");
        return NULL;
    }
    PyObject *nf = args[0], *inputs = args[1], *watched = args[2], *flat = args[3];
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
        int takes = wanted(t, args[4], &want);
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
    s_grad_fn = PyUnicode_InternFromString("grad_fn");
    s_requires_grad = PyUnicode_InternFromString("_requires_grad");
    if (!s_grad_fn || !s_requires_grad)
        return NULL;
    if (PyType_Ready(&ObserverType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObjectRef(m, "Observer", (PyObject *)&ObserverType) < 0)
        Py_CLEAR(m);
    return m;
}
