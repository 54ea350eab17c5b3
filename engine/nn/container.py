"""ModuleDict, and the reshaping layers Flatten and Unflatten (Sequential, ModuleList and
Identity live in modules.py)."""

from collections import OrderedDict
from collections.abc import Mapping

from .module import Module

__all__ = ["ModuleDict", "Flatten", "Unflatten"]


class ModuleDict(Module):
    """Submodules held by name, in insertion order (registered, so their parameters count)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, (list, tuple)):
                raise TypeError(
                    f"ModuleDict update sequence element #{j} should be Iterable; is"
                    f"{type(m).__name__}"
                )
            if len(m) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required"
                )
            self[m[0]] = m[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)):
                raise TypeError(
                    "unflattened_size must be a tuple of ints, but found type "
                    f"{type(unflattened_size).__name__}"
                )
            for idx, elem in enumerate(unflattened_size):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, but found element of type "
                        f"{type(elem).__name__} at pos {idx}"
                    )
        else:
            raise TypeError(f"invalid argument type for dim parameter: {type(dim).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
