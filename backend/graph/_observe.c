/* The executor's backward observer (executor._Run._observer), in C.

A traced backward run hands the observer every engine node the pass runs, a thousand or more
per run, and for each of the editor's edges the node sends a gradient along it queues a record.
In Python that bookkeeping cost as much as the small ops it watches; here it is a dict lookup
and a few appends. executor.py keeps the Python observer, which does the same where this
module is not built (it is optional), and the tests hold the two to the same records.

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
    if (PyTuple_CheckExact(seq) && i < PyTuple_GET_SIZE(seq))
        return Py_NewRef(PyTuple_GET_ITEM(seq, i));
    if (PyList_CheckExact(seq) && i < PyList_GET_SIZE(seq))
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

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_observe", "The executor's backward observer, in C.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__observe(void)
{
    if (PyType_Ready(&ObserverType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObjectRef(m, "Observer", (PyObject *)&ObserverType) < 0)
        Py_CLEAR(m);
    return m;
}
