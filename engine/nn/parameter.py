"""Parameter: a leaf tensor that requires grad and that a Module registers when assigned."""

from .._creation import empty
from .._tensor import Tensor, share_version, wrap, wrap_into


class Parameter(Tensor):
    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        wrap_into(self, data._data)
        share_version(data, self)  # shares storage with `data`, as PyTorch's does
        if requires_grad:
            self.requires_grad = True

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach().cpu()._data, self._requires_grad))


def _rebuild_parameter(array, requires_grad):
    return Parameter(wrap(array), requires_grad)
