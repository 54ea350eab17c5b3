"""engine.nn: Module, Parameter, layers, activations and losses, as in torch.nn."""

from . import functional, init, utils
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

# Module families each in a file of their own; each lists its classes in __all__.
_FAMILIES = (
    "activation",
    "attention",
    "container",
    "conv",
    "lazy",
    "loss",
    "normalization",
    "pooling",
    "rnn",
)
_family_names = []
for _name in _FAMILIES:
    import importlib as _importlib

    _mod = _importlib.import_module(f"{__name__}.{_name}")
    globals().update({_n: getattr(_mod, _n) for _n in _mod.__all__})
    _family_names += _mod.__all__

__all__ = [
    *_family_names,
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
    "utils",
]
