"""The losses of torch.nn.functional: mse_loss, l1_loss, binary_cross_entropy, cross_entropy."""

import engine.nn.functional as F

from ..registry import CallForm, OpSpec, Param, Port, register
from .common import call_code, on_inputs

REDUCTIONS = ("mean", "sum", "none")
_CLASSES = "cross_entropy's target holds class indices (integers): it has no gradient."

for _name, _doc in (
    ("mse_loss", "mean squared error"),
    ("l1_loss", "mean absolute error"),
    ("binary_cross_entropy", "binary cross-entropy of probabilities in [0, 1]"),
    ("cross_entropy", "cross-entropy of logits (N, C) against class indices (N,)"),
):
    classes = _name == "cross_entropy"
    register(
        OpSpec(
            _name,
            "losses",
            _doc,
            (Port("input"), Port("target", no_grad=_CLASSES if classes else "")),
            run=on_inputs(getattr(F, _name), lambda p: {"reduction": p.get("reduction", "mean")}),
            code=call_code(_name, ("reduction",), {"reduction": "mean"}, functional=True),
            params=(Param("reduction", "choice", "mean", choices=REDUCTIONS),),
            call=CallForm(args=("input", "target"), kwonly=("reduction",), forms=("functional",)),
            example={"target": {"value": [0, 2], "dtype": "int64"}} if classes else {},
            # l1_loss and cross_entropy are several engine ops (PyTorch's are too)
            extra={"composite": _name in ("l1_loss", "cross_entropy")},
        )
    )
