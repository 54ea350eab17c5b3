"""Sequences through a recurrence: `rnn`, `lstm` and `gru`, each an `nn.RNN` / `nn.LSTM` /
`nn.GRU` of its own (engine/nn/rnn.py), input_size read off the input's last dim.

The node's value is the module's `output`, every step's last-layer hidden state ((L, N, D*H),
(N, L, D*H) with batch_first, (L, D*H) unbatched): an op has one output port, so the final
states (`h_n`, and `c_n` for an LSTM) are not given; written `layer(x)[0]` in code. The initial
state is zeros (the module called with no hx). `dropout` between layers is not taken: a node
makes the module with PyTorch's default, 0.

Weights start as PyTorch's constructor draws them, U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))
for every parameter in order, from a generator seeded with the node's `seed`. Each parameter is
a state param named by its state_dict key (weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0),
for up to MAX_LAYERS layers."""

import inspect
import math

from engine.nn import init

from ..registry import LayerForm, Param, Port
from .layer_kit import SEED, register_layer, state_param

MAX_LAYERS = 4  # the state params name each layer's weights, so the number is bounded
_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
_WHAT = {"RNN": "", "LSTM": " (input, forget, cell, output)", "GRU": " (reset, update, new)"}
_P = inspect.Parameter


def _signature(cls):
    """PyTorch's documented constructor of nn.<cls> (the class itself takes *args, **kwargs)."""
    names = ["input_size", "hidden_size", ("num_layers", 1)]
    if cls == "RNN":
        names.append(("nonlinearity", "tanh"))
    names += [("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)]
    if cls == "LSTM":
        names.append(("proj_size", 0))
    names += [("device", None), ("dtype", None)]
    params = [_P("self", _P.POSITIONAL_OR_KEYWORD)]
    for n in names:
        name, default = (n, _P.empty) if isinstance(n, str) else n
        params.append(_P(name, _P.POSITIONAL_OR_KEYWORD, default=default))
    return inspect.Signature(params)


def _suffixes(num_layers, bidirectional):
    """`_l0`, `_l0_reverse`, `_l1`, ...: each layer and direction, in PyTorch's order."""
    for layer in range(num_layers):
        for reverse in (False, True) if bidirectional else (False,):
            yield layer, f"_l{layer}" + ("_reverse" if reverse else "")


def _state_keys(cls):
    """Every state_dict key a node of class `cls` can have (MAX_LAYERS layers, both ways)."""
    keys = []
    for _, sfx in _suffixes(MAX_LAYERS, True):
        keys += [f"weight_ih{sfx}", f"weight_hh{sfx}", f"bias_ih{sfx}", f"bias_hh{sfx}"]
        if cls == "LSTM":
            keys.append(f"weight_hr{sfx}")
    return keys


def _args(cls):
    def args(x, p):
        a = {
            "input_size": x.shape[-1] if x.ndim else 1,
            "hidden_size": int(p.get("hidden_size", 4)),
            "num_layers": int(p.get("num_layers", 1)),
        }
        if cls == "RNN":
            a["nonlinearity"] = p.get("nonlinearity") or "tanh"
        a["bias"] = bool(p.get("bias", True))
        a["batch_first"] = bool(p.get("batch_first", False))
        a["bidirectional"] = bool(p.get("bidirectional", False))
        if cls == "LSTM":
            a["proj_size"] = int(p.get("proj_size") or 0)
        return a

    return args


def _shapes(cls):
    def shapes(a):
        hidden, proj = a["hidden_size"], a.get("proj_size", 0)
        gates = _GATES[cls] * hidden
        out = proj or hidden  # what each step's hidden state is
        directions = 2 if a["bidirectional"] else 1
        found = {}
        for layer, sfx in _suffixes(a["num_layers"], a["bidirectional"]):
            inputs = a["input_size"] if layer == 0 else out * directions
            found[f"weight_ih{sfx}"] = (gates, inputs)
            found[f"weight_hh{sfx}"] = (gates, out)
            if a["bias"]:
                found[f"bias_ih{sfx}"] = (gates,)
                found[f"bias_hh{sfx}"] = (gates,)
            if proj:
                found[f"weight_hr{sfx}"] = (proj, hidden)
        return found

    return shapes


def _init(module, generator):
    """PyTorch's reset_parameters(), drawn from the node's seed: every parameter, in order,
    from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    stdv = 1.0 / math.sqrt(module.hidden_size)
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv, generator=generator)


def _output(module, x, p):
    return module(x)[0]  # (output, h_n) or (output, (h_n, c_n)): the output


_SEQUENCE = (
    "a Jacobian through the recurrence: each step's output depends on the input at that step "
    "and every earlier one{bidirectional|true: (and every later one, backwards)}, through "
    "weight_ih, then weight_hh and the {act} at each step between"
)

for _name, _cls, _doc, _act in (
    (
        "rnn",
        "RNN",
        "an Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh) (or relu) at each "
        "step, from h_0 = 0; gives every step's h_t of the last layer",
        "tanh (or relu)",
    ),
    (
        "lstm",
        "LSTM",
        "an LSTM: at each step the input, forget and output gates (sigmoids) and a tanh candidate "
        "update the cell c_t and give h_t = o_t * tanh(c_t), from zeros; gives every step's h_t "
        "of the last layer",
        "gates' sigmoids and tanhs",
    ),
    (
        "gru",
        "GRU",
        "a GRU: at each step the reset and update gates (sigmoids) mix a tanh candidate n_t with "
        "the last state, h_t = (1 - z_t) * n_t + z_t * h_(t-1), from zeros; gives every step's "
        "h_t of the last layer",
        "gates' sigmoids and tanh",
    ),
):
    _params = [
        Param("hidden_size", "int", 4, min=1, max=4096, doc="the size of each step's hidden state"),
        Param("num_layers", "int", 1, min=1, max=MAX_LAYERS, doc="recurrences stacked"),
    ]
    if _cls == "RNN":
        _params.append(Param("nonlinearity", "choice", "tanh", choices=("tanh", "relu")))
    _params += [
        Param("bias", "bool", True),
        Param("batch_first", "bool", False, doc="input (N, L, input_size), else (L, N, ...)"),
        Param("bidirectional", "bool", False, doc="a second recurrence runs backwards"),
    ]
    if _cls == "LSTM":
        _params.append(
            Param("proj_size", "int", 0, min=0, max=4096, doc="h_t projected to this size")
        )
    _params.append(SEED)
    _keys = _state_keys(_cls)
    _params += [state_param(k, k) for k in _keys]
    register_layer(
        _name,
        _doc,
        LayerForm(
            cls=lambda x, p, c=_cls: c,
            classes=(_cls,),
            args=_args(_cls),
            state=tuple((k, k) for k in _keys),
            shapes=_shapes(_cls),
            signature=_signature(_cls),
            first_of_tuple=True,
        ),
        tuple(_params),
        init=_init,
        forward=_output,
        inputs=(
            Port(
                "input",
                doc="a sequence (L, N, input_size); (N, L, input_size) with batch_first; "
                "(L, input_size) unbatched",
                derivative=_SEQUENCE.replace("{act}", _act),
                derivative_kind="jacobian",
            ),
        ),
        example={"input": {"shape": [3, 2, 5], "init": "rand", "seed": 7}},
    )
