"""Images: `conv2d` (a Conv2d layer of its own, in_channels read off its input) and the pools
`max_pool2d` / `avg_pool2d`, which have no parameters and are written F.max_pool2d(x, 2) as in
PyTorch (so they export and import back through their call form, as any coded op)."""

import math

import engine.nn.functional as F

from ..registry import CallForm, LayerForm, OpSpec, Param, Port, register
from .common import call_code
from .layer_kit import SEED, register_layer, state_param

FUNCTIONAL = ("functional",)
IMAGES = {"input": {"shape": [2, 2, 6, 6], "init": "rand", "seed": 3}}


def _channels(x):
    """A conv's in_channels: dim 1 of a batch (N, C, H, W), dim 0 of one image (C, H, W). For
    another rank any size will do: the layer's forward refuses it in PyTorch's words."""
    if x.ndim == 3:
        return x.shape[0]
    return x.shape[1] if x.ndim >= 2 else 1


def _conv_args(x, p):
    return {
        "in_channels": _channels(x),
        "out_channels": int(p.get("out_channels", 1)),
        "kernel_size": int(p.get("kernel_size", 3)),
        "stride": int(p.get("stride", 1)),
        "padding": int(p.get("padding", 0)),
        "bias": bool(p.get("bias", True)),
    }


def _conv_shapes(a):
    k = a["kernel_size"]
    shapes = {"weight": (a["out_channels"], a["in_channels"], k, k)}
    if a["bias"]:
        shapes["bias_value"] = (a["out_channels"],)
    return shapes


def _conv_init(module, generator):
    module.reset_parameters(generator)  # PyTorch's: kaiming_uniform_(a=sqrt(5)), then the bias


register_layer(
    "conv2d",
    "a Conv2d layer of its own: each of out_channels output maps is the sum over the input's "
    "channels of a kernel_size x kernel_size window times its weights, plus its bias",
    LayerForm(
        cls=lambda x, p: "Conv2d",
        classes=("Conv2d",),
        args=_conv_args,
        state=(("weight", "weight"), ("bias_value", "bias")),
        shapes=_conv_shapes,
    ),
    (
        Param("out_channels", "int", 1, min=1, max=4096),
        Param("kernel_size", "int", 3, min=1, max=64),
        Param("stride", "int", 1, min=1, max=64),
        Param("padding", "int", 0, min=0, max=64),
        Param("bias", "bool", True),
        SEED,
        state_param("weight", "weights (out_channels, in_channels, k, k)"),
        state_param("bias_value", "bias (out_channels,)"),
    ),
    init=_conv_init,
    inputs=(
        Port(
            "input",
            derivative="conv_transpose2d(grad, weight, stride={stride}, padding={padding}) (each "
            "input element gets the weights it met in every window it was in, times those "
            "windows' grad)",
            derivative_kind="grad",
        ),
    ),
)


def _pool_run(fn):
    def run(ctx, ins, p):
        k = int(p.get("kernel_size", 2))
        stride = p.get("stride")
        x = ins[0]
        if x.ndim >= 2:  # the result's size, before it is made (a stride of 1 keeps it large)
            s = int(stride or k)
            h, w = x.shape[-2:]
            ctx.check_numel(math.prod(x.shape[:-2]) * max(h // s, 1) * max(w // s, 1))
        return fn(x, k, None if stride is None else int(stride))

    return run


for _name, _doc, _derivative in (
    (
        "max_pool2d",
        "the largest value of each kernel_size x kernel_size window of each map",
        "1 at the largest element of each {kernel_size}×{kernel_size} window, else 0 (the edge "
        "gets each window's grad at its largest element, added up where windows overlap)",
    ),
    (
        "avg_pool2d",
        "the mean of each kernel_size x kernel_size window of each map",
        "1/{kernel_size}² for each {kernel_size}×{kernel_size} window an element is in (the edge "
        "gets each window's grad spread evenly over it, added up where windows overlap)",
    ),
):
    register(
        OpSpec(
            _name,
            "neural network",
            _doc + " (stride: the window's step; null: kernel_size)",
            (Port("input", derivative=_derivative, derivative_kind="jacobian"),),
            run=_pool_run(getattr(F, _name)),
            code=call_code(_name, ("kernel_size", "stride"), {"stride": None}, functional=True),
            params=(
                Param("kernel_size", "int", 2, min=1, max=64),
                Param("stride", "int", None, min=1, max=64, nullable=True),
            ),
            call=CallForm(
                args=("input", "kernel_size", "stride"), forms=FUNCTIONAL, required=("kernel_size",)
            ),
            example=IMAGES,
        )
    )
