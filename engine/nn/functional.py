"""engine.nn.functional: the stateless forms of the layers and losses."""

from ..ops import family_modules as _family_modules
from ..ops.elementwise import leaky_relu, relu, sigmoid, tanh
from ..ops.linalg import linear
from ..ops.loss_basics import binary_cross_entropy, l1_loss, mse_loss
from ..ops.losses import cross_entropy, nll_loss
from ..ops.softmax import log_softmax, softmax

_FAMILY_FUNCTIONAL = {}
for _family in _family_modules():  # the op families' functional forms (engine/ops/__init__.py)
    _FAMILY_FUNCTIONAL.update(getattr(_family, "FUNCTIONAL", {}))
globals().update(_FAMILY_FUNCTIONAL)

__all__ = [
    *_FAMILY_FUNCTIONAL,
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
