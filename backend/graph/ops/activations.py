"""Activations: relu, sigmoid, tanh, leaky_relu, and softmax / log_softmax along a dim."""

import engine as eg
import engine.nn.functional as F

from ..registry import CallForm, OpSpec, Param, register
from .common import INPUT, call_code, on_input

FUNCTIONAL = ("functional",)  # written F.name(x) only, as in PyTorch

for _name, _doc in (
    ("relu", "max(0, input)"),
    ("sigmoid", "1 / (1 + exp(-input))"),
    ("tanh", "hyperbolic tangent"),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            INPUT,
            run=on_input(getattr(eg, _name)),
            code=call_code(_name),
            call=CallForm(),
        )
    )

register(
    OpSpec(
        "leaky_relu",
        "activations",
        "input where positive, negative_slope * input elsewhere",
        INPUT,
        run=lambda ctx, ins, p: F.leaky_relu(ins[0], p.get("negative_slope", 0.01)),
        code=call_code(
            "leaky_relu", ("negative_slope",), {"negative_slope": 0.01}, functional=True
        ),
        params=(Param("negative_slope", "float", 0.01),),
        call=CallForm(args=("input", "negative_slope"), forms=FUNCTIONAL),
    )
)
register(
    OpSpec(
        "softplus",
        "activations",
        "log(1 + exp(beta * input)) / beta: a smooth relu (input itself past threshold)",
        INPUT,
        run=lambda ctx, ins, p: F.softplus(ins[0], p.get("beta", 1.0), p.get("threshold", 20.0)),
        code=call_code(
            "softplus", ("beta", "threshold"), {"beta": 1.0, "threshold": 20.0}, functional=True
        ),
        params=(Param("beta", "float", 1.0), Param("threshold", "float", 20.0)),
        call=CallForm(args=("input", "beta", "threshold"), forms=FUNCTIONAL),
    )
)
for _name, _doc in (
    ("softmax", "exp(input) normalised to sum to 1 along dim"),
    ("log_softmax", "log of softmax, computed stably"),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            INPUT,
            run=on_input(getattr(eg, _name), lambda p: (p.get("dim", -1),)),
            code=call_code(_name, ("dim",), {}),
            params=(Param("dim", "int", -1, doc="the dim that sums to 1"),),
            call=CallForm(args=("input", "dim"), required=("dim",)),
        )
    )
