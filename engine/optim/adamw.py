"""AdamW: Adam with decoupled weight decay, step for step as torch.optim.AdamW."""

import math

from .._device import xp
from ..ops import _fused_kernels
from .adam import Adam


class AdamW(Adam):
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)

    def _update(self, p, grad, group, state):
        """One AdamW step of p, in place on p and the state, with one scratch array (the
        gradient is never written to: it is p.grad)."""
        m = xp(grad)
        lr = group["lr"]
        pd = p._data
        if state and not group["amsgrad"] and not group["maximize"]:
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            if _fused_kernels.takes(pd, grad, exp_avg, exp_avg_sq):
                # the steps below in one pass, the same bits
                beta1, beta2 = group["betas"]
                state["step"] += 1
                step = state["step"]
                wd = group["weight_decay"]
                _fused_kernels.kernels.adamw_f32(
                    pd, grad, exp_avg, exp_avg_sq, bool(wd), 1 - lr * wd, 1 - beta1, beta2,
                    1 - beta2, math.sqrt(1 - beta2**step), group["eps"],
                    lr / (1 - beta1**step),
                )  # fmt: skip
                return
        if group["weight_decay"]:  # decoupled: the parameter shrinks, the gradient is untouched
            pd *= 1 - lr * group["weight_decay"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = m.zeros_like(pd)
            state["exp_avg_sq"] = m.zeros_like(pd)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = m.zeros_like(pd)
        beta1, beta2 = group["betas"]
        state["step"] += 1
        step = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        # exp_avg += (grad - exp_avg) * (1 - beta1), PyTorch's lerp form
        tmp = m.empty_like(pd)  # an array even for a 0-d p, so the `out=` below work
        if group["maximize"]:
            m.negative(grad, out=tmp)
            tmp -= exp_avg
        else:
            m.subtract(grad, exp_avg, out=tmp)
        tmp *= 1 - beta1
        exp_avg += tmp
        # exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * grad * grad (the sign does not matter)
        exp_avg_sq *= beta2
        m.multiply(grad, 1 - beta2, out=tmp)
        tmp *= grad
        exp_avg_sq += tmp
        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        if group["amsgrad"]:
            m.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second = state["max_exp_avg_sq"]
        else:
            second = exp_avg_sq
        denom = m.sqrt(second, out=tmp)
        denom /= bias_correction2_sqrt
        denom += group["eps"]
        # p -= lr / bias_correction1 * exp_avg / denom
        update = m.divide(exp_avg, denom, out=tmp)
        update *= lr / bias_correction1
        pd -= update
