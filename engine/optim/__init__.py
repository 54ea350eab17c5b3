"""engine.optim: SGD, Adam, AdamW, RMSprop and Adagrad, updating parameters exactly as
torch.optim does, and the learning-rate schedulers of engine.optim.lr_scheduler."""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "Optimizer", "RMSprop", "lr_scheduler"]
