"""Optimizer: parameter groups, per-parameter state, zero_grad; subclasses write `_update`."""

from .. import _creation
from .._device import xp
from .._tensor import Tensor, bump_version, wrap
from ..autograd.grad_mode import enable_grad, no_grad


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if hasattr(params, "_data") else list(params)
        for p in group["params"]:
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad = p._grad.detach()
                    p._grad.zero_()

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is not None:
                        self._update(p, p._grad._data, group, self.state.setdefault(p, {}))
                        bump_version(p)
        return loss

    def _update(self, p, grad, group, state):  # pragma: no cover - each optimizer defines it
        raise NotImplementedError

    def state_dict(self):
        """PyTorch's format: "state" keyed by each parameter's index over all groups, holding
        tensors (sharing memory with the optimizer's buffers; "step" a float32 scalar as
        PyTorch's), and "param_groups" with "params" as those indices."""
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        return {
            "state": {index[id(p)]: _export(s) for p, s in self.state.items()},
            "param_groups": [
                {
                    **{k: v for k, v in g.items() if k != "params"},
                    "params": [index[id(p)] for p in g["params"]],
                }
                for g in self.param_groups
            ],
        }

    def load_state_dict(self, state_dict):
        """Load a state_dict of this engine's or of PyTorch's (tensors converted to arrays of
        each parameter's dtype and device), with PyTorch's checks."""
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        by_index = {
            saved: p
            for g, s in zip(groups, saved_groups)
            for saved, p in zip(s["params"], g["params"])
        }
        self.state = {}
        for i, s in state_dict["state"].items():
            if i in by_index:
                p = by_index[i]
                self.state[p] = {k: _import(v, p, k) for k, v in s.items()}
        for g, s in zip(groups, saved_groups):
            g.update({k: v for k, v in s.items() if k != "params"})

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _export(state):
    out = {}
    for k, v in state.items():
        if k == "step" or (k == "mu_product" and not hasattr(v, "shape")):
            out[k] = _creation.tensor(float(v))
        elif hasattr(v, "shape") and not isinstance(v, Tensor):
            out[k] = wrap(v)
        else:
            out[k] = v
    return out


def _import(value, p, key):
    """A saved state entry as the engine keeps it: numbers for step (and NAdam's mu_product),
    arrays of the parameter's dtype and device for buffers."""
    data = getattr(value, "_data", None)
    if data is None and hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        data = value.detach().cpu().numpy()
    if key in ("step", "mu_product"):
        v = float(data) if data is not None else float(value)
        return int(v) if key == "step" else v
    if data is None:
        return value
    m = xp(p._data)
    return m.asarray(data, dtype=p._data.dtype).copy()


def check_adam_args(lr, eps, betas, weight_decay):
    """The argument checks the Adam family shares, in PyTorch's order and words."""
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
