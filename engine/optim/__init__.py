"""engine.optim: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam, updating
parameters exactly as torch.optim does, and the learning-rate schedulers of
engine.optim.lr_scheduler."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "SGD",
    "Adadelta",
    "Adam",
    "AdamW",
    "Adagrad",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "lr_scheduler",
]
