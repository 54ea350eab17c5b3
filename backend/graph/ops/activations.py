"""Activations: relu, sigmoid, tanh, leaky_relu, softplus, the rest of torch.nn.functional's
elementwise ones (silu, mish, elu, selu, celu, relu6, hardtanh, hardswish, hardsigmoid,
logsigmoid, softsign, tanhshrink), and softmax / log_softmax along a dim."""

import engine as eg
import engine.nn.functional as F

from ..registry import CallForm, OpSpec, Param, Port, register
from .common import call_code, on_input

FUNCTIONAL = ("functional",)  # written F.name(x) only, as in PyTorch

for _name, _doc, _derivative in (
    ("relu", "max(0, input)", "1 where input > 0, else 0"),
    ("sigmoid", "1 / (1 + exp(-input))", "σ(input)·(1 − σ(input))"),
    ("tanh", "hyperbolic tangent", "1 − tanh²(input)"),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            (Port("input", derivative=_derivative),),
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
        (Port("input", derivative="1 where input > 0, else {negative_slope}"),),
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
        (
            Port(
                "input",
                derivative="σ({beta}·input) (1 where {beta}·input > {threshold}: there it is "
                "the input itself)",
            ),
        ),
        run=lambda ctx, ins, p: F.softplus(ins[0], p.get("beta", 1.0), p.get("threshold", 20.0)),
        code=call_code(
            "softplus", ("beta", "threshold"), {"beta": 1.0, "threshold": 20.0}, functional=True
        ),
        params=(Param("beta", "float", 1.0), Param("threshold", "float", 20.0)),
        call=CallForm(args=("input", "beta", "threshold"), forms=FUNCTIONAL),
    )
)
# elementwise, no params, written F.name(x) (nn.<Name>() too: nn_layers.py finds them by name)
_RANGE = {"input": {"shape": [2, 3], "init": "randn", "seed": 3}}  # both signs, past ±1
for _name, _doc, _derivative in (
    ("silu", "input * sigmoid(input) (swish)", "σ(input)·(1 + input·(1 − σ(input)))"),
    (
        "mish",
        "input * tanh(softplus(input))",
        "tanh(softplus(input)) + input·σ(input)·(1 − tanh²(softplus(input)))",
    ),
    (
        "selu",
        "scale * elu(input, alpha), with the fixed scale and alpha that self-normalise",
        "1.0507 where input > 0, else 1.0507·1.6733·exp(input)",
    ),
    ("relu6", "min(max(0, input), 6)", "1 where 0 < input < 6, else 0"),
    (
        "hardswish",
        "input * relu6(input + 3) / 6",
        "input/3 + ½ where −3 ≤ input ≤ 3, 1 above, 0 below",
    ),
    (
        "hardsigmoid",
        "relu6(input + 3) / 6: a piecewise linear sigmoid",
        "1/6 where −3 < input < 3, else 0",
    ),
    ("logsigmoid", "log(sigmoid(input)), computed stably", "1 − σ(input)"),
    ("softsign", "input / (1 + |input|)", "1/(1 + |input|)²"),
    ("tanhshrink", "input - tanh(input)", "tanh²(input)"),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            (Port("input", derivative=_derivative),),
            run=on_input(getattr(F, _name)),
            code=call_code(_name, functional=True),
            call=CallForm(forms=FUNCTIONAL),
            example=_RANGE,
            # the engine writes these two as several ops (a division; a subtraction of tanh)
            extra={"composite": _name in ("softsign", "tanhshrink")},
        )
    )

for _name, _doc, _derivative in (
    (
        "elu",
        "input where positive, alpha * (exp(input) - 1) elsewhere",
        "1 where input > 0, else {alpha}·exp(input)",
    ),
    (
        "celu",
        "input where positive, alpha * (exp(input / alpha) - 1) elsewhere",
        "1 where input > 0, else exp(input/{alpha})",
    ),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            (Port("input", derivative=_derivative),),
            run=on_input(getattr(F, _name), kwargs=lambda p: {"alpha": p.get("alpha", 1.0)}),
            code=call_code(_name, ("alpha",), {"alpha": 1.0}, functional=True),
            params=(Param("alpha", "float", 1.0),),
            call=CallForm(args=("input", "alpha"), forms=FUNCTIONAL),
            example=_RANGE,
        )
    )

register(
    OpSpec(
        "hardtanh",
        "activations",
        "input clamped to [min_val, max_val]; the gradient is 0 outside",
        (Port("input", derivative="1 where {min_val} < input < {max_val}, else 0"),),
        run=lambda ctx, ins, p: F.hardtanh(ins[0], p.get("min_val", -1.0), p.get("max_val", 1.0)),
        code=call_code(
            "hardtanh", ("min_val", "max_val"), {"min_val": -1.0, "max_val": 1.0}, functional=True
        ),
        params=(Param("min_val", "float", -1.0), Param("max_val", "float", 1.0)),
        call=CallForm(args=("input", "min_val", "max_val"), forms=FUNCTIONAL),
        example=_RANGE,
    )
)

# a Jacobian: each output depends on every input along dim (s = softmax(input) along it)
for _name, _doc, _derivative in (
    (
        "softmax",
        "exp(input) normalised to sum to 1 along dim",
        "diag(s) − s·sᵀ (s = softmax(input) along dim {dim}; a Jacobian: each output depends "
        "on every input along that dim; the edge gets s ⊙ (grad − Σ grad·s))",
    ),
    (
        "log_softmax",
        "log of softmax, computed stably",
        "I − 1·sᵀ (s = softmax(input) along dim {dim}, 1 a column of ones; a Jacobian: each "
        "output depends on every input along that dim; the edge gets grad − s·Σ grad)",
    ),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            (Port("input", derivative=_derivative, derivative_kind="jacobian"),),
            run=on_input(getattr(eg, _name), lambda p: (p.get("dim", -1),)),
            code=call_code(_name, ("dim",), {}),
            params=(Param("dim", "int", -1, doc="the dim that sums to 1"),),
            call=CallForm(args=("input", "dim"), required=("dim",)),
        )
    )
