"""Adadelta, step for step as torch.optim.Adadelta."""

from .._device import xp
from .optimizer import Optimizer


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, p, grad, group, state):
        m = xp(grad)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p._data
        if not state:
            state["step"] = 0
            state["square_avg"] = m.zeros_like(p._data)
            state["acc_delta"] = m.zeros_like(p._data)
        rho, eps = group["rho"], group["eps"]
        state["step"] += 1
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        std = m.sqrt(square_avg + eps)
        delta = m.sqrt(acc_delta + eps) / std * grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        p._data -= group["lr"] * delta
