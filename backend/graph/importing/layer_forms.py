"""Layer declarations read from code, for every op with a LayerForm (registry.py): which op
`nn.<Class>(...)` makes, and its node's params from the constructor's arguments, bound as
PyTorch binds them (the engine's classes have PyTorch's signatures). Arguments the node reads
off its input (in_features, in_channels, num_features, embed_dim) are left to the input: the
dry run checks them. Arguments the op does not model must keep PyTorch's default."""

import ast
import inspect

from .. import registry
from ..ops.layer_kit import constructor_signature
from .problems import Unsupported
from .syntax import literal

_IGNORED = ("dtype", "device")
_EMPTY = inspect.Parameter.empty
# constructor arguments a node always has this value for (self-attention on (N, L, E))
_FIXED = {("MultiheadAttention", "batch_first"): True}


def op_of_class(cls):
    """The layer op that `nn.<cls>` declares; None when no op does."""
    for spec in registry.all_ops():
        if spec.layer is not None and cls in spec.layer.classes:
            return spec
    return None


def supported_classes():
    return sorted(c for s in registry.all_ops() if s.layer for c in s.layer.classes)


def _value(node, name):
    v = literal(node)
    if isinstance(v, tuple):
        v = list(v)
    return v


def _square(cls, name, v):
    """A square kernel, stride or padding given as a pair `(3, 3)`: the one number."""
    if isinstance(v, list):
        if len(v) == 2 and v[0] == v[1]:
            return v[0]
        raise Unsupported(f"nn.{cls}'s {name} must be one number here (a square window)")
    return v


def params_from_call(cls, call):
    """(op name, params) of `nn.<cls>(...)` (an ast.Call); Unsupported when it cannot be a
    node's."""
    spec = op_of_class(cls)
    sig = constructor_signature(cls)
    names = [n for n in sig.parameters if n != "self"]
    if len(call.args) > len(names):
        raise Unsupported(f"nn.{cls} takes at most {len(names)} arguments")
    given = dict(zip(names, call.args))
    for k in call.keywords:
        if k.arg is None or k.arg not in names:
            raise Unsupported(f"nn.{cls} has no argument '{k.arg}'")
        if k.arg in given:
            raise Unsupported(f"nn.{cls} got '{k.arg}' twice")
        given[k.arg] = k.value
    params = {}
    for name, node in given.items():
        if name in _IGNORED:
            continue
        value = _value(node, name)
        default = sig.parameters[name].default
        if spec.param(name) is not None:
            if name in ("kernel_size", "stride", "padding"):
                value = _square(cls, name, value)
            if name == "normalized_shape" and isinstance(value, int):
                value = [value]
            params[name] = value
        elif (cls, name) in _FIXED:
            if value != _FIXED[(cls, name)]:
                raise Unsupported(
                    f"nn.{cls} is read with {name}={_FIXED[(cls, name)]!r} only (input (N, L, E))"
                )
        elif default is _EMPTY:
            continue  # read off the node's input (in_features ...): the dry run checks it
        elif value != default:
            raise Unsupported(f"nn.{cls}'s {name}={value!r} is not supported here")
    for (c, name), value in _FIXED.items():
        if c == cls and name not in given:
            raise Unsupported(f"nn.{cls} is read with {name}={value!r} only (input (N, L, E))")
    missing = [n for n in names if sig.parameters[n].default is _EMPTY and n not in given]
    if missing:
        raise Unsupported(f"nn.{cls} needs {', '.join(missing)}")
    if spec.layer.modes:
        params["mode"] = "train"  # PyTorch's modules start in train(), until .eval()
    return spec.name, params


def state_param(spec, key):
    """The node param holding state_dict key `key` ("out_proj.weight") of op `spec`'s layer;
    None when the layer stores no such state."""
    for param, k in spec.layer.state:
        if k == key:
            return param
    return None


_ATTENTION = "call an attention layer as attn(x, x, x, need_weights=False)[0] (self-attention)"


def self_attention(call):
    """`attn(x, x, x, need_weights=False)`: the call with its one input, x (query, key and
    value must be the same variable); Unsupported otherwise."""
    args = call.args
    same = len(args) == 3 and all(isinstance(a, ast.Name) and a.id == args[0].id for a in args)
    extra = [k for k in call.keywords if k.arg != "need_weights"]
    if not same or extra:
        raise Unsupported(_ATTENTION)
    return ast.Call(func=call.func, args=[args[0]], keywords=[])


def is_attention_output(node, declared):
    """Whether `node` is `layer(...)[0]`, `layer` in `declared` (NnLayers') an attention layer
    or another whose node is the first of the tuple its module returns (nn.LSTM's output)."""
    call = node.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return False
    entry = declared.get(call.func.id, {})
    if not (
        first_of_tuple(entry) and isinstance(node.slice, ast.Constant) and node.slice.value == 0
    ):
        return False
    entry["indexed"] = call  # the call NnLayers reads as the node: the tuple's first only
    return True


def returns_tuple(value, declared):
    """The name of the declared layer `value` calls, where its module returns a tuple whose first
    element is its node (nn.MultiheadAttention, nn.LSTM); None for any other value."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    entry = declared.get(value.func.id, {})
    return value.func.id if first_of_tuple(entry) else None


def first_of_tuple(entry):
    """Whether a declared layer's module returns a tuple whose first element is its node:
    nn.MultiheadAttention's (output, weights), nn.LSTM's (output, (h_n, c_n))."""
    spec = registry.get(entry.get("op", "")) if entry.get("kind", "op") == "op" else None
    if spec is None or spec.layer is None:
        return False
    return spec.name == "multi_head_attention" or spec.layer.first_of_tuple


def first_of_tuple_refusal(name, cls):
    """Why a call of layer `name` (nn.<cls>, its node the first of the tuple its module returns)
    is not read without `[0]`."""
    if cls == "MultiheadAttention":
        return (
            f"{name}(q, k, v) returns (output, attention weights); the graph's node is the "
            f"output: write {name}(q, k, v)[0]"
        )
    state = "(h_n, c_n)" if cls == "LSTM" else "h_n"
    return (
        f"{name}(x) returns (output, {state}); the graph's {cls} node is the output: write "
        f"{name}(x)[0]"
    )


def set_mode(entry, attr):
    """`layer.eval()` / `layer.train()` on a declared layer (NnLayers' entry, a Sequential's
    layers each): the mode of the ops whose train() and eval() differ (eval() is what a
    forward or backward run does: `auto`)."""
    if entry.get("kind") == "seq":
        for inner in entry["layers"]:
            set_mode(inner, attr)
        return
    spec = registry.get(entry.get("op", ""))
    if spec is not None and spec.layer is not None and spec.layer.modes:
        entry["params"]["mode"] = "auto" if attr == "eval" else "train"
