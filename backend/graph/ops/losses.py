"""The losses of torch.nn.functional: mse_loss, l1_loss, binary_cross_entropy, cross_entropy,
smooth_l1_loss, huber_loss, binary_cross_entropy_with_logits, nll_loss and kl_div."""

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
            call=CallForm(
                args=("input", "target"),
                kwonly=("reduction",),
                forms=("functional",),
                nn_class="BCELoss" if _name == "binary_cross_entropy" else "",
            ),
            example={"target": {"value": [0, 2], "dtype": "int64"}} if classes else {},
            # l1_loss and cross_entropy are several engine ops (PyTorch's are too)
            extra={"composite": _name in ("l1_loss", "cross_entropy")},
        )
    )

# with a param of their own beside the reduction: where the squared error turns linear
for _name, _doc, _param, _pdoc in (
    ("smooth_l1_loss", "squared error / beta below beta, absolute error - beta/2 above", "beta",
     "where the loss turns from squared to absolute"),
    ("huber_loss", "squared error / 2 below delta, delta * (absolute error - delta/2) above",
     "delta", "where the loss turns from squared to absolute"),
):  # fmt: skip
    register(
        OpSpec(
            _name,
            "losses",
            _doc,
            (Port("input"), Port("target")),
            run=on_inputs(
                getattr(F, _name),
                lambda p, k=_param: {"reduction": p.get("reduction", "mean"), k: p.get(k, 1.0)},
            ),
            code=call_code(
                _name, ("reduction", _param), {"reduction": "mean", _param: 1.0}, functional=True
            ),
            params=(
                Param("reduction", "choice", "mean", choices=REDUCTIONS),
                Param(_param, "float", 1.0, min=0.0, doc=_pdoc),
            ),
            call=CallForm(
                args=("input", "target"), kwonly=("reduction", _param), forms=("functional",)
            ),
            extra={"composite": True},
        )
    )

register(
    OpSpec(
        "binary_cross_entropy_with_logits",
        "losses",
        "binary cross-entropy of sigmoid(input) against probabilities in [0, 1], computed stably",
        (Port("input"), Port("target")),
        run=on_inputs(
            F.binary_cross_entropy_with_logits,
            lambda p: {"reduction": p.get("reduction", "mean")},
        ),
        code=call_code(
            "binary_cross_entropy_with_logits",
            ("reduction",),
            {"reduction": "mean"},
            functional=True,
        ),
        params=(Param("reduction", "choice", "mean", choices=REDUCTIONS),),
        call=CallForm(
            args=("input", "target"),
            kwonly=("reduction",),
            forms=("functional",),
            nn_class="BCEWithLogitsLoss",
        ),
        extra={"composite": True},
    )
)

register(
    OpSpec(
        "nll_loss",
        "losses",
        "negative log-likelihood of log-probabilities (N, C) at class indices (N,)",
        (Port("input"), Port("target", no_grad=_CLASSES.replace("cross_entropy", "nll_loss"))),
        run=on_inputs(F.nll_loss, lambda p: {"reduction": p.get("reduction", "mean")}),
        code=call_code("nll_loss", ("reduction",), {"reduction": "mean"}, functional=True),
        params=(Param("reduction", "choice", "mean", choices=REDUCTIONS),),
        call=CallForm(args=("input", "target"), kwonly=("reduction",), forms=("functional",)),
        example={
            "input": {"shape": [2, 3], "init": "randn", "seed": 4},
            "target": {"value": [0, 2], "dtype": "int64"},
        },
    )
)

register(
    OpSpec(
        "kl_div",
        "losses",
        "KL divergence of target from input, input given as log-probabilities "
        "(batchmean: the sum over a batch's rows, divided by their number)",
        (Port("input"), Port("target")),
        run=on_inputs(
            F.kl_div,
            lambda p: {
                "reduction": p.get("reduction", "mean"),
                "log_target": p.get("log_target", False),
            },
        ),
        code=call_code(
            "kl_div",
            ("reduction", "log_target"),
            {"reduction": "mean", "log_target": False},
            functional=True,
        ),
        params=(
            Param("reduction", "choice", "mean", choices=("mean", "batchmean", "sum", "none")),
            Param("log_target", "bool", False, doc="the target is log-probabilities too"),
        ),
        call=CallForm(
            args=("input", "target"), kwonly=("reduction", "log_target"), forms=("functional",)
        ),
        extra={"composite": True},
    )
)
