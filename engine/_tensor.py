"""The Tensor: an array (numpy or cupy) plus the autograd state PyTorch keeps beside it.

This file holds the data model: construction, attributes, autograd bookkeeping (requires_grad,
grad, hooks, retain_grad, detach, backward) and in-place semantics (version counter, the leaf
check). The maths lives in `engine.ops`; `engine._methods` binds it onto Tensor as methods.
"""

import warnings
from collections import OrderedDict

import numpy as np

from . import _device, _dtype
from ._repr import tensor_repr

# The layers: the Tensor is the data model under everything else. engine.autograd (its graph
# nodes check isinstance(x, Tensor) and wrap gradients) and engine._creation (Tensor(data)
# converts data as torch.tensor does) build on this module, so the few methods that hand work
# to them import them when called, never at load time.

_ndarray = np.ndarray
_new = object.__new__

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more informations."
)


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's torch.Size."""

    __slots__ = ()

    def __repr__(self):
        return f"engine.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


def wrap(data, requires_grad=False):
    """A new tensor around `data` (no copy). The hot path of every op: keep it lean."""
    if data.__class__ is not _ndarray and isinstance(data, np.generic):
        data = np.asarray(data)  # numpy gives scalars for 0-d results; a tensor keeps an array
    t = _new(Tensor)
    t._data = data
    t._requires_grad = requires_grad
    t.grad_fn = None
    t._vc = None  # version counter, made on the first in-place write or view (see bump_version)
    return t


def version(t):
    """How many in-place writes t's storage has seen."""
    vc = t._vc
    return 0 if vc is None else vc[0]


def bump_version(t):
    """Count an in-place write. The counter is a one-element list so views share it."""
    vc = t._vc
    if vc is None:
        t._vc = [1]
    else:
        vc[0] += 1


def share_version(src, dst):
    """Make `dst` (a view of, or detached from, `src`) count writes together with `src`."""
    if src._vc is None:
        src._vc = [0]
    dst._vc = src._vc


class Tensor:
    # Four slots are set on every tensor; the rarely changed state below has class defaults and
    # lands in the instance __dict__ only when set, which keeps creating a tensor cheap.
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_vc", "__weakref__", "__dict__")
    _grad = None
    _output_nr = 0
    _hooks = None  # tensor hooks of a leaf (a non-leaf's live on its grad_fn)
    _post_hooks = None  # post-accumulate-grad hooks
    _accumulator = None  # weak reference to this leaf's AccumulateGrad node
    _retains_grad = False
    # views (engine/_views.py): the root base of a view, a root's live views, and why a view
    # may not be written in place
    _base = None
    _views = None
    _view_no_grad = 0
    _view_multi = False
    __array_ufunc__ = None  # numpy hands `array * tensor` over to Tensor.__rmul__
    __hash__ = object.__hash__  # identity, as in PyTorch (== is elementwise)

    def __init__(self, data=(), dtype=None, device=None, requires_grad=False):
        from ._creation import as_array  # at call time: _creation builds on this module

        wrap_into(self, as_array(data, dtype, device))
        if requires_grad:
            self.requires_grad = True

    # -- what it holds ---------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    @property
    def dtype(self):
        return _dtype.from_numpy(self._data.dtype)

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def element_size(self):
        return self._data.dtype.itemsize

    @property
    def device(self):
        return _device.device_of(self._data)

    @property
    def is_cuda(self):
        return self._data.__class__ is not _ndarray

    @property
    def data(self):
        """The same storage without history or a shared version counter (PyTorch's `.data`)."""
        return wrap(self._data)

    @data.setter
    def data(self, other):
        self._data = other._data

    # -- autograd state ---------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = bool(flag)
        if self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if flag and self._data.dtype.kind != "f":
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        if requires_grad and self._data.dtype.kind != "f":  # PyTorch words this path differently
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of "
                    f"type {type(value).__name__}"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size "
                    f"'{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        """How many times this storage was written in place (shared by views and detach)."""
        return version(self)

    def _is_view(self):
        return self._base is not None

    def data_ptr(self):
        d = self._data
        return d.__array_interface__["data"][0] if d.__class__ is _ndarray else d.data.ptr

    def _bump_version(self):
        bump_version(self)

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        import weakref

        from .autograd.grad_mode import STATE  # at call time: engine.autograd builds on Tensor

        ref = weakref.ref(self)

        def keep(grad):
            t = ref()
            if t is not None:
                g = grad if STATE.enabled else grad.detach().clone()
                t._grad = g if t._grad is None else t._grad + g

        if self.grad_fn._retains_grad_hooks is None:
            self.grad_fn._retains_grad_hooks = {}
            self.grad_fn._has_hooks = True
        self.grad_fn._retains_grad_hooks[self._output_nr] = keep
        self._retains_grad = True

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed; a tensor it returns replaces
        the gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_pre_hook(self._output_nr, hook)
        from .autograd.graph import add_hook  # at call time: engine.autograd builds on Tensor

        if self._hooks is None:
            self._hooks = OrderedDict()
        return add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        from .autograd.graph import add_hook  # at call time: engine.autograd builds on Tensor

        if self._post_hooks is None:
            self._post_hooks = OrderedDict()
        return add_hook(self._post_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward  # at call time: engine.autograd builds on Tensor

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """Same storage and version counter, no history (PyTorch's detach)."""
        t = wrap(self._data)
        share_version(self, t)
        return t

    # -- leaving the engine -------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        if self._data.__class__ is not _ndarray:
            if not force:
                raise TypeError(
                    f"can't convert {self.device} device type tensor to numpy. Use "
                    "Tensor.cpu() to copy the tensor to host memory first."
                )
            return self._data.get()
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    def __repr__(self):
        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0 and spec:
            return format(self._data.item(), spec)
        return repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.cpu()._data, self._requires_grad, str(self.device)))

    # -- in place (the rules are in engine/_views.py, bound here by engine/_methods.py) --------
    def _write(self, values):
        """Copy `values` into this storage in place, with PyTorch's shape and dtype rules."""
        d = self._data
        if values.dtype != d.dtype and not np.can_cast(values.dtype, d.dtype, "same_kind"):
            raise RuntimeError(
                f"result type {_scalar_name(values.dtype)} can't be cast to the "
                f"desired output type {_scalar_name(d.dtype)}"
            )
        if any(st == 0 and n > 1 for n, st in zip(d.shape, d.strides)):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation."
            )
        if values.shape != d.shape:
            try:
                shape = np.broadcast_shapes(values.shape, d.shape)
            except ValueError:
                shape = None
            if shape != d.shape:
                raise RuntimeError(
                    f"output with shape {list(d.shape)} doesn't match the "
                    f"broadcast shape {list(shape or values.shape)}"
                )
        d[...] = values
        bump_version(self)


def _scalar_name(np_dtype):
    return _dtype.from_numpy(np_dtype).legacy_name[: -len("Tensor")]


def wrap_into(t, data):
    """Initialise an already created tensor object (used by Tensor() and Parameter())."""
    t._data = data
    t._requires_grad = False
    t.grad_fn = None
    t._vc = None


def _rebuild(array, requires_grad, device):
    t = wrap(array, requires_grad)
    return t if device == "cpu" else t.to(device)


def wrap_dim(dim, ndim):
    """Normalise a possibly negative dim, with PyTorch's out-of-range message."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim % ndim if ndim else 0
