"""Creating tensors: from data, filled, ranges; `manual_seed` of the default generator. The
random tensors are in `_sampling`, the generator in `_generator`."""

import numpy as np

from . import _device, _dtype
from ._generator import default_generator
from ._tensor import Tensor, wrap


def _target_device(device):
    return _device.CPU if device is None else _device.device(device)


def as_array(data, dtype=None, device=None):
    """An array for `data` (nested lists, numbers, numpy arrays, tensors) on `device`."""
    if isinstance(data, Tensor):
        arr = data._data
        if type(arr) is not np.ndarray and device is None:
            device = data.device
        arr = arr if type(arr) is np.ndarray else arr.get()
        arr = arr.copy()
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.array(data)
        if dtype is None:
            arr = arr.astype(_dtype.from_numpy(arr.dtype).np, copy=False)
    else:
        if isinstance(data, (list, tuple)) and _holds_tensors(data):
            data = _unwrap(data)
        try:
            arr = np.array(data)
        except ValueError as exc:
            raise ValueError(f"expected sequence of equal length lists: {exc}") from None
        if arr.dtype == object:
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        if dtype is None:
            kind = arr.dtype.kind
            if kind == "f":
                arr = arr.astype(_dtype.DEFAULT_FLOAT.np)
            elif kind in "iu":
                arr = arr.astype(np.int64)
            elif kind != "b":
                if arr.size == 0:
                    arr = arr.astype(_dtype.DEFAULT_FLOAT.np)
                else:
                    raise TypeError(f"new(): invalid data type '{arr.dtype}'")
    if dtype is not None:
        arr = arr.astype(_dtype.get(dtype).np, copy=False)
    return _device.move(arr, _target_device(device))


def _holds_tensors(seq):
    return any(
        isinstance(x, Tensor) or isinstance(x, (list, tuple)) and _holds_tensors(x) for x in seq
    )


def _unwrap(seq):
    return [
        x.tolist() if isinstance(x, Tensor) else _unwrap(x) if isinstance(x, (list, tuple)) else x
        for x in seq
    ]


def _require_grad(t):
    if t._data.dtype.kind != "f":  # the wording PyTorch's factory functions use
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._requires_grad = True
    return t


def tensor(data, dtype=None, device=None, requires_grad=False):
    t = wrap(as_array(data, dtype, device))
    return _require_grad(t) if requires_grad else t


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return tensor(data, dtype, device)


def from_numpy(array):
    """Shares memory with `array`, as PyTorch's from_numpy does."""
    _dtype.from_numpy(array.dtype)
    return wrap(array)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"expected a sequence of integers for size, but got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _filled(size, value, dtype, device, requires_grad):
    d = _dtype.get(dtype) if dtype is not None else _dtype.DEFAULT_FLOAT
    arr = np.full(_size(size), value, d.np)
    return tensor_from_array(arr, device, requires_grad)


def tensor_from_array(arr, device=None, requires_grad=False):
    t = wrap(_device.move(arr, _target_device(device)))
    return _require_grad(t) if requires_grad else t


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(size, 0, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(size, 1, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _filled(size, 0, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dtype.get(type(fill_value)) if isinstance(fill_value, (bool, int, float)) else None
    return _filled(
        (size,) if isinstance(size, int) else tuple(size), fill_value, dtype, device, requires_grad
    )


def _like(t, dtype, device):
    return t.dtype if dtype is None else dtype, t.device if device is None else device


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return _filled(input._data.shape, 0, dtype, device, requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return _filled(input._data.shape, 1, dtype, device, requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return _filled(input._data.shape, fill_value, dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = _dtype.int64 if is_int else _dtype.DEFAULT_FLOAT
    d = _dtype.get(dtype)
    n = int(np.ceil((end - start) / step))
    arr = (
        (start + np.arange(n, dtype=np.float64) * step).astype(d.np)
        if d.is_floating_point
        else np.arange(start, end, step, dtype=d.np)
    )
    return tensor_from_array(arr, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    d = _dtype.get(dtype) if dtype is not None else _dtype.DEFAULT_FLOAT
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if d is _dtype.bool_:
        kind = _target_device(device).type
        raise NotImplementedError(f"\"linspace_{kind}\" not implemented for 'Bool'")
    return tensor_from_array(np.linspace(start, end, steps).astype(d.np), device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    d = _dtype.get(dtype) if dtype is not None else _dtype.DEFAULT_FLOAT
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    return tensor_from_array(np.eye(n, m, dtype=d.np), device, requires_grad)


def manual_seed(seed):
    """Seed the default generator (PyTorch's `torch.manual_seed`); returns the generator."""
    return default_generator.manual_seed(seed)
