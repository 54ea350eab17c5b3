"""Weight initialisation, drawn from the engine's seeded generator (not PyTorch's)."""

import math

from .. import _creation
from ..autograd.grad_mode import no_grad


def _fans(t):
    shape = t._data.shape
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_init(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return _creation.uniform_(tensor, a, b, generator)


def normal_init(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return _creation.normal_(tensor, mean, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_init(tensor, -bound, bound, generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_init(tensor, -bound, bound, generator)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


uniform_ = uniform_init
normal_ = normal_init
