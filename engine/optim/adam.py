"""Adam (with L2 weight decay added to the gradient), step for step as torch.optim.Adam."""

import math

from .._device import xp
from .optimizer import Optimizer, check_adam_args


class Adam(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        maximize=False,
    ):
        check_adam_args(lr, eps, betas, weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
            ),
        )

    def _update(self, p, grad, group, state):
        m = xp(grad)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p._data
        if not state:
            state["step"] = 0
            state["exp_avg"] = m.zeros_like(p._data)
            state["exp_avg_sq"] = m.zeros_like(p._data)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = m.zeros_like(p._data)
        beta1, beta2 = group["betas"]
        state["step"] += 1
        step = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg += (grad - exp_avg) * (1 - beta1)  # PyTorch's lerp form
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        if group["amsgrad"]:
            m.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second = state["max_exp_avg_sq"]
        else:
            second = exp_avg_sq
        denom = m.sqrt(second) / bias_correction2_sqrt + group["eps"]
        p._data -= (group["lr"] / bias_correction1) * exp_avg / denom
