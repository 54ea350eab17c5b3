"""Weight initialisation, PyTorch's `torch.nn.init` draw for draw.

Each function computes its bound or standard deviation with PyTorch's own expression (the same
floating-point steps, so the same rounding) and fills the tensor from the generator (the default
one unless `generator=` is given), so `eg.manual_seed(s)` then an init gives
`torch.manual_seed(s)`'s values. `orthogonal_`'s QR runs on numpy's LAPACK, which can differ from
PyTorch's in the last bits; its normal draws are PyTorch's.
"""

import math
import warnings

import numpy as np

from .. import _creation, _device, _sampling
from .._tensor import bump_version
from ..autograd.grad_mode import no_grad


# -- fans and gains --------------------------------------------------------------------------------
def _calculate_fan_in_and_fan_out(tensor):
    shape = tensor._data.shape
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


_fans = _calculate_fan_in_and_fan_out  # the name the layers use


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


# -- plain fills -----------------------------------------------------------------------------------
def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return _sampling.uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return _sampling.normal_(tensor, mean, std, generator)


uniform_init, normal_init = uniform_, normal_  # older names inside the engine


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """PyTorch's rejection sampler: with more than 30% of the mass inside [a, b], normals redrawn
    (a whole tensor at a time) where they fall outside; otherwise uniforms on [a, b] accepted
    against the normal's density, the rejected ones redrawn."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        dt = tensor._data.dtype.type
        scratch = _creation.empty(*tensor._data.shape, dtype=tensor.dtype)
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            lo, hi = float(dt(a)), float(dt(b))
            result = _sampling.normal_(tensor, mean, std, generator)._data.copy()
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                redraw = _sampling.normal_(scratch, mean, std, generator)._data
                result = np.where(outside, redraw, result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def log_density(x):  # the float steps of sub_, div_, pow_(2), mul_, sub_
                z = (x - dt(mean)) / dt(std)
                return (z * z) * dt(-0.5) - dt(log_peak)

            def accept_draw():
                return np.log(_sampling.uniform_(scratch, 0.0, 1.0, generator)._data)

            result = _sampling.uniform_(tensor, a, b, generator)._data.copy()
            pending = accept_draw() > log_density(result)
            candidates = _creation.empty(*tensor._data.shape, dtype=tensor.dtype)
            while pending.any():
                cand = _sampling.uniform_(candidates, a, b, generator)._data
                result = np.where(pending, cand, result)
                pending = np.where(pending, accept_draw() > log_density(cand), pending)
        tensor._data[...] = _device.move(np.asarray(result, tensor._data.dtype), tensor.device)
        bump_version(tensor)
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.zero_()
        n = min(tensor._data.shape)
        idx = list(range(n))
        tensor._data[idx, idx] = 1
        bump_version(tensor)
    return tensor


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._data.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                centre = tuple(s // 2 for s in sizes[2:])
                tensor._data[(g * out_per_group + d, d, *centre)] = 1
        bump_version(tensor)
    return tensor


# -- scaled to the fans ----------------------------------------------------------------------------
def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _empty_warned(tensor):
    if 0 in tensor._data.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _empty_warned(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _empty_warned(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """PyTorch's recipe: normals in a (rows, cols) matrix, QR, signs fixed by R's diagonal."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor.numel() // rows
    flat = _creation.empty(rows, cols, dtype=tensor.dtype)
    _sampling.normal_(flat, 0.0, 1.0, generator)
    m = flat._data.T if rows < cols else flat._data
    q, r = np.linalg.qr(m)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(_creation.tensor(q.reshape(tensor._data.shape), dtype=tensor.dtype))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        _sampling.normal_(tensor, 0.0, std, generator)
        for col in range(cols):
            # PyTorch draws these permutations from the default generator, not `generator`
            zero_rows = _sampling.randperm(rows)._data[:num_zeros]
            tensor._data[zero_rows, col] = 0
        bump_version(tensor)
    return tensor
