"""Optimizer: parameter groups, per-parameter state, zero_grad; subclasses write `_update`."""

from .._tensor import bump_version
from ..autograd.grad_mode import no_grad


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
            from ..autograd.grad_mode import enable_grad

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
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        return {
            "state": {index[id(p)]: dict(s) for p, s in self.state.items()},
            "param_groups": [
                {
                    **{k: v for k, v in g.items() if k != "params"},
                    "params": [index[id(p)] for p in g["params"]],
                }
                for g in self.param_groups
            ],
        }

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"
