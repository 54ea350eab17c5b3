"""NAdam (Adam with Nesterov momentum and momentum decay), step for step as torch.optim.NAdam,
with decoupled_weight_decay (NAdamW) as an option."""

import numpy as np

from .._device import xp
from .optimizer import Optimizer, check_adam_args


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, maximize=False):  # fmt: skip
        check_adam_args(lr, eps, betas, weight_decay)
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
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
            state["mu_product"] = 1.0
            state["exp_avg"] = m.zeros_like(p._data)
            state["exp_avg_sq"] = m.zeros_like(p._data)
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        state["step"] += 1
        step = state["step"]
        if wd:
            if group["decoupled_weight_decay"]:
                p._data *= 1 - lr * wd
            else:
                grad = grad + wd * p._data
        bias_correction2 = 1 - beta2**step
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        # PyTorch keeps mu_product as a float32 scalar tensor: multiply and round in float32
        state["mu_product"] = float(np.float32(state["mu_product"]) * np.float32(mu))
        mu_product = state["mu_product"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg += (grad - exp_avg) * (1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = m.sqrt(exp_avg_sq / bias_correction2) + eps
        p._data -= lr * (1.0 - mu) / (1.0 - mu_product) * grad / denom
        p._data -= lr * mu_next / (1.0 - mu_product * mu_next) * exp_avg / denom
