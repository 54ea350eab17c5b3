"""Module: parameters and submodules registered by assignment, as in torch.nn.Module."""

from collections import OrderedDict

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .parameter import Parameter


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # -- registration by assignment -------------------------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            params.pop(name, None)
            self._modules[name] = value
        elif params is not None and name in params:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            params[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def register_buffer(self, name, tensor):
        self._buffers[name] = tensor

    def add_module(self, name, module):
        self._modules[name] = module

    # -- walking the tree -----------------------------------------------------------------------
    def named_modules(self, memo=None, prefix=""):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix=""):
        for mod_prefix, m in self.named_modules(prefix=prefix):
            for name, b in m._buffers.items():
                if b is not None:
                    yield (f"{mod_prefix}.{name}" if mod_prefix else name), b

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    # -- state -----------------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                p._grad = p._grad.detach()
                p._grad.zero_()

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        # Unlike parameters(), a shared submodule is listed under every name it has, as in PyTorch
        out = OrderedDict() if destination is None else destination
        for name, p in list(self._parameters.items()) + list(self._buffers.items()):
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(out, f"{prefix}{name}.", keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for k, target in own.items():
            if k not in state_dict:
                continue
            src = state_dict[k]
            if not isinstance(src, Tensor):
                errors.append(
                    f'While copying the parameter named "{k}", expected torch.Tensor '
                    f"or Tensor-like object from checkpoint but received "
                    f"{type(src)}"
                )
            elif src._data.shape != target._data.shape:
                errors.append(
                    f"size mismatch for {k}: copying a param with shape {src.shape} "
                    f"from checkpoint, the shape in current model is {target.shape}."
                )
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". ",
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ",
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for k, target in own.items():
                if k in state_dict:
                    target.copy_(state_dict[k])
        return _IncompatibleKeys(missing, unexpected)

    def to(self, *args, **kwargs):
        """Moves (or casts) every parameter and buffer in place, keeping the Parameter objects."""
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for p in store.values():
                    if p is None:
                        continue
                    moved = p.detach().to(*args, **kwargs)
                    if moved._data is not p._data:
                        p._data = moved._data
                        if p._grad is not None:
                            p._grad = p._grad.to(*args, **kwargs)
        return self

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to(dtype="float32")

    def double(self):
        from .. import _dtype

        return self.to(_dtype.float64)

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- printing ---------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            child = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


class _IncompatibleKeys:
    def __init__(self, missing_keys, unexpected_keys):
        self.missing_keys, self.unexpected_keys = missing_keys, unexpected_keys

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )

    def __iter__(self):
        return iter((self.missing_keys, self.unexpected_keys))
