"""Comparisons (no gradient), `where`, and `if`: the control-flow op (`branches`), which runs
only the branch its condition picks; and masks (`masked_fill`, `tril`, `triu`)."""

import math

import engine as eg

from ..registry import CallForm, OpSpec, Param, Port, register
from .common import broadcast_checked, call_code, on_inputs, operator_code

_NO_GRAD = "a comparison ({op}) has no gradient: nothing flows back along this edge."
_CONDITION = (
    "the condition of {op} has no gradient: it only picks which values pass, so nothing "
    "flows back to {source}."
)
_TAKEN = "1 (the branch taken passes the gradient through)"
_COMPARED = (Port("input", no_grad=_NO_GRAD), Port("other", no_grad=_NO_GRAD))

for _name, _sym in (
    ("gt", ">"),
    ("lt", "<"),
    ("ge", ">="),
    ("le", "<="),
    ("eq", "=="),
    ("ne", "!="),
):
    register(
        OpSpec(
            _name,
            "logic",
            f"input {_sym} other, elementwise (no gradient)",
            _COMPARED,
            run=broadcast_checked(on_inputs(getattr(eg, _name))),
            code=operator_code(_sym),
            call=CallForm(args=("input", "other"), operator=_sym),
        )
    )

register(
    OpSpec(
        "where",
        "logic",
        "input where condition is true, other elsewhere",
        (
            Port("condition", no_grad=_CONDITION),
            Port("input", derivative="1 where condition, else 0"),
            Port("other", derivative="0 where condition, else 1"),
        ),
        run=broadcast_checked(lambda ctx, ins, p: eg.where(ins[0], ins[1], ins[2])),
        code=call_code("where"),
        call=CallForm(args=("condition", "input", "other"), forms=("function", "functional")),
        example={
            "condition": {"value": [[True, False, True], [False, True, False]], "dtype": "bool"}
        },
    )
)
register(
    OpSpec(
        "if",
        "logic",
        "runs only the branch the condition picks (a one-element tensor)",
        (
            Port("condition", no_grad=_CONDITION),
            Port("then", derivative=_TAKEN),
            Port("else", derivative=_TAKEN),
        ),
        run=lambda ctx, ins, p: ins[1] if ins[1] is not None else ins[2],  # the executor picks
        code=lambda lib, args, p: f"{args[1]} if {args[0]} else {args[2]}",
        branches=True,
        example={"condition": {"value": 1.0}},
        extra={"composite": True},
    )
)


# -- masks --------------------------------------------------------------------------------------
# A causal mask is written with these: `att.masked_fill(mask == 0, float("-inf"))`, the mask a
# `torch.tril` of ones. The fill value is a param string, so that -inf (which a JSON document
# cannot hold as a number) is one: `0`, `-1e9`, `-inf`.


class FillProblem(ValueError):
    """A bad fill value: validation reports it at the node's `value` param."""

    param = "value"


def fill_value(p):
    """The `value` param of masked_fill as a float: a number, `inf` or `-inf`."""
    text = p.get("value", "0.0")
    try:
        v = float(str(text).strip())
    except ValueError:
        raise FillProblem(
            f"value '{text}' is not a number: write it as in masked_fill(mask, ...), "
            "e.g. 0, -1e9 or -inf"
        ) from None
    if math.isnan(v):
        raise FillProblem("value must be a number, inf or -inf (not nan)")
    return v


def fill_code(v):
    """The fill value as Python writes it: `float("-inf")` for an infinity."""
    if math.isinf(v):
        return 'float("-inf")' if v < 0 else 'float("inf")'
    return repr(v)


def _read_fill(name, vals, values):
    """A call's literal fill value (a number, or float("-inf") read as -inf) as the param's
    text."""
    if "value" in vals:
        v = vals["value"]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name}'s value must be a number")
        vals = {
            **vals,
            "value": "-inf" if v == -math.inf else "inf" if v == math.inf else repr(float(v)),
        }
    return vals


register(
    OpSpec(
        "masked_fill",
        "logic",
        "input with value written where mask is true (a causal mask: mask == 0, -inf)",
        (
            Port("input", derivative="1 where mask is false, 0 where value was written"),
            Port(
                "mask",
                no_grad=(
                    "the mask of {op} has no gradient: it only says where the value is "
                    "written, so nothing flows back to {source}."
                ),
            ),
        ),
        run=broadcast_checked(lambda ctx, ins, p: ins[0].masked_fill(ins[1], fill_value(p))),
        code=lambda lib, args, p: f"{args[0]}.masked_fill({args[1]}, {fill_code(fill_value(p))})",
        params=(
            Param(
                "value",
                "str",
                "0.0",
                max_length=40,
                # (a number as Python's repr writes it: a script read back gives the same text)
                doc="the number written where mask is true: 0.0, -1e9, -inf",
            ),
        ),
        call=CallForm(
            args=("input", "mask", "value"), forms=("function", "method"), read=_read_fill
        ),
        example={"mask": {"value": [[True, False, True], [False, True, False]], "dtype": "bool"}},
    )
)

for _name, _below in (("tril", True), ("triu", False)):
    _kept = "on and below" if _below else "on and above"
    register(
        OpSpec(
            _name,
            "logic",
            f"the matrix with the entries {_kept} diagonal `diagonal` kept, the others 0",
            (Port("input", derivative=f"1 {_kept} the diagonal, 0 elsewhere"),),
            run=lambda ctx, ins, p, f=_name: getattr(eg, f)(ins[0], p.get("diagonal", 0)),
            code=call_code(_name, ("diagonal",), {"diagonal": 0}),
            params=(Param("diagonal", "int", 0, min=-(2**31), max=2**31 - 1),),
            call=CallForm(args=("input", "diagonal")),
        )
    )
