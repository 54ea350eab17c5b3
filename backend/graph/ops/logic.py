"""Comparisons (no gradient), `where`, and `if`: the control-flow op (`branches`), which runs
only the branch its condition picks."""

import engine as eg

from ..registry import CallForm, OpSpec, Port, register
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
