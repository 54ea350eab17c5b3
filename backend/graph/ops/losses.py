"""The losses of torch.nn.functional: mse_loss, l1_loss, binary_cross_entropy, cross_entropy,
smooth_l1_loss, huber_loss, binary_cross_entropy_with_logits, nll_loss and kl_div."""

import engine.nn.functional as F

from ..registry import CallForm, OpSpec, Param, Port, register
from .common import call_code, on_inputs

REDUCTIONS = ("mean", "sum", "none")
# the local derivatives' division by what reduction="mean" averaged over
_MEAN = "{reduction|mean:/n}"
_KL_MEAN = "{reduction|mean:/n|batchmean:/N (N: input's first dim)}"
_CLASSES = "cross_entropy's target holds class indices (integers): it has no gradient."

# (input, target)'s local derivatives; n: the number of elements averaged, N: of rows
for _name, _doc, _d_input, _d_target in (
    ("mse_loss", "mean squared error", f"2·(input − target){_MEAN}", f"−2·(input − target){_MEAN}"),
    ("l1_loss", "mean absolute error", f"sign(input − target){_MEAN}",
     f"−sign(input − target){_MEAN}"),
    (
        "binary_cross_entropy",
        "binary cross-entropy of probabilities in [0, 1]",
        f"(input − target)/(input·(1 − input)){_MEAN}",
        f"(log(1 − input) − log(input)){_MEAN}",
    ),
    (
        "cross_entropy",
        "cross-entropy of logits (N, C) against class indices (N,)",
        "softmax(input) − onehot(target){reduction|mean:, ÷N (N: the rows averaged)} "
        "(softmax over the class dim)",
        "",
    ),
):  # fmt: skip
    classes = _name == "cross_entropy"
    register(
        OpSpec(
            _name,
            "losses",
            _doc,
            (
                Port("input", derivative=_d_input),
                Port("target", no_grad=_CLASSES if classes else "", derivative=_d_target),
            ),
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
for _name, _doc, _param, _pdoc, _slope in (
    ("smooth_l1_loss", "squared error / beta below beta, absolute error - beta/2 above", "beta",
     "where the loss turns from squared to absolute",
     "(input − target)/{beta} where |input − target| < {beta}, else sign(input − target)"),
    ("huber_loss", "squared error / 2 below delta, delta * (absolute error - delta/2) above",
     "delta", "where the loss turns from squared to absolute",
     "input − target where |input − target| < {delta}, else {delta}·sign(input − target)"),
):  # fmt: skip
    register(
        OpSpec(
            _name,
            "losses",
            _doc,
            (
                Port("input", derivative=f"({_slope}){_MEAN}"),
                Port("target", derivative=f"−({_slope}){_MEAN}"),
            ),
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
        (
            Port("input", derivative=f"(σ(input) − target){_MEAN}"),
            Port("target", derivative=f"−input{_MEAN}"),
        ),
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
        (
            Port(
                "input",
                derivative="−1 at each row's target class, else 0"
                "{reduction|mean:, ÷N (N: the rows averaged)}",
            ),
            Port("target", no_grad=_CLASSES.replace("cross_entropy", "nll_loss")),
        ),
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
        (
            Port("input", derivative=f"{{log_target|false:−target|true:−exp(target)}}{_KL_MEAN}"),
            Port(
                "target",
                derivative="{log_target|false:log(target) + 1 − input"
                f"|true:exp(target)·(target − input + 1)}}{_KL_MEAN}",
            ),
        ),
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
