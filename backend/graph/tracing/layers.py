"""A live layer module (`nn.Linear`, `nn.Conv2d`, ...) as the registry's layer node.

The node's params are read off the module's attributes by the op's param names (which are
PyTorch's constructor arguments), its state params off its state_dict by the op's LayerForm,
and its mode off `module.training`. Then the layer the node would make (LayerForm.cls and
args, on the traced input) is built in PyTorch and its `extra_repr()` compared with the live
module's: a configuration the node cannot say (a dilated conv, a layer norm without bias) is
refused at its module path instead of being drawn as something else."""

import torch

from .. import registry
from .capture import CaptureError
from .leaves import tensor_params

# layer ops whose module is called with more than the input (self-attention: attn(x, x, x))
_SELF_ATTENTION = "MultiheadAttention"
_ATTENTION_NEUTRAL = {
    "key_padding_mask": None,
    "attn_mask": None,
    "average_attn_weights": True,
    "is_causal": False,
    "need_weights": None,  # either: the weights are refused below where they are read
}


def layer_classes():
    """{nn class: its layer OpSpec} for every layer op of the registry."""
    found = {}
    for spec in registry.all_ops():
        if spec.layer is None:
            continue
        for name in spec.layer.classes:
            cls = getattr(torch.nn, name, None)
            if cls is not None:
                found[cls] = spec
    return found


class _LayerNode:
    def inputs(self, b, n, module, spec):
        """([(port, node id)], the parts after the first of a tuple output, or None)."""
        name = type(module).__name__
        args, kwargs = list(n.args), dict(n.kwargs)
        where = f"model.{n.target}"
        if name == _SELF_ATTENTION:
            q = args[0] if args else kwargs.pop("query", None)
            k = args[1] if len(args) > 1 else kwargs.pop("key", None)
            v = args[2] if len(args) > 2 else kwargs.pop("value", None)
            if not (q is k is v):
                raise CaptureError(
                    f"{where}: MultiheadAttention is drawn as self-attention, attn(x, x, x); "
                    "this call gives it different query, key and value"
                )
            for key, value in list(kwargs.items()) + list(
                zip(("key_padding_mask", "need_weights", "attn_mask"), args[3:])
            ):
                if key not in _ATTENTION_NEUTRAL:
                    raise CaptureError(f"{where}: MultiheadAttention({key}=...) is not supported")
                if key != "need_weights" and b._value(value) != _ATTENTION_NEUTRAL[key]:
                    raise CaptureError(
                        f"{where}: MultiheadAttention with {key} is not supported (the graph's "
                        "attention node has no mask)"
                    )
            x = b._tensor_id(b._mean(q), "input")
            unused = ("unused", f"{where}: the attention weights are not drawn; use [0] only")
            return [("input", x)], [unused]
        if spec.layer.first_of_tuple and (len(args) > 1 or kwargs):
            # nn.LSTM(x, (h0, c0)): the node starts from zeros, as a call without hx does
            raise CaptureError(
                f"{where}: {name} is called with its input only here (its initial state zeros)"
            )
        if len(args) != 1 or kwargs:
            raise CaptureError(f"{where}: {name} is called with one input tensor only")
        x = b._tensor_id(b._mean(args[0]), "input")
        if spec.layer.first_of_tuple:
            state = "(h_n, c_n)" if name == "LSTM" else "h_n"
            unused = ("unused", f"{where}: {name}'s final state {state} is not drawn; use [0] only")
            return [("input", x)], [unused]
        return [("input", x)], None

    def params(self, b, n, module, spec):
        where = f"model.{n.target}"
        form = spec.layer
        state_params = {p for p, _ in form.state}
        params = {}
        for p in spec.params:
            if p.name in state_params or p.name in ("seed", "mode"):
                continue
            if not hasattr(module, p.name):
                continue
            v = getattr(module, p.name)
            if p.type == "bool" and not isinstance(v, bool):
                v = v is not None  # `bias`: the parameter, or None
            elif isinstance(v, tuple):
                v = list(v)
                if p.type == "int":
                    if len(set(v)) != 1:
                        raise CaptureError(f"{where}: {p.name}={tuple(v)} must be square here")
                    v = v[0]
            if p.type == "shape" and isinstance(v, int):
                v = [v]
            params[p.name] = v
        if form.modes:
            params["mode"] = "train" if module.training else "eval"
            if module.training and getattr(module, "p", 0) > 0:
                b.notes.append(
                    f"{where} ({type(module).__name__}, p={module.p}) was in train(): the graph "
                    "draws its own masks, so runs differ from the traced one where it drops; "
                    "call model.eval() before tracing for the same numbers"
                )
        state = module.state_dict()
        for param, key in form.state:
            t = state.get(key)
            if t is None:
                continue
            params[param] = tensor_params(t, f"{where}.{key}")["value"]
        x = b.cap.values[n.args[0] if n.args else next(iter(n.kwargs.values()))]
        self._check(where, module, form, x, params)
        return params

    def _check(self, where, module, form, x, params):
        """The layer the node makes must be the live one (compared by extra_repr)."""
        try:
            cls = form.cls(x, params)
            args = form.args(x, params)
            made = getattr(torch.nn, cls)(**args)
        except Exception as exc:
            raise CaptureError(f"{where}: {type(module).__name__} cannot be drawn: {exc}") from None
        live = f"{type(module).__name__}({module.extra_repr()})"
        node = f"{type(made).__name__}({made.extra_repr()})"
        if live != node:
            raise CaptureError(
                f"{where}: {live} has settings the graph's layer node does not take; "
                f"it would make {node}"
            )


layer_node = _LayerNode()
