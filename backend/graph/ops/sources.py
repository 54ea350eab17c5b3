"""The sources: `tensor` and `parameter` (leaves from a literal or a shape and an init) and
`scalar`. The importer reads their lines with importing/sources.py, so they have no call form."""

import math

import numpy as np

import engine as eg

from ..registry import OpSpec, Param, register
from .common import DTYPES

INITS = ("zeros", "ones", "randn", "rand", "arange")


def make_tensor(ctx, params, requires_grad):
    """A leaf from a literal `value`, or from `shape` + `init` (+ `seed` for random inits)."""
    dtype = getattr(eg, params.get("dtype") or "float32")
    device = ctx.device
    if params.get("value") is not None:
        t = eg.tensor(params["value"], dtype=dtype, device=device)
    else:
        shape = tuple(params.get("shape") or ())
        ctx.check_numel(math.prod(shape))
        init = params.get("init") or "zeros"
        if init in ("randn", "rand"):
            t = eg.tensor(_draw(init, params.get("seed") or 0, shape), dtype=dtype, device=device)
        elif init == "arange":
            t = eg.arange(math.prod(shape), dtype=dtype, device=device).reshape(shape)
        else:
            t = getattr(eg, init)(*shape, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_()
    return t


def _draw(init, seed, shape):
    """A random source's numbers: numpy's `default_rng(seed)` (float64, then the node's dtype),
    written the same way in both exported scripts. Layers, dropout and the engine's own
    `eg.randn` draw PyTorch's numbers instead; a source keeps numpy's so that a document's values
    stay what they were and the scripts say plainly where they come from."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) if init == "randn" else rng.random(shape)


def as_floats(value):
    """Nested lists with every number a float, so `eg.tensor(2.0)` is float like the run's."""
    if isinstance(value, list):
        return [as_floats(v) for v in value]
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    )


def tensor_code(lib, args, params, requires_grad):
    """The source as code that makes the same tensor the executor makes."""
    rg = ", requires_grad=True" if requires_grad else ""
    dtype = params.get("dtype") or "float32"
    dt = "" if dtype == "float32" else f", dtype={lib}.{dtype}"
    if params.get("value") is not None:
        value = params["value"]
        if dtype == "float32":
            value = as_floats(value)
        elif dtype == "int64" and not _has_float(value):
            dt = ""  # integers are int64 by default
        return f"{lib}.tensor({value!r}{dt}{rg})"
    shape = tuple(params.get("shape") or ())
    init = params.get("init") or "zeros"
    if init in ("randn", "rand"):
        seed = params.get("seed") or 0
        draw = "standard_normal" if init == "randn" else "random"  # what _draw draws
        return (
            f"{lib}.tensor(np.random.default_rng({seed}).{draw}({shape!r}), "
            f"dtype={lib}.{dtype}{rg})"
        )
    if init == "arange":
        grad = ".requires_grad_()" if requires_grad else ""
        return f"{lib}.arange({math.prod(shape)}, dtype={lib}.{dtype}).reshape({shape!r}){grad}"
    return f"{lib}.{init}({shape!r}{dt}{rg})"


def _has_float(value):
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return isinstance(value, float)


SOURCE_PARAMS = (
    Param(
        "value",
        "tensor",
        None,
        nullable=True,
        doc="the values (a number or nested lists); empty to use shape and init",
    ),
    Param("shape", "shape", [], doc="the shape, when there is no value"),
    Param("init", "choice", "zeros", choices=INITS, doc="how to fill a tensor made from shape"),
    Param("seed", "int", 0, min=0, max=2**31 - 1, doc="seed for randn and rand"),
    Param("dtype", "choice", "float32", choices=DTYPES),
    Param("name", "str", "", doc="a name for the tensor, used in code and labels"),
)

register(
    OpSpec(
        "tensor",
        "sources",
        "A tensor: literal values, or a shape filled by an init.",
        (),
        run=lambda ctx, ins, p: make_tensor(ctx, p, bool(p.get("requires_grad"))),
        code=lambda lib, args, p: tensor_code(lib, args, p, bool(p.get("requires_grad"))),
        params=SOURCE_PARAMS[:5]
        + (Param("requires_grad", "bool", False, doc="track gradients for this leaf"),)
        + SOURCE_PARAMS[5:],
        source=True,
    )
)
register(
    OpSpec(
        "parameter",
        "sources",
        "A trainable leaf: a tensor that always requires grad.",
        (),
        run=lambda ctx, ins, p: make_tensor(ctx, p, True),
        code=lambda lib, args, p: tensor_code(lib, args, p, True),
        params=SOURCE_PARAMS,
        source=True,
    )
)
register(
    OpSpec(
        "scalar",
        "sources",
        "A constant number (a 0-d tensor without grad).",
        (),
        run=lambda ctx, ins, p: eg.tensor(float(p.get("value", 0.0)), device=ctx.device),
        code=lambda lib, args, p: f"{lib}.tensor({float(p.get('value', 0.0))!r})",
        params=(Param("value", "float", 1.0), Param("name", "str", "")),
        source=True,
    )
)
