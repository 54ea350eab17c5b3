"""Views and in-place writes, with PyTorch's semantics.

A view shares its base's array (numpy or cupy hands back a view of the same memory) and its
version counter. Every view remembers its root base (`_base`: for a view of a view, the tensor
that owns the memory, as in PyTorch), and the root keeps weak references to its live views.

An in-place op writes the out-of-place result into the tensor's memory and gives the tensor the
op's node as its new grad_fn. Written through a view, it changes the base too, so the base's
history is rebased onto a `CopySlices` node: the gradient of the base's old value is the incoming
gradient with the view's region replaced by what the op's node sends to the view's old value.
After any write to a storage whose root requires grad, every live view of it gets a fresh
`AsStridedBackward0` node leading to the root's current grad_fn (PyTorch regenerates a view's
grad_fn when the version counter moved; doing it at the write costs nothing on reads).

Where an element of a view sits in its root is read from the arrays' memory layout (addresses
and strides), so any view op, present or future, needs no replay function of its own.
"""

import weakref

import numpy as np

from ._device import xp
from ._tensor import LEAF_INPLACE, VIEW_OF_LEAF_INPLACE, Tensor, share_version, wrap
from .autograd.grad_mode import STATE
from .autograd.graph import Node

_NO_GRAD_REASON = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked)."
)
NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    + _NO_GRAD_REASON
)
NO_GRAD_VIEW_OF_VIEW_INPLACE = (
    "Output {nr} of {name} is a view of a view which was created in no_grad mode and is being "
    "modified inplace with grad mode enabled. " + _NO_GRAD_REASON
)
MULTI_VIEW_INPLACE = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output of "
    "a function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)
DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)


# -- making views -----------------------------------------------------------------------------
def make_view(input, data):
    """A tensor around `data`, an array sharing `input`'s memory: a view of input's root."""
    out = wrap(data)
    share_version(input, out)
    root = input._base
    if root is None:
        root = input
    out._base = root
    views = root._views
    if views is None:
        root._views = views = []
    elif not len(views) & 31:  # now and then, forget views that are gone
        views[:] = [r for r in views if r() is not None]
    views.append(weakref.ref(out))
    # why PyTorch would refuse an in-place write into it: made under no_grad (1), a view of
    # such a view (2); one of several views returned together, or a view of one (multi)
    if not STATE.enabled and root._requires_grad:
        out._view_no_grad = 1
    elif input._view_no_grad:
        out._view_no_grad = 2
    if input._view_multi:
        out._view_multi = True
    return out


def mark_multi_output(views):
    """Views returned together by one op (unbind, split): PyTorch forbids writing into them."""
    for v in views:
        v._view_multi = True
    return views


def positions(view, root):
    """For each element of `view`, the flat (C-order) index of the element of `root` it shares."""
    r, v = root._data, view._data
    m = xp(r)
    item = r.itemsize
    offsets = _offsets(v, m) + (_address(v) - _address(r)) // item
    if r.flags.c_contiguous:
        return offsets
    # a root that is itself laid out otherwise (a transposed result): invert its layout
    own = _offsets(r, m)
    lo = int(own.min()) if own.size else 0
    table = m.full(int(own.max()) - lo + 1 if own.size else 1, -1, np.int64)
    table[(own - lo).ravel()] = m.arange(r.size, dtype=np.int64)
    return table[offsets - lo]


def _offsets(a, m):
    """Memory offset, in elements, of each element of `a` from its first element."""
    out = m.zeros(a.shape, np.int64)
    for k, (n, s) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = n
        out = out + (m.arange(n, dtype=np.int64) * (s // a.itemsize)).reshape(shape)
    return out


def _address(a):
    if a.__class__ is np.ndarray:
        return a.__array_interface__["data"][0]
    return a.data.ptr  # cupy


# -- the nodes --------------------------------------------------------------------------------
class AsStridedBackward0(Node):
    """A view's grad_fn once its storage was written: the view's gradient, placed where the
    view's elements sit in the root (repeated positions, as in an expanded view, add up)."""

    __slots__ = ("positions", "base_shape")
    is_view = True

    def backward(self, g):
        return (_place(g, self.positions, self.base_shape),)


def _place(g, pos, shape):
    from .ops.shape import index_put_zeros  # at call time: the view ops build on this module

    n = 1
    for s in shape:
        n *= s
    flat = index_put_zeros(g.reshape(-1), (pos.reshape(-1),), (n,), False)
    return flat.reshape(shape)


class CopySlices(Node):
    """The root's grad_fn after an in-place op wrote through one of its views.

    Inputs: the root's old value, then the in-place op's other inputs. The root's old value
    gets the incoming gradient outside the view and, inside it, what the op's node `fn` sends
    to the view's old value; the other inputs get what `fn` sends them."""

    __slots__ = ("fn", "positions", "view_shape")

    def name(self):
        return "torch::autograd::CopySlices"  # what PyTorch's name() returns

    def __init__(self, root, fn, pos, view_shape):
        Node.__init__(self, (root,))
        if fn is not None:
            self.next_functions += fn.next_functions[1:]
        self.fn, self.positions, self.view_shape = fn, pos, view_shape

    def apply(self, grads):
        return self.backward(grads[0])

    def backward(self, g):
        from .ops.shape import index_put  # at call time: the view ops build on this module

        flat = g.reshape(-1)
        index = (wrap(self.positions.reshape(-1)),)
        fn, res = self.fn, (None,)
        if fn is not None:
            gv = flat[index].reshape(self.view_shape)
            res = tuple(fn.backward(gv) if fn.single_output else fn.apply([gv]))
            if fn.casts is not None:
                res = tuple(r if c is None or r is None else r.to(c) for r, c in zip(res, fn.casts))
        gbase = None
        if self.needs_grad(0):
            inside = res[0].reshape(-1) if res[0] is not None else 0.0
            gbase = index_put(flat, index, inside).reshape(g._data.shape)
        return (gbase, *res[1:])


# -- writing in place -------------------------------------------------------------------------
def check_inplace(t):
    """PyTorch's refusals of an in-place write with grad mode on, in its order and words."""
    if not STATE.enabled:
        return
    root = t._base
    if root is None:
        if t.grad_fn is None and t._requires_grad:
            raise RuntimeError(LEAF_INPLACE)
        return
    if not (t._requires_grad or root._requires_grad):
        return
    if t._view_no_grad == 1 or (t._view_no_grad == 2 and t.grad_fn is None):
        # (a view of such a view made with grad on has no grad_fn here to name: PyTorch would
        # name its op; the plain message says the same thing)
        raise RuntimeError(NO_GRAD_VIEW_INPLACE)
    if t._view_no_grad == 2:
        raise RuntimeError(NO_GRAD_VIEW_OF_VIEW_INPLACE.format(nr=t._output_nr, name=_op(t)))
    if t._view_multi:
        raise RuntimeError(MULTI_VIEW_INPLACE.format(nr=t._output_nr, name=_op(t)))
    if root.grad_fn is None and root._requires_grad:
        raise RuntimeError(VIEW_OF_LEAF_INPLACE)


def _op(t):
    """The op that made t, as PyTorch names it in these messages (Unbind for UnbindBackward0)."""
    name = type(t.grad_fn).__name__ if t.grad_fn is not None else "None"
    return name[: -len("Backward0")] if name.endswith("Backward0") else name


def inplace(t, op, *args):
    """Run the out-of-place `op(t, *args)` and write its result into t's memory.

    With grad on, the op sees a snapshot of the old value (what it saves for backward is the
    value it saw); t, or the root of the view t is, then takes the new history."""
    check_inplace(t)
    root = t._base
    tracked = STATE.enabled and (
        t._requires_grad
        or (root is not None and root._requires_grad)
        or any(isinstance(a, Tensor) and a._requires_grad for a in args)
    )
    if tracked:
        old = wrap(t._data.copy(), t._requires_grad)
        old.grad_fn, old._output_nr = t.grad_fn, t._output_nr
        result = op(old, *args)
    else:
        prev, STATE.enabled = STATE.enabled, False
        try:
            result = op(t, *args)
        finally:
            STATE.enabled = prev
    t._write(result._data)
    owner = t if root is None else root
    fn = result.grad_fn
    if tracked and fn is not None and fn.saves_output and fn._saved:
        # the op saved its output, which is now t's memory: a later write to t must be caught
        fn._saved = (*fn._saved[:-1], t.detach())
        fn._versions = tuple(0 if x._vc is None else x._vc[0] for x in fn._saved)
    if tracked:
        rebase_history(t, fn, result._requires_grad)
    elif owner._views is not None and owner._requires_grad:
        regenerate_views(owner)
    return t


def rebase_history(t, fn, requires_grad=True, output_nr=0):
    """After t's memory was written by the op whose node is fn (fn's input 0 being t's old
    value): t, or the root of the view t is (through CopySlices), takes the new history, and
    every live view of that memory a fresh grad_fn."""
    root = t._base
    if root is None:
        set_history(t, fn, requires_grad, output_nr)
    else:
        set_history(root, CopySlices(root, fn, positions(t, root), t._data.shape), True)
    owner = t if root is None else root
    if owner._views is not None and owner._requires_grad:
        regenerate_views(owner)


def set_history(t, fn, requires_grad, output_nr=0):
    """Give t a new grad_fn; a retain_grad() on t follows it (t.grad is the new value's)."""
    old_fn, old_nr = t.grad_fn, t._output_nr
    t.grad_fn, t._output_nr, t._requires_grad = fn, output_nr, requires_grad
    if t._retains_grad and old_fn is not None and old_fn._retains_grad_hooks:
        keep = old_fn._retains_grad_hooks.pop(old_nr, None)
        if keep is not None and fn is not None:
            if fn._retains_grad_hooks is None:
                fn._retains_grad_hooks = {}
            fn._retains_grad_hooks[output_nr] = keep
            fn._has_hooks = True


def regenerate_views(root):
    """Every live view of root's memory: a fresh grad_fn from root's current history."""
    alive = []
    for ref in root._views:
        v = ref()
        if v is None:
            continue
        alive.append(ref)
        node = AsStridedBackward0((root,))
        node.positions, node.base_shape = positions(v, root), root._data.shape
        set_history(v, node, True)
    root._views = alive


def detach_(t):
    if t._base is not None:
        raise RuntimeError(DETACH_VIEW)
    t.grad_fn = None
    t._requires_grad = False
    return t
