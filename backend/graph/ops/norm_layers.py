"""The layers that train() and eval() change, and layer_norm: `batch_norm` (BatchNorm1d or 2d
by the input's rank, with running statistics), `layer_norm` and `dropout`. Their `mode` param
says train() or eval() (layer_kit.py; docs/graph-format.md, "Layers")."""

import numpy as np

import engine.nn.functional as F

from ..registry import CallForm, LayerForm, OpSpec, Param, Port, register
from .layer_kit import MODE, SeededDropout, register_layer, state_param

# BatchNorm's class by the input's rank, as PyTorch asks it to be picked: (N, C) and (N, C, L)
# are BatchNorm1d, (N, C, H, W) BatchNorm2d, (N, C, D, H, W) BatchNorm3d
_BATCH_NORM = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d", 5: "BatchNorm3d"}


def _features(x):
    return x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim else 1)


def _bn_args(x, p):
    return {
        "num_features": _features(x),
        "eps": float(p.get("eps", 1e-5)),
        "momentum": float(p.get("momentum", 0.1)),
        "affine": bool(p.get("affine", True)),
    }


def _bn_shapes(a):
    c = (a["num_features"],)
    shapes = {"running_mean": c, "running_var": c}
    if a["affine"]:
        shapes.update(weight=c, bias_value=c)
    return shapes


register_layer(
    "batch_norm",
    "normalises each channel (dim 1) over the batch: in train() by the batch's mean and "
    "variance (and updates running_mean / running_var), in eval() by the running ones; then "
    "* weight + bias",
    LayerForm(
        # a rank PyTorch has no class for: BatchNorm1d, whose forward says what it expects
        cls=lambda x, p: _BATCH_NORM.get(x.ndim, "BatchNorm1d"),
        classes=("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"),
        args=_bn_args,
        state=(
            ("weight", "weight"),
            ("bias_value", "bias"),
            ("running_mean", "running_mean"),
            ("running_var", "running_var"),
        ),
        shapes=_bn_shapes,
        modes=True,
    ),
    (
        Param("eps", "float", 1e-5, min=0.0, max=1.0),
        Param("momentum", "float", 0.1, min=0.0, max=1.0, doc="of the running statistics"),
        Param("affine", "bool", True, doc="a weight and bias of its own"),
        MODE,
        state_param("weight", "weight (num_features,)"),
        state_param("bias_value", "bias (num_features,)"),
        state_param("running_mean", "running mean (num_features,)"),
        state_param("running_var", "running variance (num_features,)"),
    ),
    example={"input": {"shape": [4, 3], "init": "rand", "seed": 4}},
    inputs=(
        Port(
            "input",
            derivative="in train(): weight/σ·(I − 1·1ᵀ/n − z·zᵀ/n) over each channel's n values "
            "(σ = √(var + {eps}), z the normalised input; a Jacobian: each output depends on "
            "every input of its channel); in eval(): weight/√(running_var + {eps})",
            derivative_kind="jacobian",
        ),
    ),
)


def _ln_args(x, p):
    shape = p.get("normalized_shape")
    if not shape:  # null: the input's last dim, as most models use it
        shape = [x.shape[-1] if x.ndim else 1]
    return {
        "normalized_shape": list(shape),
        "eps": float(p.get("eps", 1e-5)),
        "elementwise_affine": bool(p.get("elementwise_affine", True)),
    }


def _ln_shapes(a):
    if not a["elementwise_affine"]:
        return {}
    s = tuple(a["normalized_shape"])
    return {"weight": s, "bias_value": s}


register_layer(
    "layer_norm",
    "normalises each row over its last dims (normalized_shape) by its own mean and variance, "
    "then * weight + bias",
    LayerForm(
        cls=lambda x, p: "LayerNorm",
        classes=("LayerNorm",),
        args=_ln_args,
        state=(("weight", "weight"), ("bias_value", "bias")),
        shapes=_ln_shapes,
    ),
    (
        Param(
            "normalized_shape",
            "shape",
            None,
            nullable=True,
            doc="the last dims to normalise over; null: the input's last dim",
        ),
        Param("eps", "float", 1e-5, min=0.0, max=1.0),
        Param("elementwise_affine", "bool", True, doc="a weight and bias of its own"),
        state_param("weight", "weight (normalized_shape)"),
        state_param("bias_value", "bias (normalized_shape)"),
    ),
    inputs=(
        Port(
            "input",
            derivative="weight/σ·(I − 1·1ᵀ/n − z·zᵀ/n) over each row's n values (σ = √(var + "
            "{eps}), z the normalised input; a Jacobian: each output depends on every input of "
            "its row)",
            derivative_kind="jacobian",
        ),
    ),
)


def _layer_norm_fn(ctx, ins, p):
    x, weight, bias = ins
    shape = list(p.get("normalized_shape") or [])
    return F.layer_norm(x, shape, weight, bias, float(p.get("eps", 1e-5)))


def _layer_norm_fn_code(lib, args, p):
    shape = list(p.get("normalized_shape") or [])
    head = f"F.layer_norm({args[0]}, {shape!r}, {args[1]}"
    bias = f", {args[2]}" if len(args) > 2 else ", None"
    eps = float(p.get("eps", 1e-5))
    return head + bias + (f", {eps!r})" if eps != 1e-5 else ")")


# F.layer_norm(x, shape, weight, bias): the same normalisation with weight and bias given as
# tensors (nanoGPT's LayerNorm holds them as nn.Parameter, its bias optional)
register(
    OpSpec(
        "functional_layer_norm",
        "neural network",
        "F.layer_norm: normalises each row over its last dims (normalized_shape) by its own mean "
        "and variance, then * weight + bias, both given as inputs",
        (
            Port(
                "input",
                derivative="weight/σ·(I − 1·1ᵀ/n − z·zᵀ/n) over each row's n values (σ = √(var "
                "+ {eps}), z the normalised input; a Jacobian: each output depends on every input "
                "of its row)",
                derivative_kind="jacobian",
            ),
            Port(
                "weight",
                doc="the scale, of normalized_shape",
                derivative="z, the normalised input (summed over the rows: the edge gets the sum "
                "of grad · z)",
                derivative_kind="jacobian",
            ),
            Port(
                "bias",
                optional=True,
                doc="the shift, of normalized_shape (none: no shift)",
                derivative="1 (summed over the rows: the edge gets the sum of grad)",
                derivative_kind="jacobian",
            ),
        ),
        run=_layer_norm_fn,
        code=_layer_norm_fn_code,
        params=(
            Param(
                "normalized_shape", "shape", [8], doc="the last dims to normalise over (weight's)"
            ),
            Param("eps", "float", 1e-5, min=0.0, max=1.0),
        ),
        call=CallForm(
            args=("input", "normalized_shape", "weight", "bias", "eps"),
            aliases=("layer_norm",),
            forms=("functional",),
            required=("normalized_shape",),
        ),
        example={
            "input": {"shape": [2, 8], "init": "rand", "seed": 1},
            "weight": {"shape": [8], "init": "rand", "seed": 2},
            "bias": {"shape": [8], "init": "rand", "seed": 3},
        },
    )
)


def _dropout_make(cls, args, dtype):
    return SeededDropout(args["p"])


register_layer(
    "dropout",
    "in train(): zeroes each element with probability p and scales the others by 1 / (1 - p); "
    "in eval(): the input as it is",
    LayerForm(
        cls=lambda x, p: "Dropout",
        classes=("Dropout",),
        args=lambda x, p: {"p": float(p.get("p", 0.5))},
        modes=True,
    ),
    (
        Param(
            "p", "float", 0.5, min=0.0, max=1.0, doc="the probability of an element to be zeroed"
        ),
        MODE,
        Param("seed", "int", 0, min=0, max=2**31 - 1, doc="seeds its masks"),
    ),
    make=_dropout_make,
    # the node's masks stay numpy's default_rng(seed) (not PyTorch's stream): see SeededDropout
    init=lambda module, generator: setattr(
        module, "rng", np.random.default_rng(generator.initial_seed())
    ),
    inputs=(
        Port(
            "input",
            derivative="in train(): 0 where dropped, 1/(1 − {p}) where kept; in eval(): 1",
        ),
    ),
)
