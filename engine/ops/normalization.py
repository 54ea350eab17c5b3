"""Normalisation (batch_norm, layer_norm, group_norm, instance_norm), dropout and embedding.

The three norms share one kernel: normalise over some axes of (a view of) the input, then scale
and shift per channel. Its node keeps the normalised input and the statistics as arrays, so a
plain backward is a few array passes; a create_graph backward instead rebuilds the same formula
from the saved input with engine ops, which makes it differentiable again.
"""

import numpy as np

from .. import _device, _distributions, _dtype, _threads
from .._generator import default_generator
from .._tensor import bump_version
from ._common import STATE, Node, const, not_implemented, track, wrap, xp
from .shape import index_put_zeros

# torch.batch_norm, torch.embedding... take other argument orders than nn.functional's: only the
# nn.functional forms are exported (rms_norm's orders agree)
__all__ = ["rms_norm"]
METHODS = {}
INPLACE = {}


# -- the shared normalisation kernel ---------------------------------------------------------------
class _NormNode(Node):
    """Inputs (input, weight, bias); saved (input[, weight]).

    view: the shape the statistics are taken in (None: the input's own); axes: the reduced axes
    of that view; bshape: weight's shape broadcast against the input; paxes: the input axes a
    weight / bias gradient sums over; fixed: the statistics are constants (eval batch norm);
    mean, rstd: arrays shaped to broadcast in the view; xhat: the normalised input (None when
    the output itself is it: then it is recomputed, as the caller may write into the output)."""

    __slots__ = (
        "view",
        "axes",
        "bshape",
        "wshape",
        "paxes",
        "eps",
        "fixed",
        "mean",
        "rstd",
        "xhat",
    )

    def backward(self, g):
        saved = self.unpack()
        x = saved[0]
        w = saved[1] if len(saved) > 1 else None
        if STATE.enabled:
            return self._graph_backward(g, x, w)
        gd = g._data
        xhat = self.xhat
        if xhat is None:
            xs = x._data.reshape(self.view) if self.view else x._data
            xhat = ((xs - self.mean) * self.rstd).reshape(gd.shape)
        gx = gw = gb = None
        paxes = self.paxes
        if self.needs_grad(2):
            gb = wrap(gd.sum(paxes).reshape(self.wshape) if paxes else gd.copy())
        if self.needs_grad(1):
            gxh = gd * xhat
            gw = wrap(gxh.sum(paxes).reshape(self.wshape) if paxes else gxh)
        if self.needs_grad(0):
            gv = gd if w is None else gd * w._data.reshape(self.bshape)
            if self.fixed:
                dx = gv * self.rstd if self.view is None else gv.reshape(self.view) * self.rstd
            else:
                xh = xhat
                if self.view is not None:
                    gv, xh = gv.reshape(self.view), xhat.reshape(self.view)
                axes = self.axes
                m1 = gv.mean(axis=axes, keepdims=True)
                prod = gv * xh
                m2 = prod.mean(axis=axes, keepdims=True)
                if w is None:  # gv is the incoming gradient: leave it alone
                    dx = gv - m1
                else:  # gv is our own product: reuse it (each large array costs page faults)
                    dx = gv
                    dx -= m1
                dx -= xp(prod).multiply(xh, m2, out=prod)
                dx *= self.rstd
            gx = wrap(dx.reshape(gd.shape))
        return (gx, gw, gb)

    def _graph_backward(self, g, x, w):
        """The same gradients written with engine ops (double backward)."""
        shape = x._data.shape
        xs = x.reshape(self.view) if self.view else x
        axes = self.axes
        if self.fixed:
            mean, rstd = const(self.mean), const(self.rstd)
        else:
            mean = xs.mean(axes, keepdim=True)
            xc = xs - mean
            rstd = ((xc * xc).mean(axes, keepdim=True) + self.eps) ** -0.5
        xh = (xs - mean) * rstd
        gx = gw = gb = None
        paxes = self.paxes
        if self.needs_grad(2):
            gb = g.sum(paxes).reshape(self.wshape) if paxes else g
        if self.needs_grad(1):
            gxh = g * xh.reshape(shape)
            gw = gxh.sum(paxes).reshape(self.wshape) if paxes else gxh
        if self.needs_grad(0):
            gv = g if w is None else g * w.reshape(self.bshape)
            if self.view:
                gv = gv.reshape(self.view)
            if self.fixed:
                dx = gv * rstd
            else:
                m1 = gv.mean(axes, keepdim=True)
                m2 = (gv * xh).mean(axes, keepdim=True)
                dx = (gv - m1 - xh * m2) * rstd
            gx = dx.reshape(shape)
        return (gx, gw, gb)


class NativeBatchNormBackward0(_NormNode):
    __slots__ = ()


class NativeLayerNormBackward0(_NormNode):
    __slots__ = ()


class NativeGroupNormBackward0(_NormNode):
    __slots__ = ()


_OP_NAMES = {
    "NativeBatchNormBackward0": "batch_norm",
    "NativeLayerNormBackward0": "LayerNormKernelImpl",
    "NativeGroupNormBackward0": "GroupNormKernelImpl",
}


def _normalize(node_cls, input, weight, bias, eps, view, axes, bshape, paxes, stats=None):
    """(input - mean) * rstd * weight + bias, the statistics over `axes` of input seen as
    `view` (or the given `stats` = (mean, rstd)). Returns (output, mean, biased var)."""
    xd = input._data
    if xd.dtype.kind != "f":
        raise not_implemented(_OP_NAMES[node_cls.__name__], xd.dtype)
    m = xp(xd)
    xs = xd.reshape(view) if view else xd
    var = None
    if stats is None and _rows_split(xs, axes):
        mean, var, rstd, xc, xhat = _row_stats(xs, eps)
        spare = xc
    elif stats is None:
        mean = xs.mean(axis=axes, keepdims=True)
        xc = xs - mean
        sq = m.square(xc)
        var = sq.mean(axis=axes, keepdims=True)
        rstd = 1.0 / m.sqrt(var + eps)
        xhat = m.multiply(xc, rstd, out=sq)
        spare = xc  # free for the affine output
    else:
        mean, rstd = stats
        xhat = (xs - mean) * rstd
        spare = None
    if view:
        xhat = xhat.reshape(xd.shape)
        spare = None if spare is None else spare.reshape(xd.shape)
    if weight is not None:
        out = m.multiply(xhat, weight._data.reshape(bshape), out=spare)
        if bias is not None:
            out += bias._data.reshape(bshape)
    elif bias is not None:
        out = m.add(xhat, bias._data.reshape(bshape), out=spare)
    else:
        out = xhat
    out = wrap(out)
    if STATE.enabled and (
        input._requires_grad
        or (weight is not None and weight._requires_grad)
        or (bias is not None and bias._requires_grad)
    ):
        node = node_cls((input, weight, bias), (input,) if weight is None else (input, weight))
        node.view, node.axes, node.bshape, node.paxes = view, axes, bshape, paxes
        affine = weight if weight is not None else bias
        node.wshape = None if affine is None else affine._data.shape
        node.eps, node.fixed, node.mean, node.rstd = eps, stats is not None, mean, rstd
        node.xhat = None if out._data is xhat else xhat
        track(out, node)
    return out, mean, var


def _rows_split(xs, axes):
    """Whether _normalize's statistics go by rows over the engine's threads: over the last axis
    alone (layer norm of one dim) of a large contiguous host array."""
    return (
        axes == (xs.ndim - 1,)
        and xs.size >= _threads.MIN_WORK
        and _threads.can_split(xs)
        and _threads.worth(xs.size)
    )


def _row_stats(xs, eps):
    """_normalize's statistics over the last axis, rows split over the threads: (mean, var,
    rstd, x - mean, xhat), each row computed by the same steps as the one-thread path."""
    rows = xs.reshape(-1, xs.shape[-1])
    n = rows.shape[0]
    xc, xhat = np.empty_like(rows), np.empty_like(rows)
    mean, var, rstd = (np.empty((n, 1), xs.dtype) for _ in range(3))

    def share(s, e):
        mean[s:e] = mu = rows[s:e].mean(axis=1, keepdims=True)
        c = np.subtract(rows[s:e], mu, out=xc[s:e])
        sq = np.square(c, out=xhat[s:e])
        var[s:e] = v = sq.mean(axis=1, keepdims=True)
        rstd[s:e] = r = 1.0 / np.sqrt(v + eps)
        np.multiply(c, r, out=sq)

    _threads.over_rows(share, n, xs.size)
    kept = xs.shape[:-1] + (1,)
    return (
        mean.reshape(kept),
        var.reshape(kept),
        rstd.reshape(kept),
        xc.reshape(xs.shape),
        xhat.reshape(xs.shape),
    )


def _size(shape):
    """A shape as PyTorch prints it inside error messages."""
    return f"torch.Size({list(shape)})"


def _check_param(t, n, what):
    if t is not None and t._data.size != n:
        raise RuntimeError(f"{what} should contain {n} elements not {t._data.size}")


# -- batch_norm ------------------------------------------------------------------------------------
def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-05,
):
    xd = input._data
    shape = xd.shape
    c = shape[1] if xd.ndim > 1 else 0
    if training:
        count = xd.size // max(c, 1)
        if count == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{_size(xd.shape)}"
            )
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
    _check_param(running_mean, c, "running_mean")
    _check_param(running_var, c, "running_var")
    _check_param(weight, c, "weight")
    _check_param(bias, c, "bias")
    bshape = (c,) + (1,) * (xd.ndim - 2)
    axes = (0,) + tuple(range(2, xd.ndim))
    if not training:
        m = xp(xd)
        bs = (1,) + bshape
        mean = running_mean._data.reshape(bs).astype(xd.dtype, copy=False)
        rstd = 1.0 / m.sqrt(running_var._data.reshape(bs).astype(xd.dtype, copy=False) + eps)
        out, _, _ = _normalize(
            NativeBatchNormBackward0,
            input,
            weight,
            bias,
            eps,
            None,
            axes,
            bshape,
            axes,
            (mean, rstd),
        )
        return out
    out, mean, var = _normalize(
        NativeBatchNormBackward0, input, weight, bias, eps, None, axes, bshape, axes
    )
    if running_mean is not None or running_var is not None:
        n = xd.size // c
        if running_mean is not None:
            rm = running_mean._data
            rm *= 1 - momentum
            rm += (momentum * mean.reshape(c)).astype(rm.dtype, copy=False)
            bump_version(running_mean)
        if running_var is not None:
            rv = running_var._data
            rv *= 1 - momentum
            rv += (momentum * n / (n - 1) * var.reshape(c)).astype(rv.dtype, copy=False)
            bump_version(running_var)
    return out


# -- layer_norm ------------------------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, "
            f"not {type(normalized_shape).__name__}"
        )
    ns = tuple(int(s) for s in normalized_shape)
    xd = input._data
    k = len(ns)
    for t in (weight, bias):
        if t is not None and t._data.shape != ns:
            raise RuntimeError(
                f"Expected {'weight' if t is weight else 'bias'} to be of same shape as "
                f"normalized_shape, but got {'weight' if t is weight else 'bias'} of shape "
                f"{list(t._data.shape)} and normalized_shape = {list(ns)}"
            )
    if xd.ndim < k or xd.shape[xd.ndim - k :] != ns:
        raise RuntimeError(
            f"Given normalized_shape={list(ns)}, expected input with shape "
            f"[*, {', '.join(map(str, ns))}], but got input of size{list(xd.shape)}"
        )
    lead = xd.ndim - k
    axes = tuple(range(lead, xd.ndim))
    out, _, _ = _normalize(
        NativeLayerNormBackward0, input, weight, bias, eps, None, axes, ns, tuple(range(lead))
    )
    return out


# -- rms_norm --------------------------------------------------------------------------------------
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x * rsqrt(mean(x^2) + eps) * weight, composed of engine ops as PyTorch's CPU kernel is (so
    the graph has its nodes: MulBackward0 over RsqrtBackward0...). Half inputs are computed in
    float32, PyTorch's opmath type, whose machine epsilon is also the default eps."""
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(
            "rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, "
            f"not {type(normalized_shape).__name__}"
        )
    ns = tuple(int(s) for s in normalized_shape)
    xd = input._data
    k = len(ns)
    if weight is not None and weight._data.shape != ns:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight._data.shape)} and normalized_shape = {list(ns)}"
        )
    if xd.ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {xd.ndim}")
    if xd.shape[xd.ndim - k :] != ns:
        # PyTorch's wording has no comma after the "*" here (layer_norm's has one)
        raise RuntimeError(
            f"Given normalized_shape={list(ns)}, expected input with shape "
            f"[*{', '.join(map(str, ns))}], but got input of size{list(xd.shape)}"
        )
    low = xd.dtype.kind == "f" and xd.dtype.itemsize < 4
    x = input.to(_dtype.float32) if low else input
    if eps is None:
        eps = float(np.finfo(np.float64 if xd.dtype == np.float64 else np.float32).eps)
    dims = tuple(range(xd.ndim - k, xd.ndim))
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(input.dtype) if low else out


# -- group_norm ------------------------------------------------------------------------------------
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    xd = input._data
    if xd.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {xd.ndim}"
        )
    n, c = xd.shape[:2]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(xd.shape)} and num_groups={num_groups}"
        )
    for t in (weight, bias):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            raise RuntimeError(
                f"Expected {'weight' if t is weight else 'bias'} to be a vector of size equal "
                f"to the number of channels in input, but got "
                f"{'weight' if t is weight else 'bias'} of shape {list(t._data.shape)} and "
                f"input of shape {list(xd.shape)}"
            )
    bshape = (c,) + (1,) * (xd.ndim - 2)
    view = (n, num_groups, -1) if xd.size else None
    out, _, _ = _normalize(
        NativeGroupNormBackward0,
        input,
        weight,
        bias,
        eps,
        view,
        (2,),
        bshape,
        (0,) + tuple(range(2, xd.ndim)),
    )
    return out


# -- instance_norm ---------------------------------------------------------------------------------
def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-05,
):
    """Batch norm of the input seen as one sample of N*C channels (as PyTorch computes it)."""
    xd = input._data
    if use_input_stats:
        spatial = int(np.prod(xd.shape[2:], dtype=np.int64))
        if spatial == 1:
            raise ValueError(
                "Expected more than 1 spatial element when training, got input size "
                f"{_size(xd.shape)}"
            )
    elif running_mean is None or running_var is None:
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    n, c = xd.shape[:2]
    folded = input.reshape((1, n * c) + xd.shape[2:])
    rm = rv = None
    if running_mean is not None:
        rm = wrap(xp(xd).tile(running_mean._data, n))
    if running_var is not None:
        rv = wrap(xp(xd).tile(running_var._data, n))
    w = None if weight is None else weight.unsqueeze(0).expand(n, c).reshape(-1)
    b = None if bias is None else bias.unsqueeze(0).expand(n, c).reshape(-1)
    out = batch_norm(folded, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        for own, folded_stat in ((running_mean, rm), (running_var, rv)):
            if own is not None:
                own._data[...] = folded_stat._data.reshape(n, c).mean(0)
                bump_version(own)
    return out.reshape(xd.shape)


# -- dropout ---------------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, shape):
    """PyTorch's noise: `empty(shape).bernoulli_(1 - p).div_(1 - p)` in the input's float type,
    drawn from the default generator as PyTorch's CPU kernel draws it (one 53-bit uniform per
    element, kept where it is below 1 - p) and moved to the input's device."""
    d = input._data
    dt = d.dtype if d.dtype.kind == "f" else np.dtype(np.float32)
    if p == 1:
        return xp(d).zeros(shape, dt)
    n = int(np.prod(shape))
    keep = _distributions.bernoulli_scalar(default_generator, n, 1.0 - p).reshape(shape)
    mask = keep.astype(dt) / dt.type(1.0 - p)
    return _device.move(mask, input.device)


def _apply_mask(input, mask, inplace):
    if inplace:
        return input.mul_(const(mask))
    return input * const(mask)


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0 or input._data.size == 0:
        return input
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type "
            f"{input.dtype.legacy_name[:-6]}"
        )
    return _apply_mask(input, _keep_mask(input, p, input._data.shape), inplace)


def _feature_dropout(input, p, training, inplace, batched):
    _check_p(p)
    if not training or p == 0 or input._data.size == 0:
        return input
    shape = input._data.shape
    lead = 2 if batched else 1
    mask = _keep_mask(input, p, shape[:lead] + (1,) * (len(shape) - lead))
    return _apply_mask(input, mask, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _feature_dropout(input, p, training, inplace, nd == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    nd = input._data.ndim
    if nd not in (3, 4):
        import warnings

        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).",
            UserWarning,
            stacklevel=2,
        )
    elif nd == 3:
        import warnings

        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, nd in (3, 4))


def dropout3d(input, p=0.5, training=True, inplace=False):
    nd = input._data.ndim
    if nd not in (4, 5):
        import warnings

        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).",
            UserWarning,
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, nd == 5)


# -- embedding -------------------------------------------------------------------------------------
class EmbeddingBackward0(Node):
    __slots__ = ("indices", "num_weights", "padding_idx", "scale_grad_by_freq")

    def backward(self, g):
        idx = self.indices
        dim = g._data.shape[-1]
        g2 = g.reshape(-1, dim)
        flat = idx.reshape(-1)
        m = xp(flat)
        keep = None
        if self.padding_idx is not None:
            keep = (flat != self.padding_idx).astype(g._data.dtype)
        if self.scale_grad_by_freq:  # each row's gradient over how often the batch reads it
            counts = m.bincount(flat, minlength=self.num_weights)[flat]
            inv = (1.0 / counts).astype(g._data.dtype)
            keep = inv if keep is None else keep * inv
        if keep is not None:
            g2 = g2 * const(keep[:, None])
        return (None, index_put_zeros(g2, (flat,), (self.num_weights, dim), False))


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    idx = input._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{input.dtype.legacy_name} instead (while checking "
            "arguments for "
            "embedding)"
        )
    if sparse:  # the engine has no sparse tensors for the gradient
        raise NotImplementedError("embedding: sparse=True")
    n = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    out = wrap(weight._data[idx])
    if STATE.enabled and weight._requires_grad:
        node = EmbeddingBackward0((input, weight))
        node.indices, node.num_weights, node.padding_idx = idx, n, padding_idx
        node.scale_grad_by_freq = bool(scale_grad_by_freq)
        track(out, node)
    return out


def _renorm_rows(weight, idx, max_norm, norm_type):
    """PyTorch's embedding_renorm_, done in place outside autograd (F.embedding runs it under
    no_grad): each row the batch reads whose norm_type-norm exceeds max_norm is scaled by
    max_norm / (norm + 1e-7), the scale rounded to the weight's dtype as a Python scalar is."""
    w = weight._data
    m = xp(w)
    rows = m.unique(idx.reshape(-1))
    if not rows.size:
        return
    picked = m.abs(w[rows])
    if norm_type == float("inf"):
        norms = picked.max(1)
    elif norm_type == float("-inf"):
        norms = picked.min(1)
    elif norm_type == 0:
        norms = (picked != 0).sum(1).astype(w.dtype)
    elif norm_type == 1:
        norms = picked.sum(1)
    elif norm_type == 2:
        norms = m.sqrt((picked * picked).sum(1))
    else:
        norms = (picked**norm_type).sum(1) ** (1.0 / norm_type)
    norms = norms.astype(np.float64)
    over = norms > max_norm
    if not bool(over.any()):
        return
    scale = (max_norm / (norms[over] + 1e-7)).astype(w.dtype)
    w[rows[over]] *= scale[:, None]
    bump_version(weight)


FUNCTIONAL = {
    "batch_norm": batch_norm,
    "layer_norm": layer_norm,
    "rms_norm": rms_norm,
    "group_norm": group_norm,
    "instance_norm": instance_norm,
    "dropout": dropout,
    "dropout1d": dropout1d,
    "dropout2d": dropout2d,
    "dropout3d": dropout3d,
    "embedding": embedding,
}
