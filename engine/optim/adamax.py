"""Adamax (Adam with an infinity-norm second moment), step for step as torch.optim.Adamax."""

from .._device import xp
from .optimizer import Optimizer, check_adam_args


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 maximize=False):  # fmt: skip
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group, state):
        m = xp(grad)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p._data
        if not state:
            state["step"] = 0
            state["exp_avg"] = m.zeros_like(p._data)
            state["exp_inf"] = m.zeros_like(p._data)
        beta1, beta2 = group["betas"]
        state["step"] += 1
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg += (grad - exp_avg) * (1 - beta1)
        exp_inf *= beta2
        m.maximum(exp_inf, m.abs(grad) + group["eps"], out=exp_inf)
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p._data -= clr * exp_avg / exp_inf
