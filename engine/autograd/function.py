"""Custom differentiable functions, written like PyTorch's torch.autograd.Function.

`apply` runs `forward(ctx, *args)` without recording, then links the outputs to a node of a class
made once per Function subclass and named `<Name>Backward`. That node is the ctx the user's
forward and backward receive, so attributes set on ctx in forward are there in backward."""

from .. import _tensor
from .._device import xp
from .grad_mode import STATE, no_grad
from .graph import Node


class FunctionCtx:
    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of a custom Function (and its ctx). Subclasses are made per Function."""

    _forward_cls = None
    single_output = False  # apply() materialises missing gradients and checks their count

    def __init__(self, args):
        tensor_args = [a for a in args if isinstance(a, _tensor.Tensor)]
        super().__init__(tensor_args)
        self._arg_is_tensor = [isinstance(a, _tensor.Tensor) for a in args]
        self.needs_input_grad = tuple(
            isinstance(a, _tensor.Tensor) and a._requires_grad for a in args
        )
        self._to_save = ()
        self._non_differentiable = set()
        self._materialize = True
        self._out_meta = []

    @property
    def saved_tensors(self):
        return self.unpack()

    def apply(self, grads):
        if self._materialize:
            grads = [
                g if g is not None else _tensor.wrap(_zeros(shape, dtype, like))
                for g, (shape, dtype, like) in zip(grads, self._out_meta)
            ]
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self._arg_is_tensor)
        if len(result) != n_args:
            # PyTorch tolerates trailing Nones beyond the inputs
            if len(result) > n_args and all(r is None for r in result[n_args:]):
                result = result[:n_args]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of "
                    f"gradients (expected {n_args}, got {len(result)})"
                )
        out = []
        for is_tensor, r in zip(self._arg_is_tensor, result):
            if is_tensor:
                out.append(r)
            elif r is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than "
                    "None at a position for an input that is not a Tensor"
                )
        for i, ((node, _), g) in enumerate(zip(self.next_functions, out)):
            if g is None or node is None:
                continue
            want = _input_shape(node)
            if want is not None and g._data.shape != want:
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index "
                    f"{i} - got {list(g._data.shape)} but expected shape "
                    f"compatible with {list(want)}"
                )
        return tuple(out)


def _input_shape(node):
    var = getattr(node, "variable", None)
    return None if var is None else var._data.shape


def _zeros(shape, dtype, like):
    return xp(like).zeros(shape, dtype)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=_FunctionMeta):
    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your "
            "custom autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls(args)
        with no_grad():
            outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        record = STATE.enabled and any(ctx.needs_input_grad)
        dirty = getattr(ctx, "_dirty", ())
        result = []
        for nr, o in enumerate(outs):
            if not isinstance(o, _tensor.Tensor):
                result.append(o)
                continue
            if any(o is d for d in dirty):  # written in place by forward (mark_dirty)
                ctx._out_meta.append((o._data.shape, o._data.dtype, o._data))
                if record:
                    # at call time: _views imports this package (through autograd.graph)
                    from .. import _views

                    _views.check_inplace(o)
                    _views.rebase_history(o, ctx, True, nr)
                result.append(o)
                continue
            if any(o is a for a in args):  # an input returned as is: give the output its own tensor
                o = o.detach()
            ctx._out_meta.append((o._data.shape, o._data.dtype, o._data))
            if record and id(o) not in ctx._non_differentiable and o._data.dtype.kind == "f":
                o.grad_fn, o._output_nr, o._requires_grad = ctx, nr, True
            result.append(o)
        ctx.num_outputs = len(outs)
        to_save = ctx._to_save
        ctx._saved = tuple(to_save)
        ctx._versions = tuple(t._version for t in to_save)
        return result[0] if single else tuple(result)
