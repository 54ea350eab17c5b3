"""The recorded graph: one Node per differentiable op, linked to its inputs' nodes.

A Node is what PyTorch calls a grad_fn. `next_functions[i]` is `(node, output_nr)` for the i-th
input, `(None, 0)` where that input needs no gradient. Subclasses implement `backward(grad)`,
returning one gradient per input, written with engine ops so `create_graph=True` can
differentiate it again. Saved tensors are checked against their version counters when unpacked,
and freed after a backward that does not retain the graph.
"""

import itertools
import threading
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from sys import getrefcount

from .._tensor import Tensor, wrap
from .grad_mode import STATE

_sequence = itertools.count()
_ACCUMULATE_FIRST = 1 << 62  # AccumulateGrad nodes sort after (so run before) every other node
_hook_ids = itertools.count()

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


class RemovableHandle:
    __slots__ = ("_store", "id")

    def __init__(self, store):
        self._store = weakref.ref(store)
        self.id = next(_hook_ids)

    def remove(self):
        store = self._store()
        if store is not None:
            store.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(store, fn):
    handle = RemovableHandle(store)
    store[handle.id] = fn
    return handle


class _Observer(threading.local):
    fn = None


OBSERVER = _Observer()  # the backward pass reads it once per pass, in its own thread


@contextmanager
def observe_backward(fn):
    """Within the block, each node a backward pass in this thread runs (AccumulateGrad aside)
    calls fn(node, grad_inputs, grad_outputs) right after the node's own post-hooks: what a
    post-hook registered on every node would see, for one call per node and nothing
    registered. For tools that trace a whole pass (Wiregrad's executor reports the gradient on
    every edge), where registering a hook on each of thousands of nodes would cost more than
    the pass. grad_outputs is the engine's own list: read it, do not keep or change it. Not a
    PyTorch API."""
    prev, OBSERVER.fn = OBSERVER.fn, fn
    try:
        yield
    finally:
        OBSERVER.fn = prev


class Node:
    __slots__ = ("next_functions", "_saved", "_versions", "_seq", "__weakref__", "__dict__")
    num_outputs = 1
    single_output = True  # backward(grad) may be called directly, skipping apply(grads)
    saves_output = False  # when True the last saved tensor is this node's own output (see unpack)
    is_view = False  # True for ops whose output shares its input's storage (view, t, slice...)
    # Hooks are rare: they live in the instance __dict__ only once registered, and `_has_hooks`
    # lets the backward loop skip all four kinds with one attribute read.
    _has_hooks = False
    casts = None  # per input, a dtype to cast its gradient to (ops that promoted mixed dtypes)
    _pre_hooks = _hooks = _tensor_pre_hooks = _retains_grad_hooks = None

    def __init__(self, inputs, saved=()):
        edges = []
        for t in inputs:
            if isinstance(t, Tensor):
                fn = t.grad_fn
                if fn is not None:
                    edges.append((fn, t._output_nr))
                elif t._requires_grad:
                    edges.append((accumulator_of(t), 0))
                else:
                    edges.append(NO_EDGE)
            else:
                edges.append(NO_EDGE)
        self.next_functions = tuple(edges)
        self._saved = saved
        # the saved tensors' versions, or None when all are 0 (never written: the common case)
        versions = None
        for t in saved:
            if t._vc is not None and t._vc[0]:
                versions = tuple([0 if t._vc is None else t._vc[0] for t in saved])
                break
        self._versions = versions
        self._seq = next(_sequence)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"  # as PyTorch prints nodes

    @property
    def metadata(self):
        """A dict that lives with this node, for users' own notes (as PyTorch's)."""
        return self.__dict__.setdefault("_metadata", {})

    def needs_grad(self, i):
        return self.next_functions[i][0] is not None

    def backward(self, grad):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def apply(self, grads):
        return self.backward(grads[0])

    # -- saved tensors --------------------------------------------------------------------
    def unpack(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(BACKWARD_TWICE)
        for i, t in enumerate(saved):
            v = 0 if self._versions is None else self._versions[i]
            if (0 if t._vc is None else t._vc[0]) != v:
                raise RuntimeError(
                    _modified_message(
                        t, v, self if t.grad_fn is None and self.saves_output else None
                    )
                )
        if self.saves_output and STATE.enabled:
            # The output is saved without its grad_fn (that would be a reference cycle); it gets
            # this node back so that a create_graph backward differentiates through it.
            out = saved[-1].detach()
            out.grad_fn, out._requires_grad = self, True
            return saved[:-1] + (out,)
        return saved

    @property
    def saved_tensors_info(self):
        """(shape, numpy dtype) of each saved tensor, for the editor's autograd view; None
        once they were freed by a backward."""
        if self._saved is None:
            return None
        return [(t._data.shape, t._data.dtype) for t in self._saved]

    # -- hooks ----------------------------------------------------------------------------
    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; it may return new grad_inputs."""
        self._has_hooks = True
        if self._hooks is None:
            self._hooks = OrderedDict()
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return new grad_outputs."""
        self._has_hooks = True
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        return add_hook(self._pre_hooks, fn)

    def _add_tensor_pre_hook(self, output_nr, fn):
        self._has_hooks = True
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = OrderedDict()
        return add_hook(self._tensor_pre_hooks, (output_nr, fn))


def _modified_message(t, expected, producer):
    shape = ", ".join(map(str, t._data.shape))
    desc = f"[torch.{t.dtype.legacy_name} [{shape}]]"
    node = t.grad_fn or producer
    if node is not None:
        desc += f", which is output {t._output_nr} of {_name_in_modified_message(node)},"
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {desc} is at version {t._version}; expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that "
        "failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def _name_in_modified_message(node):
    """How PyTorch (2.13) names the producer in that message: without "Backward0" (Mul for
    MulBackward0, Sum1 for SumBackward1), and AsStrided for a view, whose grad_fn an in-place
    write makes an AsStridedBackward0 there."""
    if node.is_view:
        return "AsStrided"
    name = node.name()
    if name.startswith("torch::"):  # CopySlices: PyTorch gives its full name
        return name
    return name[: -len("Backward0")] if name.endswith("Backward0") else name.replace("Backward", "")


class AccumulateGrad(Node):
    """The sink for a leaf that requires grad: adds the arriving gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.next_functions = ()
        self._saved = ()
        self._versions = None
        self._seq = _ACCUMULATE_FIRST + next(_sequence)  # run as soon as ready, as PyTorch does
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"  # what PyTorch's name() returns

    def backward(self, grad):
        var = self.variable
        if STATE.enabled:  # create_graph: keep the gradient's own graph, accumulate out of place
            var._grad = grad if var._grad is None else var._grad + grad
        elif var._grad is None:
            data = grad._data
            # .grad must own its array: later accumulation and zero_() write into it in place.
            # A gradient nobody else holds (the engine's slot and this call are its only
            # references, and its array is no view) is taken as it is, as PyTorch steals it;
            # any other is copied, so that no other leaf's .grad or caller's tensor changes.
            if (
                getrefcount(grad) <= _UNSHARED_TENSOR
                and getrefcount(data) <= _UNSHARED_ARRAY
                and data.base is None
                and grad._vc is None
            ):
                var._grad = wrap(data)
            else:
                var._grad = wrap(data.copy())
        else:
            var._grad._data += grad._data
            var._grad._bump_version()
        if var._post_hooks:
            for fn in list(var._post_hooks.values()):
                fn(var)
        return ()


NO_EDGE = (None, 0)


def edge_of(t):
    """The (node, output_nr) a gradient for tensor `t` flows into; (None, 0) if it needs none."""
    if not isinstance(t, Tensor):  # Python numbers and None take part in no gradient
        return NO_EDGE
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (accumulator_of(t), 0)
    return NO_EDGE


def accumulator_of(t):
    acc = t._accumulator() if t._accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accumulator = weakref.ref(acc)
    return acc


# References a gradient has when only the backward loop holds it: the loop's slot, the
# `grad` argument, getrefcount's own argument; its array: the tensor's slot, the local `data`
# in AccumulateGrad.backward and getrefcount's argument.
_UNSHARED_TENSOR = 3
_UNSHARED_ARRAY = 3
