"""Adagrad (with learning-rate decay), step for step as torch.optim.Adagrad."""

from .._device import xp
from .optimizer import Optimizer


class Adagrad(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                maximize=maximize,
            ),
        )
        # PyTorch fills the state when the optimizer is made, not on the first step
        for group in self.param_groups:
            for p in group["params"]:
                d = p._data
                self.state[p] = {
                    "step": 0,
                    "sum": xp(d).full(d.shape, group["initial_accumulator_value"], d.dtype),
                }

    def _update(self, p, grad, group, state):
        state["step"] += 1
        step = state["step"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p._data
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        std = xp(grad).sqrt(state["sum"]) + group["eps"]
        p._data -= clr * grad / std
