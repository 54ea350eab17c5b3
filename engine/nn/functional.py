"""engine.nn.functional: the stateless forms of the layers and losses."""

from ..ops.elementwise import leaky_relu, relu, sigmoid, tanh
from ..ops.linalg import linear
from ..ops.neural import (
    binary_cross_entropy,
    cross_entropy,
    l1_loss,
    log_softmax,
    mse_loss,
    nll_loss,
    softmax,
)

__all__ = [
    "binary_cross_entropy",
    "cross_entropy",
    "l1_loss",
    "leaky_relu",
    "linear",
    "log_softmax",
    "mse_loss",
    "nll_loss",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
]
