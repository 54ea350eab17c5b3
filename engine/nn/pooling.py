"""Pooling, unpooling and upsampling layers: thin shells over engine.nn.functional."""

from . import functional as F
from .module import Module

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "Upsample",
]


class _MaxPoolNd(Module):
    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
        ceil_mode=False,
    ):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)  # fmt: skip


class MaxPool2d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)  # fmt: skip


class MaxPool3d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)  # fmt: skip


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):  # fmt: skip
        super().__init__()
        # PyTorch keeps the 1-d layer's sizes as 1-tuples (its repr shows them so)
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(v):
    return (v,) if isinstance(v, int) else tuple(v)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip


class _MaxUnpoolNd(Module):
    """The inverse of a max pool given its indices; sizes kept as nd-tuples (PyTorch's repr)."""

    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, nd)
        self.padding = _ntuple(padding, nd)

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


class MaxUnpool1d(_MaxUnpoolNd):
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _nd = 3


class _AdaptiveNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveNd):
    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptiveNd):
    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveNd):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__()
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"
