"""scaled_dot_product_attention, composed of engine ops (matmul, masking, softmax, dropout), so
its gradients, double backward included, come from theirs."""

import math

import numpy as np

from ._common import const, xp
from .linalg import matmul
from .normalization import dropout
from .select import where
from .softmax import softmax

__all__ = []
METHODS = {}
INPLACE = {}


def _repeat_heads(t, times):
    """t (..., H, S, E) with each head repeated `times` times in place (repeat_interleave)."""
    shape = t._data.shape
    h = shape[-3]
    wide = t.unsqueeze(-3).expand(*shape[:-2], times, *shape[-2:])
    return wide.reshape(*shape[:-3], h * times, *shape[-2:])


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    qs, ks = query._data.shape, key._data.shape
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if enable_gqa and len(qs) >= 3 and len(ks) >= 3 and qs[-3] != ks[-3]:
        if qs[-3] % ks[-3]:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
        key = _repeat_heads(key, qs[-3] // ks[-3])
        value = _repeat_heads(value, qs[-3] // value._data.shape[-3])
    s = 1.0 / math.sqrt(qs[-1]) if scale is None else scale
    scores = matmul(query * s, key.transpose(-2, -1))
    L, S = scores._data.shape[-2:]
    masked = False
    if is_causal:
        # an additive 0 / -inf mask: the same softmax as a where(), and its node's backward is a
        # pass-through (the softmax already gives the masked scores zero gradient); every row
        # keeps its first key, so no row is empty unless there are no keys
        scores = scores + const(_causal_mask(scores._data, L, S))
        masked = S == 0
    elif attn_mask is not None:
        md = attn_mask._data
        if md.dtype != bool and md.dtype.kind != "f":
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_cpp_name(md.dtype)} and  query.dtype: "
                f"{_cpp_name(query._data.dtype)} instead."
            )
        if md.dtype == bool:
            scores = where(attn_mask, scores, -math.inf)
            masked = True
        else:
            scores = scores + attn_mask
            masked = bool(xp(md).isneginf(md).any())
    empty = None
    if masked:
        # PyTorch's safe softmax: a row that attends to nothing gets zeros, not NaNs (and no
        # gradient): its scores are zeroed before the softmax and its weights after
        sd = scores._data
        empty = (sd == -np.inf).all(axis=-1, keepdims=True)
        if bool(empty.any()):
            scores = where(const(empty), 0.0, scores)
        else:
            empty = None
    attn = softmax(scores, -1)
    if empty is not None:
        attn = where(const(empty), 0.0, attn)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return matmul(attn, value)


_CAUSAL = {}  # (L, S, dtype) -> the numpy causal mask: built once, read only


def _causal_mask(like, L, S):
    """(L, S) array of like's dtype: 0 on and below the diagonal, -inf above it."""
    m = xp(like)
    if m is not np:
        return m.where(m.tri(L, S, dtype=bool), 0.0, -math.inf).astype(like.dtype)
    key = (L, S, like.dtype)
    mask = _CAUSAL.get(key)
    if mask is None:
        if len(_CAUSAL) > 32:
            _CAUSAL.clear()
        mask = np.where(np.tri(L, S, dtype=bool), 0.0, -math.inf).astype(like.dtype)
        mask.flags.writeable = False
        _CAUSAL[key] = mask
    return mask


def _cpp_name(dt):
    """A dtype as PyTorch's C++ messages spell it."""
    names = {
        "int64": "long int",
        "int32": "int",
        "int16": "short int",
        "int8": "signed char",
        "uint8": "unsigned char",
        "float32": "float",
        "float64": "double",
        "float16": "c10::Half",
    }
    return names.get(np.dtype(dt).name, np.dtype(dt).name)


FUNCTIONAL = {"scaled_dot_product_attention": scaled_dot_product_attention}
