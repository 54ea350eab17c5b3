"""Lazy layers (LazyLinear, LazyConv1d/2d/3d) and UninitializedParameter, as torch.nn's: the
input size is left open until the first call, which reads it from the input, gives the
parameters their shapes, initialises them (drawing from the generator only then, as PyTorch
does) and turns the layer into the plain class (`cls_to_become`)."""

from .. import _creation
from ..autograd.grad_mode import no_grad
from .conv import Conv1d, Conv2d, Conv3d
from .modules import Linear
from .parameter import Parameter

__all__ = ["UninitializedParameter", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d"]


class UninitializedParameter(Parameter):
    """A parameter without a shape yet: an empty placeholder that keeps the dtype and device
    asked for; `materialize(shape)` gives it its storage and makes it a plain Parameter."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        super().__init__(_creation.empty(0, dtype=dtype, device=device), requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._data = _creation.empty(*shape, dtype=dtype, device=device)._data
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"


class _LazyMixin:
    """Runs initialize_parameters on the first call, then becomes cls_to_become."""

    cls_to_become = None

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            with no_grad():
                self.initialize_parameters(*args, **kwargs)
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
        return self.forward(*args, **kwargs)


class LazyLinear(_LazyMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # the sizes come at the first call
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self, generator=None):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters(generator)

    def initialize_parameters(self, input):
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()


class _LazyConvMixin(_LazyMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)  # fmt: skip
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self, generator=None):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters(generator)

    def initialize_parameters(self, input):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                f"{type(self).__name__}, but got input of size: torch.Size({list(input.shape)})"
            )
        self.in_channels = input.shape[1] if input.dim() == nd + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        self.weight.materialize(
            (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        )
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    cls_to_become = Conv3d
