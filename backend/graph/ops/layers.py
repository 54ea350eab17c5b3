"""`linear`: a Linear layer of its own, its weight and bias leaves made (and seeded) by the
node. The exporter writes it (it declares the layer) and importing/layers.py reads it back."""

import engine as eg
from engine import nn

from ..registry import LayerForm, OpSpec, Param, Port, register


def linear_run(ctx, ins, p):
    """A Linear layer of its own: weight and bias are leaves made (and seeded) by this node.
    The layer comes from `ctx.module`: a run makes it anew, a training keeps it across steps."""
    x = ins[0]
    in_features = x.shape[-1] if x.ndim else 1
    # the weight this node makes counts against the per-tensor limit, checked before it is
    # allocated (out_features is bounded, but times a wide input it is gigabytes)
    ctx.check_numel(in_features * int(p.get("out_features", 1)))

    def make():
        layer = nn.Linear(
            in_features,
            int(p.get("out_features", 1)),
            bias=p.get("bias", True),
            dtype=x.dtype,
            device=x.device,
        )
        layer.reset_parameters(eg.Generator().manual_seed(p.get("seed") or 0))
        with eg.no_grad():
            if p.get("weight") is not None:
                layer.weight.copy_(eg.tensor(p["weight"], dtype=x.dtype))
            if p.get("bias_value") is not None and layer.bias is not None:
                layer.bias.copy_(eg.tensor(p["bias_value"], dtype=x.dtype))
        return layer

    layer = ctx.module(in_features, make)
    ctx.add_parameters(layer.named_parameters())
    return layer(x)


register(
    OpSpec(
        "linear",
        "neural network",
        "input @ weight.T + bias, with its own weight and bias",
        (
            Port(
                "input",
                derivative="grad @ weight (out = input @ weightᵀ + bias)",
                derivative_kind="grad",
            ),
        ),
        run=linear_run,
        code=None,  # written by the exporter (it declares the layer)
        extra={"composite": True},
        layer=LayerForm(
            cls=lambda x, p: "Linear",
            classes=("Linear",),
            args=lambda x, p: {
                "in_features": x.shape[-1] if x.ndim else 1,
                "out_features": int(p.get("out_features", 1)),
                "bias": bool(p.get("bias", True)),
            },
            state=(("weight", "weight"), ("bias_value", "bias")),
            shapes=lambda a: {
                "weight": (a["out_features"], a["in_features"]),
                **({"bias_value": (a["out_features"],)} if a["bias"] else {}),
            },
        ),
        params=(
            Param("out_features", "int", 1, min=1, max=65536),
            Param("bias", "bool", True),
            Param("seed", "int", 0, min=0, max=2**31 - 1, doc="seed of PyTorch's default init"),
            Param("weight", "tensor", None, nullable=True, doc="trained values (else initialised)"),
            Param("bias_value", "tensor", None, nullable=True, doc="trained bias values"),
        ),
    )
)
