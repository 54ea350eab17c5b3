"""The unary-op framework: integer and bool inputs of the float functions compute in float32
(PyTorch's default float), the result is wrapped and the op's node recorded with its input or
its output saved."""

import numpy as np

from ._common import STATE, check_tensor, wrap


def unary(x, fn, node_cls, save_output):
    d = x._data
    if d.dtype.kind != "f":
        d = d.astype(np.float32)  # PyTorch's float ops take integers to the default float
    out = wrap(fn(d))
    if STATE.enabled and x._requires_grad:
        out.grad_fn = node_cls((x,), (out.detach(),) if save_output else (x,))
        out._requires_grad = True
    return out


def float_op(name, fn, node_cls, save_output=False):
    """A public unary float op: integers and bools compute in float32."""

    def op(input):
        check_tensor(name, input)
        return unary(input, fn, node_cls, save_output)

    op.__name__ = op.__qualname__ = name
    return op
