"""matmul with PyTorch's rules for 1-D and batched operands (and the operator @), linear (a
fused addmm), the addmm family (addmm baddbmm addmv addbmm, with beta and alpha), kron and
cross; einsum and tensordot are in contract.py."""

import numpy as np

from . import shape as shape_ops
from ._common import (
    STATE,
    Node,
    Tensor,
    broadcast_error,
    grad_casts,
    operands,
    requires_grad,
    track,
    wrap,
    wrap_dim,
    xp,
)
from .reduce import sum_to
from .shape import SqueezeBackward4, UnsafeViewBackward0


def _check_matmul(sa, sb):
    """PyTorch's messages for operands whose inner dimensions disagree."""
    if not sa or not sb:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are "
            f"{len(sa)}D and {len(sb)}D"
        )
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a == k_b:
        return
    if len(sa) == 1 and len(sb) == 1:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
            f"[{sb[0]}] to have the same number of elements, but got {sa[0]} and "
            f"{sb[0]} elements respectively"
        )
    if len(sa) == 2 and len(sb) == 1:
        raise RuntimeError(
            f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), vec ({sb[0]})"
        )
    if len(sa) <= 2 and len(sb) <= 2:
        ra = sa if len(sa) == 2 else (1,) + sa
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({ra[0]}x{ra[1]} and {sb[0]}x{sb[1]})"
        )
    batch = list(sb[:-2]) if len(sb) > 2 else list(sa[:-2])
    raise RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: "
        f"[{batch[-1] if batch else 1}, {k_a}] but got: "
        f"[{batch[-1] if batch else 1}, {k_b}]."
    )


class _MatmulNode(Node):
    __slots__ = ()

    def backward(self, g):
        a, b = self.unpack()
        a_vec, b_vec = a._data.ndim == 1, b._data.ndim == 1
        a2 = a.unsqueeze(0) if a_vec else a
        b2 = b.unsqueeze(-1) if b_vec else b
        g2 = g.unsqueeze(-1) if b_vec else g
        g2 = g2.unsqueeze(-2) if a_vec else g2
        ga = gb = None
        if self.needs_grad(0):
            ga = sum_to(matmul(g2, b2.mT), a2._data.shape)
            ga = ga.squeeze(0) if a_vec else ga
        if self.needs_grad(1):
            gb = sum_to(matmul(a2.mT, g2), b2._data.shape)
            gb = gb.squeeze(-1) if b_vec else gb
        return (ga, gb)


class DotBackward0(_MatmulNode):
    __slots__ = ()


class MvBackward0(_MatmulNode):
    __slots__ = ()


class MmBackward0(_MatmulNode):
    __slots__ = ()


class BmmBackward0(_MatmulNode):
    __slots__ = ()


def _node_for(na, nb, a_grad):
    """The product node PyTorch's matmul ends in. It folds a >= 3-D input against a matrix or
    vector into one mm / mv; a vector against a batch folds into an mv when the vector needs a
    gradient (PyTorch skips that fold when only the batch does)."""
    if na == 1 and nb == 1:
        return DotBackward0
    if nb == 1:
        return MvBackward0
    if nb == 2:
        return MmBackward0
    if na == 1 and a_grad:
        return MvBackward0
    return BmmBackward0


def _unsafe_view(inner, shape=None, node_cls=UnsafeViewBackward0):
    """inner reshaped as PyTorch's _unsafe_view (which matmul, linear and kron end in): a node
    over inner, and a result that is not a view, so an in-place op on it is recorded as usual.
    inner must be a fresh result that nothing else aliases."""
    d = inner._data
    out = wrap(d if shape is None else d.reshape(shape))
    if inner.grad_fn is not None:
        node = node_cls((inner,))
        node.in_shape = d.shape
        track(out, node)
    return out


def matmul(input, other, _batched_view=True):
    ad, bd = operands(input, other)
    _check_matmul(ad.shape, bd.shape)
    try:
        data = ad @ bd
    except ValueError:  # the batch dims do not broadcast
        raise broadcast_error(ad.shape[:-2], bd.shape[:-2]) from None
    out = wrap(data)
    if STATE.enabled and (input._requires_grad or other._requires_grad):
        na, nb, a_grad = ad.ndim, bd.ndim, input._requires_grad
        node = _node_for(na, nb, a_grad)((input, other), (input, other))
        node.casts = grad_casts(out, input, other)
        track(out, node)
        # a batched product ends in an _unsafe_view, except where PyTorch folds a matrix needing
        # a gradient against a batch (it then transposes and clones; not reproduced here)
        if _batched_view and (na >= 3 or nb >= 3) and not (na == 2 and a_grad):
            out = _unsafe_view(out)
        elif na == 1 and nb == 2:  # PyTorch: an mm of the vector as a row, then squeeze_(0)
            out = _unsafe_view(out, node_cls=SqueezeBackward4)
    return out


def mm(input, mat2):
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(
            "self must be a matrix" if input._data.ndim != 2 else "mat2 must be a matrix"
        )
    return matmul(input, mat2)


def bmm(input, mat2):
    if input._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError(
            "batch1 must be a 3D tensor" if input._data.ndim != 3 else "batch2 must be a 3D tensor"
        )
    return matmul(input, mat2, _batched_view=False)


def dot(input, other):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors"
        )
    return matmul(input, other)


def mv(input, vec):
    return matmul(input, vec)


def outer(input, vec2):
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


# -- linear: x @ W.T + b in one node (PyTorch's addmm) --------------------------------------------
class LinearAddmmBackward0(Node):
    """bias + input @ weight.T for a 2-D input. Inputs are (bias, input, weight), or
    (input, weight) without a bias (then it prints as MmBackward0, as in PyTorch)."""

    __slots__ = ("has_bias",)

    def backward(self, g):
        x, w = self.unpack()
        k = 1 if self.has_bias else 0
        grads = [None] * (k + 2)
        if self.has_bias and self.needs_grad(0):
            grads[0] = g.sum(0)
        if self.needs_grad(k):
            grads[k] = matmul(g, w)
        if self.needs_grad(k + 1):
            grads[k + 1] = matmul(g.mT, x)
        return tuple(grads)


LinearAddmmBackward0.__name__ = LinearAddmmBackward0.__qualname__ = "AddmmBackward0"


class LinearMmBackward0(LinearAddmmBackward0):
    __slots__ = ()


LinearMmBackward0.__name__ = LinearMmBackward0.__qualname__ = "MmBackward0"  # PyTorch's name


def linear(input, weight, bias=None):
    """input @ weight.T + bias. Other than 2-D inputs are folded to 2-D and back, as PyTorch
    does, so their grad_fn is the view (or squeeze) around the addmm."""
    xd, wd = input._data, weight._data
    if xd.dtype != wd.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{input.dtype.legacy_name[:-6]} and {weight.dtype.legacy_name[:-6]}"
        )
    if xd.ndim == 0 or xd.shape[-1] != wd.shape[-1]:
        rows = xd.size // xd.shape[-1] if xd.ndim and xd.shape[-1] else 1
        cols = xd.shape[-1] if xd.ndim else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
            f"{wd.shape[-1]}x{wd.shape[0] if wd.ndim == 2 else 1})"
        )
    if xd.ndim != 2:
        out_shape = xd.shape[:-1] + wd.shape[:1]
        if xd.ndim == 1:
            out = _addmm(shape_ops.unsqueeze(input, 0), weight, bias)
            return (
                shape_ops.reshape(out, out_shape)
                if bias is not None
                else shape_ops.squeeze(out, (0,))
            )
        out = _addmm(shape_ops.reshape(input, -1, xd.shape[-1]), weight, bias)
        if bias is None:  # not a view in PyTorch, unlike the result with a bias
            return _unsafe_view(out, out_shape)
        return shape_ops.reshape(out, out_shape)
    return _addmm(input, weight, bias)


def _addmm(input, weight, bias):
    data = input._data @ weight._data.T
    if bias is not None:
        try:
            data += bias._data
        except ValueError:
            raise broadcast_error(data.shape, bias._data.shape) from None
    out = wrap(data)
    if STATE.enabled and (
        input._requires_grad or weight._requires_grad or bias is not None and bias._requires_grad
    ):
        if bias is None:
            node = LinearMmBackward0((input, weight), (input, weight))
        else:
            node = LinearAddmmBackward0((bias, input, weight), (input, weight))
        node.has_bias = bias is not None
        track(out, node)
    return out


# -- addmm, baddbmm, addmv, addbmm: beta * input + alpha * (product) -------------------------------
def _low(d):
    return d.legacy_name[: -len("Tensor")].lower()


def _name(d):
    return d.legacy_name[: -len("Tensor")]


def _expand_error(input_shape, target):
    """PyTorch's message when `input` does not broadcast to the product's shape."""
    if len(input_shape) > len(target):
        return RuntimeError(
            f"expand(torch.DoubleTensor{{{list(input_shape)}}}, size={list(target)}): the number "
            f"of sizes provided ({len(target)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(input_shape)})"
        )
    lead = len(target) - len(input_shape)
    for i, have in enumerate(input_shape):
        want = target[lead + i]
        if have != want and have != 1:
            return RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                f"at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                f"Tensor sizes: {list(input_shape)}"
            )
    return None


class _AddProductNode(Node):
    """beta * input + alpha * product(a, b): inputs (input, a, b), saved (a, b)."""

    __slots__ = ("beta", "alpha", "in_shape")

    def backward(self, g):
        a, b = self.unpack()
        gi = ga = gb = None
        if self.needs_grad(0):
            gi = sum_to(g if self.beta == 1 else g * self.beta, self.in_shape)
        ga_raw, gb_raw = self.product_grads(g, a, b)
        if self.needs_grad(1):
            ga = ga_raw() if self.alpha == 1 else ga_raw() * self.alpha
        if self.needs_grad(2):
            gb = gb_raw() if self.alpha == 1 else gb_raw() * self.alpha
        return (gi, ga, gb)

    def product_grads(self, g, a, b):  # matrix (or batched matrix) products
        return (lambda: matmul(g, b.mT), lambda: matmul(a.mT, g))


class AddmmBackward0(_AddProductNode):
    __slots__ = ()


class BaddbmmBackward0(_AddProductNode):
    __slots__ = ()


class AddbmmBackward0(_AddProductNode):
    __slots__ = ()

    def product_grads(self, g, a, b):  # the product was summed over the batch
        return (lambda: matmul(g, b.mT), lambda: matmul(a.mT, g))


class AddmvBackward0(_AddProductNode):
    __slots__ = ()

    def product_grads(self, g, a, b):
        return (lambda: g.unsqueeze(1) * b.unsqueeze(0), lambda: matmul(a.mT, g))


def _add_product(input, a, b, product, beta, alpha, node_cls):
    shape = product.shape
    err = _expand_error(input._data.shape, shape)
    if err is not None:
        raise err
    m = xp(product)
    data = product if alpha == 1 else product * alpha
    if beta != 0:  # with beta == 0 the input is ignored, nan and inf included (as in PyTorch)
        data = data + (input._data if beta == 1 else input._data * beta)
    data = m.broadcast_to(data, shape).astype(product.dtype, copy=False)
    out = wrap(m.ascontiguousarray(data))
    if requires_grad(input, a, b):
        node = node_cls((input, a, b), (a, b))
        node.beta, node.alpha, node.in_shape = beta, alpha, input._data.shape
        track(out, node)
    return out


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t._data.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t._data.ndim}-D tensor")
    _same_dtype_mm(input, mat1, mat2)
    sa, sb = mat1._data.shape, mat2._data.shape
    if sa[1] != sb[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})"
        )
    product = mat1._data @ mat2._data
    return _add_product(input, mat1, mat2, product, beta, alpha, AddmmBackward0)


def _same_dtype_mm(input, a, b):
    if input.dtype != b.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_name(input.dtype)} and "
            f"{_name(b.dtype)}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_name(a.dtype)} and {_name(b.dtype)}"
        )


def _check_batches(b1, b2):
    for t in (b1, b2):
        if t._data.ndim < 3:
            wrap_dim(2, t._data.ndim)  # raises PyTorch's IndexError
        if t._data.ndim != 3:
            raise RuntimeError(
                "batch1 must be a 3D tensor" if t is b1 else "batch2 must be a 3D tensor"
            )


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches(batch1, batch2)
    if input.dtype != batch1.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_low(input.dtype)}, batch1: "
            f"{_low(batch1.dtype)}, batch2: {_low(batch2.dtype)}"
        )
    if batch2.dtype != batch1.dtype:
        raise RuntimeError(
            f"expected scalar type {_name(batch1.dtype)} but found {_name(batch2.dtype)}"
        )
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s2[:2] != (s1[0], s1[2]):
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}]."
        )
    product = batch1._data @ batch2._data
    return _add_product(input, batch1, batch2, product, beta, alpha, BaddbmmBackward0)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches(batch1, batch2)
    _same_dtype_mm(input, batch1, batch2)
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s1[0] != s2[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {s1[0]} and {s2[0]}"
        )
    if s1[2] != s2[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and {s2[1]}x{s2[2]})"
        )
    d1, d2 = batch1._data, batch2._data
    # one matrix product over the batch folded into the inner dimension
    product = d1.transpose(1, 0, 2).reshape(s1[1], -1) @ d2.reshape(-1, s2[2])
    return _add_product(input, batch1, batch2, product, beta, alpha, AddbmmBackward0)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    ni, nm, nv = input._data.ndim, mat._data.ndim, vec._data.ndim
    if nm != 2 or nv != 1 or ni > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {ni}, {nm}, {nv}")
    if not input.dtype == mat.dtype == vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_name(input.dtype)}, {_name(mat.dtype)}, and {_name(vec.dtype)}"
        )
    sm, sv, si = mat._data.shape, vec._data.shape, input._data.shape
    if sm[1] != sv[0] or (ni == 1 and si[0] not in (1, sm[0])):
        raise RuntimeError(
            f"size mismatch, got input ({si[0] if ni else 1}), mat ({sm[0]}x{sm[1]}), vec ({sv[0]})"
        )
    product = mat._data @ vec._data
    return _add_product(input, mat, vec, product, beta, alpha, AddmvBackward0)


# -- kron, cross ---------------------------------------------------------------------------------
def kron(input, other):
    na, nb = input._data.ndim, other._data.ndim
    n = max(na, nb)
    sa = (1,) * (n - na) + input._data.shape
    sb = (1,) * (n - nb) + other._data.shape
    a = input.reshape([x for s in sa for x in (s, 1)])
    b = other.reshape([x for s in sb for x in (1, s)])
    return _unsafe_view(a * b, [x * y for x, y in zip(sa, sb)])


class LinalgCrossBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        a, b = self.unpack()
        ga = gb = None
        if self.needs_grad(0):
            ga = sum_to(cross(b, g, dim=self.dim), a._data.shape)
        if self.needs_grad(1):
            gb = sum_to(cross(g, a, dim=self.dim), b._data.shape)
        return (ga, gb)


def cross(input, other, dim=None):
    ad, bd = operands(input, other)
    lead = max(ad.ndim, bd.ndim)
    sa = (1,) * (lead - ad.ndim) + ad.shape
    sb = (1,) * (lead - bd.ndim) + bd.shape
    if dim is None:  # the first dim of size 3 (PyTorch's deprecated default)
        dim = next((i for i, (x, y) in enumerate(zip(sa, sb)) if max(x, y) == 3), -1)
    dim = wrap_dim(dim, lead)
    if sa[dim] != 3 or sb[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa[dim]} and {sb[dim]}"
        )
    try:
        shape = np.broadcast_shapes(ad.shape, bd.shape)
    except ValueError:
        raise broadcast_error(ad.shape, bd.shape) from None
    m = xp(ad)
    data = m.cross(m.broadcast_to(ad, shape), m.broadcast_to(bd, shape), axis=dim)
    out = wrap(data)
    if requires_grad(input, other):
        node = LinalgCrossBackward0((input, other), (input, other))
        node.dim = dim
        node.casts = grad_casts(out, input, other)
        track(out, node)
    return out


# -- exports ---------------------------------------------------------------------------------------
__all__ = [
    "matmul",
    "mm",
    "bmm",
    "dot",
    "mv",
    "outer",
    "addmm",
    "baddbmm",
    "addmv",
    "addbmm",
    "kron",
    "cross",
]


def _swap(fn):
    """The reflected form of a binary op: `number op tensor`."""

    def reflected(self, other):
        return fn(wrap(np.asarray(other)) if not isinstance(other, Tensor) else other, self)

    return reflected


METHODS = {name: globals()[name] for name in __all__}
METHODS.update(__matmul__=matmul, __rmatmul__=_swap(matmul))
INPLACE = {n: globals()[n] for n in ("addmm", "baddbmm", "addmv", "addbmm")}
FUNCTIONAL = {"linear": linear}
