"""RAdam (Adam with the variance rectification term), step for step as torch.optim.RAdam, with
decoupled_weight_decay as an option."""

import math

from .._device import xp
from .optimizer import Optimizer, check_adam_args


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, maximize=False):  # fmt: skip
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group, state):
        m = xp(grad)
        if group["maximize"]:
            grad = -grad
        if not state:
            state["step"] = 0
            state["exp_avg"] = m.zeros_like(p._data)
            state["exp_avg_sq"] = m.zeros_like(p._data)
        lr, wd = group["lr"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        state["step"] += 1
        step = state["step"]
        if wd:
            if group["decoupled_weight_decay"]:
                p._data *= 1 - lr * wd
            else:
                grad = grad + wd * p._data
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg += (grad - exp_avg) * (1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:  # the variance is tractable: the rectified adaptive step
            rect = math.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
            adaptive = math.sqrt(bias_correction2) / (m.sqrt(exp_avg_sq) + group["eps"])
            p._data -= corrected * lr * adaptive * rect
        else:  # too early: plain momentum SGD
            p._data -= corrected * lr
