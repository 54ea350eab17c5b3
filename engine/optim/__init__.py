"""engine.optim: SGD and Adam, updating parameters exactly as torch.optim does."""

from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "Optimizer"]
