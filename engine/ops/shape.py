"""Shape ops, indexing, cat and stack. The ops PyTorch makes views return views here: tensors
sharing their base's memory and version counter (see engine/_views.py for what an in-place write
through one does)."""

import numpy as np

from .._device import is_device_array, scatter_add
from .._dtype import get as get_dtype
from .._tensor import share_version
from .._views import make_view
from ._common import STATE, Node, Tensor, const, grad_casts, track, wrap, wrap_dim, xp
from .reduce import sum_to

_view_of = make_view


def _owner(array):
    base = array.base
    return array if base is None else base


def _shares_memory(a, b):
    """Whether numpy (or cupy) gave a view: both arrays then own the same buffer."""
    return _owner(a) is _owner(b)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


# -- reshape, view, flatten -----------------------------------------------------------------------
class ViewBackward0(Node):
    __slots__ = ("in_shape",)
    is_view = True

    def backward(self, g):
        return (g.reshape(self.in_shape),)


def reshape(input, *shape, _node=ViewBackward0, _view_only=False):
    """A view where the memory layout allows one; otherwise (PyTorch's reshape) a copy."""
    shape = _shape_arg(shape)
    d = input._data
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    try:
        data = d.reshape(shape)
    except ValueError:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {d.size}") from None
    if data.size and not _shares_memory(d, data):
        if _view_only:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        copy = clone(input)  # PyTorch: clone, then an unsafe view of the clone (not a view)
        out = wrap(copy._data.reshape(shape))
        if copy.grad_fn is not None:
            node = UnsafeViewBackward0((copy,))
            node.in_shape = d.shape
            track(out, node)
        return out
    out = _view_of(input, data)
    if STATE.enabled and input._requires_grad:
        node = _node((input,))
        node.in_shape = d.shape
        track(out, node)
    return out


def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)) and shape[0] is not None:
        return _view_dtype(input, get_dtype(shape[0]))
    return reshape(input, *shape, _view_only=True)


def _view_dtype(input, dtype):
    """view(dtype): the same bytes read as another dtype, sharing memory. As in PyTorch the
    result is outside autograd (no grad_fn, requires_grad False); a different element size
    rescales the last dim, which must then be contiguous."""
    d = input._data
    have, want = input.dtype, dtype
    if have.itemsize != want.itemsize:
        what = (
            f"to view {have.legacy_name[:-6]} as {want.legacy_name[:-6]} (different element sizes)"
        )
        if d.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if d.shape[-1] != 1 and d.strides[-1] != d.itemsize:
            raise RuntimeError(
                f"self.stride(-1) must be 1 {what}, but got {d.strides[-1] // d.itemsize}"
            )
        ratio = want.itemsize // have.itemsize
        if ratio > 1 and d.shape[-1] % ratio:
            raise RuntimeError(
                f"self.size(-1) must be divisible by {ratio} {what}, but got {d.shape[-1]}"
            )
        if d.shape[-1] == 1 and d.strides[-1] != d.itemsize:  # numpy wants a unit last stride
            d = d[..., 0:1].reshape(d.shape)
    out = wrap(d.view(want.np))
    share_version(input, out)  # the same memory: writes through either count for both
    return out


def view_as(input, other):
    return view(input, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    if not shape:
        return reshape(input, 1)
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for v in shape[s : e + 1]:
        n *= v
    return reshape(input, shape[:s] + (n,) + shape[e + 1 :])


def unflatten(input, dim, sizes):
    shape = input._data.shape
    dim = wrap_dim(dim, len(shape))
    return reshape(input, shape[:dim] + tuple(sizes) + shape[dim + 1 :])


# -- transpose, permute ---------------------------------------------------------------------------
class TransposeBackward0(Node):
    __slots__ = ("dims",)
    is_view = True

    def backward(self, g):
        return (g.transpose(*self.dims),)


class TBackward0(Node):
    __slots__ = ()
    is_view = True

    def backward(self, g):
        return (g.t(),)


def transpose(input, dim0, dim1, _node=TransposeBackward0):
    d = input._data
    dim0, dim1 = wrap_dim(dim0, d.ndim), wrap_dim(dim1, d.ndim)
    out = _view_of(input, xp(d).swapaxes(d, dim0, dim1) if d.ndim else d)
    if STATE.enabled and input._requires_grad:
        node = _node((input,))
        if _node is TransposeBackward0:
            node.dims = (dim0, dim1)
        track(out, node)
    return out


def t(input):
    if input._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D"
        )
    if input._data.ndim < 2:
        return input
    return transpose(input, 0, 1, TBackward0)


class PermuteBackward0(Node):
    __slots__ = ("inverse",)
    is_view = True

    def backward(self, g):
        return (g.permute(*self.inverse),)


def permute(input, *dims):
    dims = _shape_arg(dims)
    d = input._data
    if len(dims) != d.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does "
            "not match the length of the desired ordering of dimensions i.e. "
            f"input.dim() = {d.ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(x, d.ndim) for x in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = _view_of(input, d.transpose(dims))
    if STATE.enabled and input._requires_grad:
        node = PermuteBackward0((input,))
        node.inverse = tuple(np.argsort(dims).tolist())
        track(out, node)
    return out


def T(input):  # noqa: N802 - PyTorch's name
    n = input._data.ndim
    return permute(input, *reversed(range(n))) if n >= 2 else input


def mT(input):  # noqa: N802
    if input._data.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. Got "
            f"{input._data.ndim}-D tensor."
        )
    return transpose(input, -2, -1)


# -- unsqueeze, squeeze ---------------------------------------------------------------------------
class UnsqueezeBackward0(Node):
    __slots__ = ("dim",)
    is_view = True

    def backward(self, g):
        return (g.squeeze(self.dim),)


def unsqueeze(input, dim):
    d = input._data
    dim = wrap_dim(dim, d.ndim + 1)
    out = _view_of(input, xp(d).expand_dims(d, dim))
    if STATE.enabled and input._requires_grad:
        node = UnsqueezeBackward0((input,))
        node.dim = dim
        track(out, node)
    return out


class SqueezeBackward0(ViewBackward0):
    __slots__ = ()


class SqueezeBackward1(ViewBackward0):
    __slots__ = ()


class SqueezeBackward4(ViewBackward0):
    """squeeze with a tuple of dims (PyTorch's squeeze.dims overload)."""

    __slots__ = ()


class UnsafeViewBackward0(ViewBackward0):
    """The reshape PyTorch's matmul and linear use to unfold batch dims: its result is not a
    view (in-place messages name it by its own name)."""

    __slots__ = ()
    is_view = False


def squeeze(input, dim=None):
    d = input._data
    if dim is None:
        shape, cls = tuple(s for s in d.shape if s != 1), SqueezeBackward0
    else:
        many = isinstance(dim, (tuple, list))
        dims = {wrap_dim(x, d.ndim) for x in (dim if many else (dim,))}
        shape = tuple(s for i, s in enumerate(d.shape) if not (i in dims and s == 1))
        cls = SqueezeBackward4 if many else SqueezeBackward1
    out = _view_of(input, d.reshape(shape))
    if STATE.enabled and input._requires_grad:
        node = cls((input,))
        node.in_shape = d.shape
        track(out, node)
    return out


# -- expand ---------------------------------------------------------------------------------------
class ExpandBackward0(Node):
    __slots__ = ("in_shape",)
    is_view = True

    def backward(self, g):
        return (sum_to(g, self.in_shape),)


def expand(input, *sizes):
    sizes = _shape_arg(sizes)
    d = input._data
    if len(sizes) < d.ndim:
        raise RuntimeError(
            f"expand(torch.{input.dtype.legacy_name}{{{list(d.shape)}}}, "
            f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be greater or "
            "equal "
            f"to the number of dimensions in the tensor ({d.ndim})"
        )
    lead = len(sizes) - d.ndim
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a "
                    f"leading, non-existing dimension {i}"
                )
            target.append(s)
            continue
        have = d.shape[i - lead]
        if s == -1:
            s = have
        elif have != s and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(d.shape)}"
            )
        target.append(s)
    target = tuple(target)
    if target == d.shape:
        data = d
    else:
        data = xp(d).broadcast_to(d, target)
    out = _view_of(input, data)
    if STATE.enabled and input._requires_grad:
        node = ExpandBackward0((input,))
        node.in_shape = d.shape
        track(out, node)
    return out


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_to(input, size):
    return expand(input, size)


# -- alias --------------------------------------------------------------------------------------
class AliasBackward0(Node):
    __slots__ = ()
    is_view = True

    def backward(self, g):
        return (g,)


def alias(input):
    """The same storage under a node of its own: a place to hook one use of a tensor (the graph
    layer gives each editor edge one, to see the gradient that flows along that edge)."""
    out = _view_of(input, input._data)
    if STATE.enabled and input._requires_grad:
        track(out, AliasBackward0((input,)))
    return out


# -- copies: clone, contiguous, to(dtype) ---------------------------------------------------------
class CloneBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (g,)


def clone(input):
    out = wrap(input._data.copy())
    if STATE.enabled and input._requires_grad:
        track(out, CloneBackward0((input,)))
    return out


def contiguous(input):
    d = input._data
    return input if d.flags.c_contiguous else clone(input)


class ToCopyBackward0(Node):
    __slots__ = ("in_dtype",)

    def backward(self, g):
        return (g.to(self.in_dtype),)


def to_dtype(input, dtype, copy=False):
    target = get_dtype(dtype)
    d = input._data
    if d.dtype == target.np and not copy:
        return input
    out = wrap(d.astype(target.np))
    if STATE.enabled and input._requires_grad and target.is_floating_point:
        node = ToCopyBackward0((input,))
        node.in_dtype = input.dtype
        track(out, node)
    return out


# -- cat, stack -----------------------------------------------------------------------------------
class CatBackward0(Node):
    __slots__ = ("dim", "bounds")

    def backward(self, g):
        index = [slice(None)] * g._data.ndim
        grads = []
        for i, (lo, hi) in enumerate(self.bounds):
            if self.needs_grad(i):
                index[self.dim] = slice(lo, hi)
                grads.append(g[tuple(index)])
            else:
                grads.append(None)
        return tuple(grads)


def _tensor_list(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(x).__name__}"
            )
    return tensors


def cat(tensors, dim=0):
    tensors = _tensor_list(tensors, "torch.cat")
    # PyTorch skips 1-D empty tensors in cat (a legacy rule people rely on)
    arrays = [x._data for x in tensors]
    ref = next((a for a in arrays if not (a.ndim == 1 and a.size == 0)), arrays[0])
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = wrap_dim(dim, ref.ndim)
    for i, a in enumerate(arrays):
        if a.ndim == 1 and a.size == 0 and ref.ndim != 1:
            continue
        if a.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}"
            )
        for k in range(ref.ndim):
            if k != dim and a.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. "
                    f"Expected size {ref.shape[k]} but got size {a.shape[k]} for "
                    f"tensor number {i} in the list."
                )
    kept = [a for a in arrays if not (a.ndim == 1 and a.size == 0 and ref.ndim != 1)]
    out = wrap(xp(ref).concatenate(kept, axis=dim))
    if STATE.enabled and any(x._requires_grad for x in tensors):
        node = CatBackward0(tensors)
        node.casts = grad_casts(out, *tensors)
        node.dim, bounds, at = dim, [], 0
        for a in arrays:
            n = a.shape[dim] if a.ndim == ref.ndim else 0
            bounds.append((at, at + n))
            at += n
        node.bounds = bounds
        track(out, node)
    return out


concat = concatenate = cat


class StackBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        return tuple(
            g.select(self.dim, i) if self.needs_grad(i) else None
            for i in range(len(self.next_functions))
        )


def stack(tensors, dim=0):
    tensors = _tensor_list(tensors, "stack")
    arrays = [x._data for x in tensors]
    for i, a in enumerate(arrays):
        if a.shape != arrays[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"{list(arrays[0].shape)} at entry 0 and {list(a.shape)} at entry "
                f"{i}"
            )
    dim = wrap_dim(dim, arrays[0].ndim + 1)
    out = wrap(xp(arrays[0]).stack(arrays, axis=dim))
    if STATE.enabled and any(x._requires_grad for x in tensors):
        node = StackBackward0(tensors)
        node.casts = grad_casts(out, *tensors)
        node.dim = dim
        track(out, node)
    return out


# -- indexing -------------------------------------------------------------------------------------
_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result"
)


def _index_key(key, d):
    """Turn tensors and lists inside an index into arrays; say whether it is basic indexing."""
    if isinstance(key, list) and any(
        k is None or k is Ellipsis or isinstance(k, (slice, list, tuple, Tensor)) for k in key
    ):
        # PyTorch still reads such a list as a tuple of indices (x[[[0, 1], [1, 0]]])
        import warnings

        warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=3)
        key = tuple(key)
    if not isinstance(key, tuple):
        key = (key,)
    out, basic = [], True
    for k in key:
        if isinstance(k, Tensor):
            k = k._data
            if k.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            basic = False
        elif is_device_array(k):  # an index array a node kept (IndexPutBackward0's key)
            basic = False
        elif isinstance(k, (list, tuple, np.ndarray)):
            k = np.asarray(k)
            if k.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            basic = False
        elif not (k is None or k is Ellipsis or isinstance(k, (int, slice, np.integer))):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or "
                "byte Variables are valid indices (got "
                f"{type(k).__name__})"
            )
        if isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError("step must be greater than zero")
        out.append(k)
    return tuple(out), basic


def _index_error(exc, d):
    msg = str(exc)
    if msg.startswith("too many indices"):
        return IndexError(f"too many indices for tensor of dimension {d.ndim}")
    return IndexError(msg.replace(" axis ", " dimension "))


class _IndexNode(Node):
    __slots__ = ("key", "in_shape", "in_dtype", "basic")

    def backward(self, g):
        return (index_put_zeros(g, self.key, self.in_shape, self.basic),)


class SelectBackward0(_IndexNode):
    __slots__ = ()
    is_view = True


class SliceBackward0(_IndexNode):
    __slots__ = ()
    is_view = True


class IndexBackward0(_IndexNode):
    __slots__ = ()


# PyTorch runs a basic index as a sequence of select, slice and unsqueeze calls (full slices
# skipped, `x[:]` an alias); the grad_fn a user sees is the last one's. The gradient is the same
# scatter into zeros whatever the name, so these share _IndexNode's backward.
_IndexUnsqueeze = type("UnsqueezeBackward0", (_IndexNode,), {"__slots__": (), "is_view": True})
_IndexAlias = type("AliasBackward0", (_IndexNode,), {"__slots__": (), "is_view": True})


def _basic_node(key, shape):
    """The node class of the last view op PyTorch's indexing would run for a basic key."""
    cls = _IndexAlias
    dim, ndim = 0, len(shape)
    spans = sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is None:
            cls = _IndexUnsqueeze
        elif k is Ellipsis:
            dim += ndim - spans
        elif isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            if not (
                start in (None, 0)
                and step in (None, 1)
                and (stop is None or (dim < ndim and stop >= shape[dim]))
            ):
                cls = SliceBackward0
            dim += 1
        else:
            cls = SelectBackward0
            dim += 1
    return cls


def _split_integers(key):
    """PyTorch applies the integers of an index that also holds arrays first, as selects, and
    only then the arrays (numpy would count the integers among the advanced indices, which
    places the result's dims differently): the key for each of the two steps."""
    first = tuple(
        k if _is_int(k) else None if k is None else Ellipsis if k is Ellipsis else slice(None)
        for k in key
    )
    then = tuple(slice(None) if k is None else k for k in key if not _is_int(k))
    return first, then


def _is_int(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)


def getitem(input, key):
    d = input._data
    key, basic = _index_key(key, d)
    if not basic and any(_is_int(k) for k in key):
        first, then = _split_integers(key)
        return getitem(getitem(input, first), then)
    try:
        # with an Ellipsis numpy gives a 0-d view where plain integers would give a scalar copy
        data = d[key + (Ellipsis,)] if basic and Ellipsis not in key else d[key]
    except IndexError as exc:
        raise _index_error(exc, d) from None
    out = _view_of(input, data) if basic else wrap(data)
    if STATE.enabled and input._requires_grad:
        cls = _basic_node(key, d.shape) if basic else IndexBackward0
        node = cls((input,))
        node.key, node.in_shape, node.basic = key, d.shape, basic
        track(out, node)
    return out


def select(input, dim, index):
    d = input._data
    dim = wrap_dim(dim, d.ndim)
    n = d.shape[dim]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(d.shape)} at dimension {dim}"
        )
    return getitem(input, (slice(None),) * dim + (index,))


def narrow(input, dim, start, length):
    dim = wrap_dim(dim, input._data.ndim)
    return getitem(input, (slice(None),) * dim + (slice(start, start + length),))


class IndexPutBackward0(Node):
    """out = input with `values` put at `key`: input's gradient is zero at key, the values get
    what lands on key (summed back to their shape)."""

    __slots__ = ("key", "value_shape")

    def backward(self, g):
        gx = gv = None
        if self.needs_grad(0):
            keep = xp(g._data).ones(g._data.shape, g._data.dtype)
            keep[self.key] = 0
            gx = g * const(keep)
        if self.needs_grad(1):
            gv = sum_to(g[self.key], self.value_shape)
        return (gx, gv)


def index_put_zeros(values, key, shape, basic):
    """zeros(shape) with `values` added at `key` (repeated indices add up): the gradient of an
    index, and differentiable again."""
    v = values._data
    data = xp(v).zeros(shape, v.dtype)
    if basic:
        data[key] = v
    else:
        scatter_add(data, key, v)
    out = wrap(data)
    if STATE.enabled and values._requires_grad:
        node = IndexPutBackward0((None, values))
        node.key, node.value_shape = key, v.shape
        track(out, node)
    return out


def index_put(input, key, value):
    """Out-of-place `input[key] = value` (PyTorch's index_put); Tensor.__setitem__ runs it in
    place for advanced indices."""
    d = input._data
    key, _ = _index_key(key, d)
    data = d.copy()
    v = value._data if isinstance(value, Tensor) else value
    try:
        data[key] = v
    except IndexError as exc:
        raise _index_error(exc, d) from None
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(np.shape(v))} cannot be "
            f"broadcast to indexing result of shape {list(d[key].shape)}"
        ) from None
    out = wrap(data)
    if STATE.enabled and (
        input._requires_grad or isinstance(value, Tensor) and value._requires_grad
    ):
        node = IndexPutBackward0((input, value))
        node.key, node.value_shape = key, np.shape(v)
        track(out, node)
    return out


# -- exports ---------------------------------------------------------------------------------------
__all__ = [
    "reshape",
    "flatten",
    "unflatten",
    "transpose",
    "permute",
    "t",
    "unsqueeze",
    "squeeze",
    "broadcast_to",
    "clone",
    "select",
    "narrow",
    "cat",
    "concat",
    "concatenate",
    "stack",
]
_NOT_METHODS = ("cat", "concat", "concatenate", "stack")  # functions of several tensors
_METHODS_ONLY = ("view", "view_as", "expand", "expand_as", "contiguous")
METHODS = {n: globals()[n] for n in (*__all__, *_METHODS_ONLY) if n not in _NOT_METHODS}
METHODS.update(__getitem__=getitem)
PROPERTIES = {"T": T, "mT": mT}
INPLACE = {}
FUNCTIONAL = {}
