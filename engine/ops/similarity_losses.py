"""cosine_similarity and the losses built on a similarity or an order of two inputs:
cosine_embedding_loss and margin_ranking_loss, composites of engine ops as in PyTorch."""

import numpy as np

from ._common import broadcast_error, const, wrap_dim, xp
from ._loss_common import legacy_reduction, reduce_loss, type_name_of
from .activations import vector_norm
from .select import where

__all__ = ["cosine_similarity"]


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    d1, d2 = x1._data, x2._data
    dt = np.result_type(d1.dtype, d2.dtype)
    if dt.kind != "f":
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{type_name_of(x1 if d1.dtype == dt else x2)}"
        )
    try:
        shape = np.broadcast_shapes(d1.shape, d2.shape)
    except ValueError:
        raise broadcast_error(d1.shape, d2.shape) from None
    dim = wrap_dim(dim, len(shape))
    if d1.shape != shape:
        x1 = x1.expand(shape)
    if d2.shape != shape:
        x2 = x2.expand(shape)
    # each norm is floored at eps as a value only: its gradient is the plain norm's
    n1 = _floored(vector_norm(x1, 2, dim, keepdim=True), eps)
    n2 = _floored(vector_norm(x2, 2, dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _floored(norm, eps):
    data = norm._data
    low = data < eps
    if not bool(low.any()):
        return norm
    return norm + const(xp(data).where(low, eps - data, 0).astype(data.dtype))


def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    reduction = legacy_reduction(size_average, reduce, reduction)
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-12) if input1._data.ndim else None
    if cos is None:
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes [] and []."
        )
    td = target._data
    pos = const(td == 1)
    neg = const(td == -1)
    loss = where(pos, 1 - cos, 0.0) + where(neg, (cos - margin).clamp(min=0), 0.0)
    return reduce_loss(loss, reduction)


def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    reduction = legacy_reduction(size_average, reduce, reduction)
    d1, d2, dt = input1._data, input2._data, target._data
    if not (d1.ndim == d2.ndim == dt.ndim):
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: torch.Size({list(input1.shape)}), input2: torch.Size({list(input2.shape)}), "
            f"target: torch.Size({list(target.shape)}) "
        )
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return reduce_loss(loss, reduction)


METHODS = {}
INPLACE = {}
FUNCTIONAL = {
    n: globals()[n] for n in ("cosine_similarity", "cosine_embedding_loss", "margin_ranking_loss")
}
