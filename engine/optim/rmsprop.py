"""RMSprop (with momentum and the centered variant), step for step as torch.optim.RMSprop."""

from .._device import xp
from .optimizer import Optimizer


class RMSprop(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
            ),
        )

    def _update(self, p, grad, group, state):
        m = xp(grad)
        if not state:
            state["step"] = 0
            state["square_avg"] = m.zeros_like(p._data)
            if group["momentum"] > 0:
                state["momentum_buffer"] = m.zeros_like(p._data)
            if group["centered"]:
                state["grad_avg"] = m.zeros_like(p._data)
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p._data
        alpha = group["alpha"]
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg += (grad - grad_avg) * (1 - alpha)  # PyTorch's lerp form
            avg = m.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = m.sqrt(square_avg)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += grad / avg
            p._data -= group["lr"] * buf
        else:
            p._data -= group["lr"] * grad / avg
