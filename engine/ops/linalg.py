"""matmul with PyTorch's rules for 1-D and batched operands, and linear (a fused addmm)."""

from ._common import STATE, Node, broadcast_error, grad_casts, operands, sum_to, track, wrap


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


def _node_for(na, nb):
    if na == 1 and nb == 1:
        return DotBackward0
    if na == 2 and nb == 1:
        return MvBackward0
    if na <= 2 and nb <= 2:
        return MmBackward0
    return BmmBackward0


def matmul(input, other):
    ad, bd = operands(input, other)
    _check_matmul(ad.shape, bd.shape)
    try:
        data = ad @ bd
    except ValueError:  # the batch dims do not broadcast
        raise broadcast_error(ad.shape[:-2], bd.shape[:-2]) from None
    out = wrap(data)
    if STATE.enabled and (input._requires_grad or other._requires_grad):
        node = _node_for(ad.ndim, bd.ndim)((input, other), (input, other))
        node.casts = grad_casts(out, input, other)
        track(out, node)
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
    return matmul(input, mat2)


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
class AddmmBackward0(Node):
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


class LinearMmBackward0(AddmmBackward0):
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
        from . import shape as shape_ops

        out_shape = xd.shape[:-1] + wd.shape[:1]
        if xd.ndim == 1:
            out = _addmm(shape_ops.unsqueeze(input, 0), weight, bias)
            return (
                shape_ops.reshape(out, out_shape)
                if bias is not None
                else shape_ops.squeeze(out, (0,))
            )
        out = _addmm(shape_ops.reshape(input, -1, xd.shape[-1]), weight, bias)
        node = shape_ops.ViewBackward0 if bias is not None else shape_ops.UnsafeViewBackward0
        return shape_ops.reshape(out, out_shape, _node=node)
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
            node = AddmmBackward0((bias, input, weight), (input, weight))
        node.has_bias = bias is not None
        track(out, node)
    return out
