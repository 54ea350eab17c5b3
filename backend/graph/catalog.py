"""Every op of the editor, registered once: ports, params, how it runs on the engine and how it
is written as code. Engine code and PyTorch code share one template: `lib` is `eg` or `torch`,
and `F` is the functional module of either."""

import math

import numpy as np

import engine as eg
import engine.nn.functional as F
from engine import nn

from . import datasets
from .registry import OpSpec, Param, Port, register

INPUT = (Port("input"),)
PAIR = (Port("input"), Port("other"))
DTYPES = ("float32", "float64", "int64", "bool")
INITS = ("zeros", "ones", "randn", "rand", "arange")
REDUCTIONS = ("mean", "sum", "none")


def _kwargs(params, names, defaults):
    """`, k=v` for each param that differs from its default (so code stays short)."""
    parts = [f"{n}={params[n]!r}" for n in names if params.get(n) != defaults.get(n)]
    return "".join(", " + p for p in parts)


def _call(fn, names=(), defaults=None, *, functional=False):
    defaults = defaults or {}

    def code(lib, args, params):
        head = f"F.{fn}" if functional else f"{lib}.{fn}"
        return f"{head}({', '.join(args)}{_kwargs(params, names, defaults)})"

    return code


def _operator(symbol):
    def code(lib, args, params):
        return f"{args[0]} {symbol} {args[1]}"

    return code


def _on_input(fn, args=None, kwargs=None):
    """run() for an op on its first input, with params turned into arguments."""
    if args is None and kwargs is None:  # most ops: fn(input), with no arguments to unpack

        def run_plain(ctx, ins, p):
            return fn(ins[0])

        return run_plain

    def run(ctx, ins, p):
        return fn(ins[0], *(args(p) if args else ()), **(kwargs(p) if kwargs else {}))

    return run


def _single_input(name, category, doc):
    """Register an op that is the engine function of the same name on one input."""
    register(OpSpec(name, category, doc, INPUT, run=_on_input(getattr(eg, name)), code=_call(name)))


def _on_inputs(fn, kwargs=None):
    """run() for an op on all its inputs in port order."""

    def run(ctx, ins, p):
        return fn(*ins, **(kwargs(p) if kwargs else {}))

    return run


# -- sources ------------------------------------------------------------------------------------
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
            g = eg.Generator().manual_seed(params.get("seed") or 0)
            t = getattr(eg, init)(*shape, dtype=dtype, generator=g, device=device)
        elif init == "arange":
            t = eg.arange(math.prod(shape), dtype=dtype, device=device).reshape(shape)
        else:
            t = getattr(eg, init)(*shape, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_()
    return t


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
        if lib == "eg":
            return f"eg.{init}({shape!r}{dt}, generator=eg.Generator().manual_seed({seed}){rg})"
        # PyTorch's generator draws other numbers: take the engine's (numpy's default_rng)
        draw = "standard_normal" if init == "randn" else "random"
        return (
            f"torch.tensor(np.random.default_rng({seed}).{draw}({shape!r}), "
            f"dtype=torch.{dtype}{rg})"
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

# -- arithmetic -------------------------------------------------------------------------------
# `other` may be left unconnected and given as the number `scalar` instead: `x ** 2` stays a
# PowBackward0 with the exponent in the node, as in PyTorch.
SCALAR_OTHER = (Port("input"), Port("other", optional=True, doc="or set scalar"))
SCALAR = Param(
    "scalar",
    "float",
    None,
    nullable=True,
    doc="the number used as other while other is not connected",
)


def _check_broadcast(ctx, ins):
    """Check the size of the broadcast result first: inputs of [N, 1] and [1, N] are small and
    make N * N elements, to be refused at the limit before numpy allocates them (a server's
    validation would otherwise hold gigabytes for a moment, or fail in numpy's words). Inputs
    of one shape (the usual case) give that shape: nothing to check."""
    if _shapes_differ(ins):
        shapes = [t._data.shape for t in ins if isinstance(t, eg.Tensor)]
        try:
            n = math.prod(np.broadcast_shapes(*shapes))
        except ValueError:
            n = 0  # shapes that do not broadcast: the op says so in PyTorch's words
        ctx.check_numel(n)


def _broadcast_checked(run):
    """run() that first checks the size of the broadcast result (_check_broadcast)."""

    def checked(ctx, ins, p):
        _check_broadcast(ctx, ins)
        return run(ctx, ins, p)

    return checked


def _shapes_differ(ins):
    """Whether the tensors among `ins` have more than one shape (a loop, not a set: this runs
    before every binary op, and a set of shapes cost a good part of an op on small tensors)."""
    shape = None
    for t in ins:
        if t.__class__ is eg.Tensor or isinstance(t, eg.Tensor):
            if shape is None:
                shape = t._data.shape
            elif t._data.shape != shape:
                return True
    return False


def _matmul_checked(ctx, ins, p):
    """matmul, its result's size checked first (a [N, 1] @ [1, N] is N * N elements)."""
    a, b = ins[0]._data.shape, ins[1]._data.shape
    if len(a) >= 2 and len(b) >= 2:
        try:
            batch = np.broadcast_shapes(a[:-2], b[:-2])
        except ValueError:
            batch = ()  # matmul says why
        ctx.check_numel(math.prod(batch) * a[-2] * b[-1])
    return eg.matmul(ins[0], ins[1])


def _binary_run(fn):
    def run(ctx, ins, p):
        a, b = ins
        if b is None:  # `other` left unconnected: the number `scalar`
            return fn(a, p["scalar"])
        _check_broadcast(ctx, ins)
        return fn(a, b)

    return run


def _binary_code(symbol):
    def code(lib, args, p):
        other = args[1] if len(args) > 1 else repr(p["scalar"])
        return f"{args[0]} {symbol} {other}"

    return code


for _name, _sym, _fn, _doc in (
    ("add", "+", eg.add, "input + other, broadcasting"),
    ("sub", "-", eg.sub, "input - other, broadcasting"),
    ("mul", "*", eg.mul, "input * other, elementwise, broadcasting"),
    ("div", "/", eg.div, "input / other, true division, broadcasting"),
    ("pow", "**", eg.pow, "input ** other, broadcasting"),
):
    register(
        OpSpec(
            _name,
            "arithmetic",
            _doc,
            SCALAR_OTHER,
            run=_binary_run(_fn),
            code=_binary_code(_sym),
            params=(SCALAR,),
            extra={"scalar_for": "other"},
        )
    )

for _name, _fn in (("maximum", eg.maximum), ("minimum", eg.minimum)):
    register(
        OpSpec(
            _name,
            "arithmetic",
            f"elementwise {_name} of input and other",
            PAIR,
            run=_broadcast_checked(_on_inputs(_fn)),
            code=_call(_name),
        )
    )

register(
    OpSpec(
        "neg",
        "arithmetic",
        "-input",
        INPUT,
        run=lambda ctx, ins, p: -ins[0],
        code=lambda lib, args, p: f"-{args[0]}",
    )
)

# -- elementwise functions -------------------------------------------------------------------
for _name, _doc in (
    ("exp", "e ** input"),
    ("log", "natural logarithm"),
    ("sqrt", "square root"),
    ("abs", "absolute value"),
    ("sin", "sine"),
    ("cos", "cosine"),
    ("reciprocal", "1 / input"),
):
    _single_input(_name, "elementwise", _doc)

register(
    OpSpec(
        "clamp",
        "elementwise",
        "limits input to [min, max]",
        INPUT,
        run=lambda ctx, ins, p: eg.clamp(ins[0], p.get("min"), p.get("max")),
        code=_call("clamp", ("min", "max"), {"min": None, "max": None}),
        params=(
            Param("min", "float", None, nullable=True),
            Param("max", "float", 1.0, nullable=True),
        ),
    )
)

# -- activations ------------------------------------------------------------------------------
for _name, _doc in (
    ("relu", "max(0, input)"),
    ("sigmoid", "1 / (1 + exp(-input))"),
    ("tanh", "hyperbolic tangent"),
):
    _single_input(_name, "activations", _doc)

register(
    OpSpec(
        "leaky_relu",
        "activations",
        "input where positive, negative_slope * input elsewhere",
        INPUT,
        run=lambda ctx, ins, p: F.leaky_relu(ins[0], p.get("negative_slope", 0.01)),
        code=_call("leaky_relu", ("negative_slope",), {"negative_slope": 0.01}, functional=True),
        params=(Param("negative_slope", "float", 0.01),),
    )
)
for _name, _doc in (
    ("softmax", "exp(input) normalised to sum to 1 along dim"),
    ("log_softmax", "log of softmax, computed stably"),
):
    register(
        OpSpec(
            _name,
            "activations",
            _doc,
            INPUT,
            run=_on_input(getattr(eg, _name), lambda p: (p.get("dim", -1),)),
            code=_call(_name, ("dim",), {}),
            params=(Param("dim", "int", -1, doc="the dim that sums to 1"),),
        )
    )

# -- comparisons and control flow ---------------------------------------------------------------
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
            PAIR,
            run=_broadcast_checked(_on_inputs(getattr(eg, _name))),
            code=_operator(_sym),
        )
    )

register(
    OpSpec(
        "where",
        "logic",
        "input where condition is true, other elsewhere",
        (Port("condition"), Port("input"), Port("other")),
        run=_broadcast_checked(lambda ctx, ins, p: eg.where(ins[0], ins[1], ins[2])),
        code=_call("where"),
    )
)
register(
    OpSpec(
        "if",
        "logic",
        "runs only the branch the condition picks (a one-element tensor)",
        (Port("condition"), Port("then"), Port("else")),
        run=lambda ctx, ins, p: ins[1] if ins[1] is not None else ins[2],  # the executor picks
        code=lambda lib, args, p: f"{args[1]} if {args[0]} else {args[2]}",
        branches=True,
        extra={"composite": True},
    )
)

# -- reductions -----------------------------------------------------------------------------------
DIM = Param("dim", "dims", None, nullable=True, doc="dim or dims to reduce; empty for all")
KEEPDIM = Param("keepdim", "bool", False, doc="keep reduced dims with size 1")


def _dims(p):
    d = p.get("dim")
    return tuple(d) if isinstance(d, list) else d


for _name, _doc in (("sum", "sum of elements"), ("mean", "mean of elements")):
    register(
        OpSpec(
            _name,
            "reductions",
            _doc,
            INPUT,
            run=_on_input(getattr(eg, _name), lambda p: (_dims(p), p.get("keepdim", False))),
            code=_call(_name, ("dim", "keepdim"), {"dim": None, "keepdim": False}),
            params=(DIM, KEEPDIM),
        )
    )


def _extremum_run(fn_full, fn_dim):
    def run(ctx, ins, p):
        d = p.get("dim")
        if d is None or d == []:
            return fn_full(ins[0])
        return fn_dim(ins[0], d if isinstance(d, int) else tuple(d), p.get("keepdim", False))

    return run


def _extremum_code(name):
    def code(lib, args, p):
        d = p.get("dim")
        if d is None or d == []:
            return f"{lib}.{name}({args[0]})"
        kd = ", keepdim=True" if p.get("keepdim") else ""
        if isinstance(d, int):
            return f"{lib}.{name}({args[0]}, dim={d}{kd}).values"
        return f"{lib}.a{name}({args[0]}, dim={tuple(d)!r}{kd})"

    return code


for _name, _reduce, _by_dims, _doc in (
    ("max", eg.max, eg.amax, "largest element (along dim, if given)"),
    ("min", eg.min, eg.amin, "smallest element (along dim, if given)"),
):
    register(
        OpSpec(
            _name,
            "reductions",
            _doc,
            INPUT,
            # one dim: the values of max(dim=); several: amax/amin, as PyTorch spells them
            run=_extremum_run(
                _reduce,
                lambda x, d, k, f=_reduce, g=_by_dims: (
                    f(x, d, k).values if isinstance(d, int) else g(x, d, k)
                ),
            ),
            code=_extremum_code(_name),
            params=(DIM, KEEPDIM),
        )
    )
for _name, _doc in (("var", "variance"), ("std", "standard deviation")):
    register(
        OpSpec(
            _name,
            "reductions",
            f"{_doc} (Bessel-corrected by default)",
            INPUT,
            run=_on_input(
                getattr(eg, _name),
                lambda p: (_dims(p),),
                lambda p: {
                    "keepdim": p.get("keepdim", False),
                    "correction": p.get("correction", 1),
                },
            ),
            code=_call(
                _name,
                ("dim", "correction", "keepdim"),
                {"dim": None, "correction": 1, "keepdim": False},
            ),
            params=(DIM, Param("correction", "int", 1, min=0), KEEPDIM),
        )
    )

# -- linear algebra and shapes ---------------------------------------------------------------------
register(
    OpSpec(
        "matmul",
        "linear algebra",
        "matrix product, with PyTorch's rules for 1-D and batched inputs",
        PAIR,
        run=_matmul_checked,
        code=_operator("@"),
    )
)
register(
    OpSpec(
        "transpose",
        "shape",
        "swaps two dims",
        INPUT,
        run=lambda ctx, ins, p: eg.transpose(ins[0], p.get("dim0", 0), p.get("dim1", 1)),
        code=lambda lib, args, p: (
            f"{lib}.transpose({args[0]}, {p.get('dim0', 0)}, {p.get('dim1', 1)})"
        ),
        params=(Param("dim0", "int", 0), Param("dim1", "int", 1)),
    )
)
register(
    OpSpec(
        "reshape",
        "shape",
        "the same elements in a new shape (-1 once for the rest)",
        INPUT,
        run=lambda ctx, ins, p: eg.reshape(ins[0], tuple(p.get("shape", [-1]))),
        code=lambda lib, args, p: f"{lib}.reshape({args[0]}, {tuple(p.get('shape', [-1]))!r})",
        params=(Param("shape", "shape", [-1], doc="the new shape; -1 is inferred"),),
    )
)
register(
    OpSpec(
        "flatten",
        "shape",
        "merges dims start_dim..end_dim into one",
        INPUT,
        run=lambda ctx, ins, p: eg.flatten(ins[0], p.get("start_dim", 0), p.get("end_dim", -1)),
        code=_call("flatten", ("start_dim", "end_dim"), {"start_dim": 0, "end_dim": -1}),
        params=(Param("start_dim", "int", 0), Param("end_dim", "int", -1)),
    )
)
register(
    OpSpec(
        "unsqueeze",
        "shape",
        "inserts a dim of size 1",
        INPUT,
        run=lambda ctx, ins, p: eg.unsqueeze(ins[0], p.get("dim", 0)),
        code=lambda lib, args, p: f"{lib}.unsqueeze({args[0]}, {p.get('dim', 0)})",
        params=(Param("dim", "int", 0),),
    )
)
register(
    OpSpec(
        "squeeze",
        "shape",
        "removes dims of size 1 (all, or just dim)",
        INPUT,
        run=lambda ctx, ins, p: eg.squeeze(ins[0], p.get("dim")),
        code=_call("squeeze", ("dim",), {"dim": None}),
        params=(Param("dim", "int", None, nullable=True),),
    )
)
register(
    OpSpec(
        "permute",
        "shape",
        "reorders the dims",
        INPUT,
        run=lambda ctx, ins, p: eg.permute(ins[0], tuple(p.get("dims", []))),
        code=lambda lib, args, p: f"{lib}.permute({args[0]}, {tuple(p.get('dims', []))!r})",
        params=(Param("dims", "shape", [1, 0], doc="the new order of the dims"),),
    )
)


def _joined_checked(fn):
    """cat or stack, the size of the result checked before it is allocated: many inputs within
    the per-tensor limit can join into one far over it (the sum of their sizes is the result's
    size whatever the dim)."""

    def run(ctx, ins, p):
        tensors = ins[0]
        ctx.check_numel(sum(t._data.size for t in tensors if isinstance(t, eg.Tensor)))
        return fn(tensors, p.get("dim", 0))

    return run


for _name, _doc in (
    ("cat", "joins tensors along an existing dim"),
    ("stack", "joins tensors along a new dim"),
):
    register(
        OpSpec(
            _name,
            "shape",
            _doc,
            (Port("tensors", variadic=True),),
            run=_joined_checked(getattr(eg, _name)),
            code=lambda lib, args, p, n=_name: (
                f"{lib}.{n}([{', '.join(args)}], dim={p.get('dim', 0)})"
            ),
            params=(Param("dim", "int", 0),),
        )
    )
register(
    OpSpec(
        "detach",
        "autograd",
        "the same values, cut from the graph (no gradient flows back)",
        INPUT,
        run=lambda ctx, ins, p: ins[0].detach(),
        code=lambda lib, args, p: f"{args[0]}.detach()",
    )
)


# -- neural network ----------------------------------------------------------------------------
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
        INPUT,
        run=linear_run,
        code=None,  # written by the exporter (it declares the layer)
        extra={"composite": True},
        params=(
            Param("out_features", "int", 1, min=1, max=65536),
            Param("bias", "bool", True),
            Param("seed", "int", 0, min=0, max=2**31 - 1, doc="seed of PyTorch's default init"),
            Param("weight", "tensor", None, nullable=True, doc="trained values (else initialised)"),
            Param("bias_value", "tensor", None, nullable=True, doc="trained bias values"),
        ),
    )
)

for _name, _doc in (
    ("mse_loss", "mean squared error"),
    ("l1_loss", "mean absolute error"),
    ("binary_cross_entropy", "binary cross-entropy of probabilities in [0, 1]"),
    ("cross_entropy", "cross-entropy of logits (N, C) against class indices (N,)"),
):
    register(
        OpSpec(
            _name,
            "losses",
            _doc,
            (Port("input"), Port("target")),
            run=_on_inputs(getattr(F, _name), lambda p: {"reduction": p.get("reduction", "mean")}),
            code=_call(_name, ("reduction",), {"reduction": "mean"}, functional=True),
            params=(Param("reduction", "choice", "mean", choices=REDUCTIONS),),
            # l1_loss and cross_entropy are several engine ops (PyTorch's are too)
            extra={"composite": _name in ("l1_loss", "cross_entropy")},
        )
    )


# -- data -------------------------------------------------------------------------------------
def dataset_run(ctx, ins, p):
    """The features; the labels ride along as `dataset_labels`, which a `labels` node wired to
    this one outputs (one output per node keeps the trace format simple)."""
    features, labels = datasets.load(p, ctx.limits.max_elements)
    ctx.check_numel(features.size)
    x = eg.tensor(features, device=ctx.device)
    if p.get("labels") == "classes":
        x.dataset_labels = eg.tensor(labels, dtype=eg.int64, device=ctx.device)
    else:
        x.dataset_labels = eg.tensor(labels[:, None], device=ctx.device)
    return x


def labels_run(ctx, ins, p):
    y = getattr(ins[0], "dataset_labels", None)
    if y is None:
        raise ValueError("labels takes the output of a dataset node: wire a dataset into it")
    return y


register(
    OpSpec(
        "dataset",
        "data",
        "points to learn from: a generated 2-D set (features (n, 2)) or a CSV; wire a labels "
        "node to it for their labels",
        (),
        run=dataset_run,
        code=None,  # written by the exporter (it copies the generator into the script)
        params=(
            Param("kind", "choice", "circle", choices=datasets.KINDS),
            Param("n", "int", 200, min=10, max=10000, doc="how many points"),
            Param("noise", "float", 0.1, min=0.0, max=1.0, doc="std of the noise added"),
            Param("seed", "int", 0, min=0, max=2**31 - 1),
            Param(
                "labels",
                "choice",
                "column",
                choices=("column", "classes"),
                doc="column: float32 (n, 1); classes: int64 (n,) for cross_entropy",
            ),
            Param(
                "csv",
                "str",
                "",
                doc="kind csv: the file's text, a header row first",
                max_length=datasets.MAX_CSV_BYTES,
            ),
            Param("features", "str", "", doc="kind csv: columns, comma-separated (all but target)"),
            Param("target", "str", "", doc="kind csv: the label column (the last)"),
        ),
        source=True,
    )
)
register(
    OpSpec(
        "labels",
        "data",
        "the labels of the dataset wired in",
        (Port("dataset", doc="a dataset node's output"),),
        run=labels_run,
        code=None,  # written by the exporter, beside its dataset
    )
)

# -- in place (and getitem, the view a write can go through): their own module ----------------
from . import catalog_inplace  # noqa: E402, F401
