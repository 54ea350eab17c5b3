"""SGD with momentum, dampening, weight decay and Nesterov, step for step as torch.optim.SGD."""

from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        maximize=False,
    ):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
            ),
        )

    def _update(self, p, grad, group, state):
        d_p = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            d_p = d_p + group["weight_decay"] * p._data
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = d_p.copy()
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * d_p
            d_p = d_p + momentum * buf if group["nesterov"] else buf
        p._data -= group["lr"] * d_p
