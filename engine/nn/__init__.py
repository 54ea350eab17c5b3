"""engine.nn: Module, Parameter, layers, activations and losses, as in torch.nn."""

from . import functional, init
from .module import Module
from .modules import (
    BCELoss,
    CrossEntropyLoss,
    Identity,
    L1Loss,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from .parameter import Parameter

__all__ = [
    "BCELoss",
    "CrossEntropyLoss",
    "Identity",
    "L1Loss",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "Module",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "init",
]
