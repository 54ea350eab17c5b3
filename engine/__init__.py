"""Wiregrad's autograd engine: PyTorch's names, semantics and messages, on numpy (or cupy).

import engine as eg
x = eg.tensor(2.0, requires_grad=True)
y = x * x + 3 * x + 1
y.backward()
x.grad        # tensor(7.)
"""

import numpy as _np

# Like PyTorch, produce inf and nan quietly rather than warn on every overflow or log(0).
_np.seterr(all="ignore")

from . import (
    _malloc,  # freed array memory stays mapped for the next step (glibc)
    _methods,  # binds the ops onto Tensor as methods and operators
    autograd,
    nn,
    optim,
    random,
)
from ._creation import (
    arange,
    as_tensor,
    empty,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._device import cuda_available as _cuda_available
from ._device import device
from ._dtype import bool_ as bool  # PyTorch's name, shadowing the builtin inside this namespace
from ._dtype import (
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    uint8,
)
from ._dtype import tensor_result_type as result_type
from ._generator import Generator, default_generator
from ._sampling import (
    bernoulli,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from ._tensor import Size, Tensor
from ._threads import get_num_threads, set_num_threads
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import family_modules as _family_modules
from .random import get_rng_state, initial_seed, seed, set_rng_state

for _family in _family_modules():  # the op families' public functions (engine/ops/__init__.py)
    globals().update({_name: getattr(_family, _name) for _name in _family.__all__})
del _family

from . import _numpy_names

_numpy_names.wrap_methods(Tensor)
_numpy_names.wrap_namespace(globals(), list(globals()))
_numpy_names.wrap_namespace(vars(nn.functional), list(vars(nn.functional)))

half, float, double, long = float16, float32, float64, int64  # PyTorch's aliases
short, int = int16, int32  # noqa: A001 - PyTorch's names, shadowing the builtin here


def detach(input):
    return input.detach()


def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def get_default_dtype():
    return float32


class cuda:  # noqa: N801 - a namespace, as torch.cuda is
    is_available = staticmethod(_cuda_available)

    @staticmethod
    def device_count():
        return 1 if _cuda_available() else 0

    @staticmethod
    def manual_seed(s):  # one stream for every device: the CPU generator
        return manual_seed(s)


__version__ = "0.1.0"
