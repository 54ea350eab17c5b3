"""engine.autograd: backward, grad, custom Functions, gradcheck and the grad modes."""

from .. import _tensor
from .._device import xp
from .backward_pass import run_backward
from .function import Function, FunctionCtx
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import AccumulateGrad, Node

__all__ = [
    "AccumulateGrad",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


def _as_tuple(x):
    if x is None:
        return None
    return (x,) if isinstance(x, _tensor.Tensor) else tuple(x)


def _make_grads(outputs, grad_outputs):
    """Default and check the gradients the pass starts from, as PyTorch's _make_grads does."""
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None and i < len(grad_outputs) else None
        if g is None:
            if out._requires_grad and out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind != "f":
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs "
                    f"but got {out.dtype.legacy_name[:-6]}"
                )
            g = _tensor.wrap(_ones_like(out._data))
        elif not isinstance(g, _tensor.Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        elif g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g.shape)}) "
                f"and output[{i}] has a shape of torch.Size({list(out.shape)})."
            )
        grads.append(g)
    return grads


def _ones_like(array):
    return xp(array).ones_like(array)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into every reachable leaf's .grad (or only into `inputs`)."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(tensors):
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    grads = _make_grads(tensors, grad_tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        found = run_backward(
            tensors, grads, retain_graph, create_graph, inputs=inputs, allow_unused=True
        )
        with set_grad_enabled(create_graph):
            for t, g in zip(inputs, found):
                if g is not None:
                    acc = g if create_graph else g.detach().clone()
                    t._grad = acc if t._grad is None else t._grad + acc
        return
    run_backward(tensors, grads, retain_graph, create_graph)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    materialize_grads=False,
):
    """The gradients of `outputs` with respect to `inputs`, returned rather than accumulated."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs)
    result = run_backward(
        outputs,
        grads,
        retain_graph,
        create_graph,
        inputs=inputs,
        allow_unused=allow_unused,
        accumulate=False,
    )
    if materialize_grads:
        result = [
            r if r is not None else _tensor.wrap(_ones_like(t._data) * 0)
            for r, t in zip(result, inputs)
        ]
    return tuple(result)
