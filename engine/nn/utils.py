"""engine.nn.utils: gradient clipping, as torch.nn.utils (clip_grad_norm_, clip_grad_value_,
get_total_norm, clip_grads_with_norm_). Gradients are changed in place, outside autograd."""

import types
import warnings

import numpy as np

from .._device import xp
from .._tensor import Tensor, bump_version, wrap

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(d, p):
    """The p-norm of array d seen as one vector (PyTorch's linalg.vector_norm)."""
    m = xp(d)
    a = m.abs(d)
    if p == float("inf"):
        return a.max() if a.size else m.zeros((), d.dtype)
    if p == float("-inf"):
        return a.min()
    if p == 0:
        return (a != 0).sum().astype(d.dtype)
    if p == 1:
        return a.sum()
    if p == 2:
        return m.sqrt((a * a).sum())
    return (a**p).sum() ** (1.0 / p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return wrap(np.asarray(0.0, dtype=np.float32))
    first = tensors[0]._data
    norms = [_vector_norm(t._data, norm_type) for t in tensors]
    m = xp(first)
    dtype = np.result_type(*[n.dtype for n in norms])
    total = _vector_norm(m.stack([m.asarray(n).astype(dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(m.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return wrap(m.asarray(total))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = [p._grad for p in _as_list(parameters) if p._grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    total = total_norm._data
    coef = xp(total).minimum(max_norm / (total + 1e-6), 1.0)
    for g in grads:  # the factor is cast to each gradient's dtype first, as PyTorch's mul_ does
        g._data *= xp(g._data).asarray(coef).astype(g._data.dtype)
        bump_version(g)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p._grad for p in parameters if p._grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p._grad
        if g is not None:
            xp(g._data).clip(g._data, -clip_value, clip_value, out=g._data)
            bump_version(g)
