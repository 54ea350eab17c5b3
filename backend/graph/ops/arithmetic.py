"""Arithmetic (`add sub mul div pow`, written as operators; maximum, minimum, neg) and the
elementwise functions (exp, log, ..., clamp)."""

import engine as eg

from ..registry import CallForm, OpSpec, Param, Port, register
from .common import call_code, check_broadcast, on_input, pair_checked


def _scalar_other(d_input, d_other, d_scalar=""):
    """input and other, where `other` may be left unconnected and given as the number `scalar`
    instead (`x ** 2` stays a PowBackward0 with the exponent in the node, as in PyTorch); each
    with its local derivative (d_scalar: input's, while scalar stands in for other)."""
    return (
        Port("input", derivative=d_input, derivative_scalar=d_scalar),
        Port("other", optional=True, doc="or set scalar", derivative=d_other),
    )


SCALAR = Param(
    "scalar",
    "float",
    None,
    nullable=True,
    doc="the number used as other while other is not connected",
)


def _binary_run(fn):
    tensor = eg.Tensor

    def run(ctx, ins, p):
        a, b = ins
        if b is None:  # `other` left unconnected: the number `scalar`
            return fn(a, p["scalar"])
        # two tensors of one shape (the usual case) make that shape: nothing to check
        if a.__class__ is not tensor or b.__class__ is not tensor or a._data.shape != b._data.shape:
            check_broadcast(ctx, ins)
        return fn(a, b)

    return run


def _binary_code(symbol):
    def code(lib, args, p):
        other = args[1] if len(args) > 1 else repr(p["scalar"])
        return f"{args[0]} {symbol} {other}"

    return code


for _name, _sym, _fn, _doc, _ports in (
    ("add", "+", eg.add, "input + other, broadcasting", _scalar_other("1", "1")),
    ("sub", "-", eg.sub, "input - other, broadcasting", _scalar_other("1", "−1")),
    (
        "mul", "*", eg.mul, "input * other, elementwise, broadcasting",
        _scalar_other("other", "input", "{scalar} (the scalar)"),
    ),
    (
        "div", "/", eg.div, "input / other, true division, broadcasting",
        _scalar_other("1/other", "−input/other²", "1/{scalar}"),
    ),
    (
        "pow", "**", eg.pow, "input ** other, broadcasting",
        _scalar_other(
            "other·input^(other−1)", "input^other · ln(input)", "{scalar}·input^{scalar-1}"
        ),
    ),
):  # fmt: skip
    register(
        OpSpec(
            _name,
            "arithmetic",
            _doc,
            _ports,
            run=_binary_run(_fn),
            code=_binary_code(_sym),
            params=(SCALAR,),
            call=CallForm(args=("input", "other"), operator=_sym),
            extra={"scalar_for": "other"},
        )
    )

for _name, _fn, _cmp in (("maximum", eg.maximum, ">"), ("minimum", eg.minimum, "<")):
    register(
        OpSpec(
            _name,
            "arithmetic",
            f"elementwise {_name} of input and other",
            (
                Port("input", derivative=f"1 where input {_cmp} other, else 0 (½ on ties)"),
                Port("other", derivative=f"1 where other {_cmp} input, else 0 (½ on ties)"),
            ),
            run=pair_checked(_fn),
            code=call_code(_name),
            call=CallForm(args=("input", "other")),
        )
    )

register(
    OpSpec(
        "neg",
        "arithmetic",
        "-input",
        (Port("input", derivative="−1"),),
        run=lambda ctx, ins, p: -ins[0],
        code=lambda lib, args, p: f"-{args[0]}",
        call=CallForm(aliases=("negative",)),
    )
)

# -- elementwise functions -------------------------------------------------------------------
for _name, _doc, _derivative in (
    ("exp", "e ** input", "exp(input)"),
    ("log", "natural logarithm", "1/input"),
    ("sqrt", "square root", "1/(2·√input)"),
    ("abs", "absolute value", "sign(input)"),
    ("sin", "sine", "cos(input)"),
    ("cos", "cosine", "−sin(input)"),
    ("reciprocal", "1 / input", "−1/input²"),
):
    register(
        OpSpec(
            _name,
            "elementwise",
            _doc,
            (Port("input", derivative=_derivative),),
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
        (Port("input", derivative="1 where min ≤ input ≤ max, else 0"),),
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
