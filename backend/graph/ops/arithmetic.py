"""Arithmetic (`add sub mul div pow`, written as operators; maximum, minimum, neg) and the
elementwise functions (exp, log, ..., clamp)."""

import engine as eg

from ..registry import CallForm, OpSpec, Param, Port, register
from .common import INPUT, PAIR, broadcast_checked, call_code, check_broadcast, on_input, on_inputs

# `other` may be left unconnected and given as the number `scalar` instead: `x ** 2` stays a
# PowBackward0 with the exponent in the node, as in PyTorch.
SCALAR_OTHER = (Port("input"), Port("other", optional=True, doc="or set scalar"))
SCALAR = Param(
    "scalar",
    "float",
    None,
    nullable=True,
    doc="the number used as other while other is not connected",
)


def _binary_run(fn):
    def run(ctx, ins, p):
        a, b = ins
        if b is None:  # `other` left unconnected: the number `scalar`
            return fn(a, p["scalar"])
        check_broadcast(ctx, ins)
        return fn(a, b)

    return run


def _binary_code(symbol):
    def code(lib, args, p):
        other = args[1] if len(args) > 1 else repr(p["scalar"])
        return f"{args[0]} {symbol} {other}"

    return code


for _name, _sym, _fn, _doc in (
    ("add", "+", eg.add, "input + other, broadcasting"),
    ("sub", "-", eg.sub, "input - other, broadcasting"),
    ("mul", "*", eg.mul, "input * other, elementwise, broadcasting"),
    ("div", "/", eg.div, "input / other, true division, broadcasting"),
    ("pow", "**", eg.pow, "input ** other, broadcasting"),
):
    register(
        OpSpec(
            _name,
            "arithmetic",
            _doc,
            SCALAR_OTHER,
            run=_binary_run(_fn),
            code=_binary_code(_sym),
            params=(SCALAR,),
            call=CallForm(args=("input", "other"), operator=_sym),
            extra={"scalar_for": "other"},
        )
    )

for _name, _fn in (("maximum", eg.maximum), ("minimum", eg.minimum)):
    register(
        OpSpec(
            _name,
            "arithmetic",
            f"elementwise {_name} of input and other",
            PAIR,
            run=broadcast_checked(on_inputs(_fn)),
            code=call_code(_name),
            call=CallForm(args=("input", "other")),
        )
    )

register(
    OpSpec(
        "neg",
        "arithmetic",
        "-input",
        INPUT,
        run=lambda ctx, ins, p: -ins[0],
        code=lambda lib, args, p: f"-{args[0]}",
        call=CallForm(aliases=("negative",)),
    )
)

# -- elementwise functions -------------------------------------------------------------------
for _name, _doc in (
    ("exp", "e ** input"),
    ("log", "natural logarithm"),
    ("sqrt", "square root"),
    ("abs", "absolute value"),
    ("sin", "sine"),
    ("cos", "cosine"),
    ("reciprocal", "1 / input"),
):
    register(
        OpSpec(
            _name,
            "elementwise",
            _doc,
            INPUT,
            run=on_input(getattr(eg, _name)),
            code=call_code(_name),
            call=CallForm(),
        )
    )

register(
    OpSpec(
        "clamp",
        "elementwise",
        "limits input to [min, max]",
        INPUT,
        run=lambda ctx, ins, p: eg.clamp(ins[0], p.get("min"), p.get("max")),
        code=call_code("clamp", ("min", "max"), {"min": None, "max": None}),
        params=(
            Param("min", "float", None, nullable=True),
            Param("max", "float", 1.0, nullable=True),
        ),
        call=CallForm(
            args=("input", "min", "max"), aliases=("clip",), defaults={"min": None, "max": None}
        ),
    )
)
