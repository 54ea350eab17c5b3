"""The module library: ready module definitions (modules.py) built from constructor arguments,
as a PyTorch user writes `nn.TransformerEncoderLayer(d_model=16, nhead=2)`.

Each entry is a class name, a one-line doc, the PyTorch it mirrors and its arguments (registry
`Param`s, so the page shows them with the controls of op params); `build(name, values)` makes
the definition: a dict in the document's `modules` format, made of registry ops only, with one
input `x` and one output `y`. The page adds it to the document's modules and places an
instance (frontend/src/store/library.ts); nothing here is kept on the server.

The `in_*` arguments say which input the module is made for: its input node checks the
input's last dims (module_input's `shape`: an input of another size is refused at the port, as
PyTorch's layer would refuse it), its doc says it, and they shape what depends on them: a
residual block's shortcut, a transformer block's output width. (The layers inside read their
sizes off their inputs, as every layer node does.) Each layer inside has a seed of
its own (1, 2, ...), so two layers of one definition start apart, and an instance's seed moves
them all (modules.py).

Bad arguments raise `LibraryArgsError` with a message per argument, in PyTorch's words where
PyTorch has them ("embed_dim must be divisible by num_heads").
"""

from collections.abc import Callable
from dataclasses import dataclass

from ..registry import Param
from ..registry import get as get_op
from .modules import INPUT_OP, OUTPUT_OP
from .validate import param_problem  # the op params' own checks and words

IN, OUT = "x", "y"  # the ports of every entry: forward(x) -> y
STEP_X, STEP_Y = 240, 160  # where inner nodes stand when the module is opened


class LibraryArgsError(ValueError):
    """Arguments an entry cannot be built from; `.errors` maps each argument to its problem."""

    def __init__(self, name, errors):
        self.name, self.errors = name, errors
        super().__init__(f"{name}: " + "; ".join(errors.values()))


@dataclass(frozen=True)
class Entry:
    name: str  # the class name the definition gets (the page may number it: ConvBlock2)
    doc: str
    torch: str  # the PyTorch it computes, as code
    args: tuple[Param, ...]
    build: Callable  # build(values with defaults filled in) -> (a _Graph, a one-line summary)
    check: Callable | None = None  # check(values) -> {argument: problem} beyond each one's range

    def describe(self):
        return {
            "name": self.name,
            "doc": self.doc,
            "torch": self.torch,
            "args": [a.describe() for a in self.args],
        }


class _Graph:
    """A definition's nodes and edges as they are added, each layer with the next seed."""

    def __init__(self):
        self.nodes, self.edges, self.seed = [], [], 0

    def add(self, node_id, op, col, row=0, **params):
        spec = get_op(op)
        if spec is None:  # the library names registry ops only: a typo here is a bug
            raise ValueError(f"the module library names an op the registry has not: {op!r}")
        if spec.param("seed") is not None:
            self.seed += 1
            params["seed"] = self.seed
        position = {"x": col * STEP_X, "y": row * STEP_Y}
        self.nodes.append({"id": node_id, "op": op, "params": params, "position": position})
        return node_id

    def wire(self, source, target, port="input"):
        edge_id = f"{source}-{target}" + ("" if port == "input" else f"-{port}")
        ends = {"source": source, "sourcePort": "out", "target": target, "targetPort": port}
        self.edges.append({"id": edge_id, **ends})

    def chain(self, *ids):
        for a, b in zip(ids, ids[1:], strict=False):
            self.wire(a, b)


def _int(name, default, lo=1, hi=65536, doc=""):
    return Param(name, "int", default, min=lo, max=hi, doc=doc)


ACTIVATIONS = ("relu", "gelu", "tanh", "sigmoid", "leaky_relu")
_TORCH_ACT = {  # the nn class of each activation op, for a definition's doc
    "relu": "ReLU",
    "gelu": "GELU",
    "tanh": "Tanh",
    "sigmoid": "Sigmoid",
    "leaky_relu": "LeakyReLU",
}


def _activation(doc="the activation after the layer"):
    return Param("activation", "choice", "relu", choices=ACTIVATIONS, doc=doc)


def _dropout_arg(doc):
    return Param("dropout", "float", 0.0, min=0.0, max=1.0, doc=doc)


def _dropout_check(v):
    p = v.get("dropout", 0.0)
    if isinstance(p, (int, float)) and not isinstance(p, bool) and not 0.0 <= p <= 1.0:
        return {"dropout": f"dropout probability has to be between 0 and 1, but got {p}"}
    return {}


# -- LinearAct ---------------------------------------------------------------------------------
def _linear_act(v):
    g = _Graph()
    g.add(IN, INPUT_OP, 0, shape=[v["in_features"]])
    g.add("linear", "linear", 1, out_features=v["out_features"], bias=v["bias"])
    g.add("activation", v["activation"], 2)
    g.add(OUT, OUTPUT_OP, 3)
    g.chain(IN, "linear", "activation", OUT)
    summary = f"Linear({v['in_features']}, {v['out_features']}) then {_TORCH_ACT[v['activation']]}"
    return g, summary + f": input (*, {v['in_features']}) → (*, {v['out_features']})"


# -- ConvBlock ---------------------------------------------------------------------------------
def _conv_padding(v):
    return (v["kernel_size"] - 1) // 2 if v["padding"] is None else v["padding"]


def _conv_block(v):
    g = _Graph()
    g.add(IN, INPUT_OP, 0, shape=[v["in_channels"], -1, -1])
    conv = dict(out_channels=v["out_channels"], kernel_size=v["kernel_size"], stride=v["stride"])
    g.add("conv", "conv2d", 1, padding=_conv_padding(v), bias=v["bias"], **conv)
    ids = [IN, "conv"]
    parts = [f"Conv2d({v['in_channels']}, {v['out_channels']}, {v['kernel_size']})"]
    if v["norm"] == "batch":
        ids.append(g.add("norm", "batch_norm", len(ids)))
        parts.append(f"BatchNorm2d({v['out_channels']})")
    ids.append(g.add("relu", "relu", len(ids)))
    parts.append("ReLU")
    if v["pool"] != "none":
        ids.append(g.add("pool", f"{v['pool']}_pool2d", len(ids), kernel_size=v["pool_size"]))
        parts.append(f"{v['pool'].capitalize()}Pool2d({v['pool_size']})")
    ids.append(g.add(OUT, OUTPUT_OP, len(ids)))
    g.chain(*ids)
    return g, " → ".join(parts) + f": input (N, {v['in_channels']}, H, W)"


# -- ResidualBlock -----------------------------------------------------------------------------
def _residual_block(v):
    """torchvision's BasicBlock: two 3x3 convs (no bias) each with its batch norm, plus the
    input, then relu; a 1x1 conv and a batch norm carry the input when its size changes."""
    g = _Graph()
    out, stride = v["out_channels"], v["stride"]
    g.add(IN, INPUT_OP, 0, shape=[v["in_channels"], -1, -1])
    conv3x3 = dict(out_channels=out, kernel_size=3, padding=1, bias=False)
    g.add("conv1", "conv2d", 1, stride=stride, **conv3x3)
    g.add("bn1", "batch_norm", 2)
    g.add("relu1", "relu", 3)
    g.add("conv2", "conv2d", 4, stride=1, **conv3x3)
    g.add("bn2", "batch_norm", 5)
    g.add("add", "add", 6)
    g.add("relu", "relu", 7)
    g.add(OUT, OUTPUT_OP, 8)
    g.chain(IN, "conv1", "bn1", "relu1", "conv2", "bn2", "add", "relu", OUT)
    shortcut = "the input"
    if stride != 1 or v["in_channels"] != out:
        g.add(
            "downsample_conv", "conv2d", 2, 1,
            out_channels=out, kernel_size=1, stride=stride, padding=0, bias=False,
        )  # fmt: skip
        g.add("downsample_bn", "batch_norm", 3, 1)
        g.chain(IN, "downsample_conv", "downsample_bn")
        g.wire("downsample_bn", "add", "other")
        shortcut = f"Conv2d({v['in_channels']}, {out}, 1, stride={stride}) → BatchNorm2d"
    else:
        g.wire(IN, "add", "other")
    text = f"relu(bn2(conv2(relu(bn1(conv1(x))))) + {shortcut})"
    return g, text + f": input (N, {v['in_channels']}, H, W)"


# -- MultiHeadAttention ------------------------------------------------------------------------
def _heads_check(dim, heads, dim_word, heads_word):
    """The argument `heads` must divide `dim`; said as PyTorch says it (`dim_word`)."""

    def check(v):
        d, h = v.get(dim), v.get(heads)
        if isinstance(d, int) and isinstance(h, int) and h > 0 and d % h:
            where = f"{dim} {d}, {heads} {h}"
            return {heads: f"{dim_word} must be divisible by {heads_word} ({where})"}
        return {}

    return check


def _attention(v):
    g = _Graph()
    g.add(IN, INPUT_OP, 0, shape=[v["embed_dim"]])
    g.add("self_attn", "multi_head_attention", 1, num_heads=v["num_heads"], bias=v["bias"])
    g.add(OUT, OUTPUT_OP, 2)
    g.chain(IN, "self_attn", OUT)
    e = v["embed_dim"]
    return g, f"self-attention, {v['num_heads']} heads: input (N, L, {e}) → (N, L, {e})"


# -- TransformerEncoderBlock -------------------------------------------------------------------
def _encoder_block(v):
    """nn.TransformerEncoderLayer(batch_first=True): self-attention and a feed-forward net, each
    added to its input; layer norms after each (post-norm) or before (norm_first)."""
    g = _Graph()
    d, eps, p = v["d_model"], v["layer_norm_eps"], v["dropout"]
    g.add(IN, INPUT_OP, 0, shape=[d])
    col = 1

    def next_col():
        nonlocal col
        col += 1
        return col - 1

    def dropped(src, name):
        """src, or a dropout after it when dropout > 0 (PyTorch's dropout1/dropout2/dropout)."""
        if not p:
            return src
        g.add(name, "dropout", next_col(), 1, p=p)
        g.wire(src, name)
        return name

    def norm(name, src):
        g.add(name, "layer_norm", next_col(), eps=eps)
        g.wire(src, name)
        return name

    def attention_block(src):
        g.add("self_attn", "multi_head_attention", next_col(), num_heads=v["nhead"])
        g.wire(src, "self_attn")
        return dropped("self_attn", "dropout1")

    def ff_block(src):
        g.add("linear1", "linear", next_col(), out_features=v["dim_feedforward"])
        g.add("activation", v["activation"], next_col())
        g.chain(src, "linear1", "activation")
        g.add("linear2", "linear", next_col(), out_features=d)
        g.wire(dropped("activation", "dropout"), "linear2")
        return dropped("linear2", "dropout2")

    def residual(name, skip, branch):
        g.add(name, "add", next_col())
        g.wire(skip, name)
        g.wire(branch, name, "other")
        return name

    if v["norm_first"]:
        x = residual("add1", IN, attention_block(norm("norm1", IN)))
        x = residual("add2", x, ff_block(norm("norm2", x)))
    else:
        x = norm("norm1", residual("add1", IN, attention_block(IN)))
        x = norm("norm2", residual("add2", x, ff_block(x)))
    g.add(OUT, OUTPUT_OP, next_col())
    g.wire(x, OUT)
    order = "pre-norm" if v["norm_first"] else "post-norm"
    text = (
        f"self-attention ({v['nhead']} heads) and a feed-forward net ({d} → "
        f"{v['dim_feedforward']} → {d}, {v['activation']}), each added to its input, {order}: "
        f"input (N, L, {d})"
    )
    return g, text


# -- MLPHead -----------------------------------------------------------------------------------
def _hidden_check(v):
    h = v.get("hidden_features")
    if isinstance(h, list) and any(isinstance(n, int) and not 1 <= n <= 65536 for n in h):
        return {"hidden_features": "hidden_features must be sizes from 1 to 65536"}
    return {}


def _mlp_head(v):
    """Linear, activation (and dropout) for each hidden size, then the last Linear; flatten
    first makes (N, C, H, W) maps one row each, as nn.Flatten() does."""
    g = _Graph()
    # flattened first, the input's shape is not checked: its first linear reads C*H*W off it
    ids = [g.add(IN, INPUT_OP, 0, **({} if v["flatten"] else {"shape": [v["in_features"]]}))]
    if v["flatten"]:
        ids.append(g.add("flatten", "flatten", len(ids), start_dim=1))
    sizes = [*v["hidden_features"], v["out_features"]]
    for i, size in enumerate(sizes):
        ids.append(g.add(f"linear{i + 1}", "linear", len(ids), out_features=size))
        if i < len(sizes) - 1:
            ids.append(g.add(f"activation{i + 1}", v["activation"], len(ids)))
            if v["dropout"]:
                ids.append(g.add(f"dropout{i + 1}", "dropout", len(ids), p=v["dropout"]))
    ids.append(g.add(OUT, OUTPUT_OP, len(ids)))
    g.chain(*ids)
    widths = " → ".join(str(n) for n in [v["in_features"], *sizes])
    text = f"an MLP {widths} ({v['activation']} between)"
    if v["flatten"]:
        return g, f"flatten, then {text}: input (N, C, H, W) with C*H*W = {v['in_features']}"
    return g, f"{text}: input (N, {v['in_features']})"


ENTRIES = (
    Entry(
        "LinearAct",
        "a Linear layer and its activation",
        "nn.Sequential(nn.Linear(in_features, out_features, bias), nn.ReLU())",
        (
            _int("in_features", 4, doc="the size of the input's last dim"),
            _int("out_features", 8, doc="the size of the output's last dim"),
            Param("bias", "bool", True),
            _activation(),
        ),
        _linear_act,
    ),
    Entry(
        "ConvBlock",
        "a conv, its batch norm, relu and a pool: a CNN's step",
        "nn.Sequential(nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding), "
        "nn.BatchNorm2d(out_channels), nn.ReLU(), nn.MaxPool2d(pool_size))",
        (
            _int("in_channels", 1, hi=4096, doc="the input's channels (dim 1 of (N, C, H, W))"),
            _int("out_channels", 8, hi=4096),
            _int("kernel_size", 3, hi=64),
            _int("stride", 1, hi=64),
            Param(
                "padding",
                "int",
                None,
                min=0,
                max=64,
                nullable=True,
                doc="empty: (kernel_size - 1) // 2, which keeps H and W at stride 1",
            ),  # fmt: skip
            Param("bias", "bool", True, doc="the conv's own bias"),
            Param("norm", "choice", "batch", choices=("batch", "none")),
            Param("pool", "choice", "max", choices=("max", "avg", "none")),
            _int("pool_size", 2, hi=64, doc="the pool's kernel_size (and stride)"),
        ),
        _conv_block,
    ),
    Entry(
        "ResidualBlock",
        "two 3x3 convs with batch norms, added to the input (a ResNet's basic block)",
        "torchvision.models.resnet.BasicBlock(in_channels, out_channels, stride, downsample)",
        (
            _int("in_channels", 8, hi=4096),
            _int("out_channels", 8, hi=4096),
            _int("stride", 1, hi=64, doc="of the first conv (and the shortcut's)"),
        ),
        _residual_block,
    ),
    Entry(
        "MultiHeadAttention",
        "self-attention in num_heads heads over a sequence (N, L, embed_dim)",
        "nn.MultiheadAttention(embed_dim, num_heads, bias=bias, batch_first=True)(x, x, x)[0]",
        (
            _int("embed_dim", 8, hi=4096, doc="the size of each position's vector"),
            _int("num_heads", 2, hi=256, doc="must divide embed_dim"),
            Param("bias", "bool", True),
        ),
        _attention,
        _heads_check("embed_dim", "num_heads", "embed_dim", "num_heads"),
    ),
    Entry(
        "TransformerEncoderBlock",
        "self-attention and a feed-forward net, each with a residual add and a layer norm",
        "nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, "
        "layer_norm_eps, batch_first=True, norm_first)",
        (
            _int("d_model", 16, hi=4096, doc="the size of each position's vector"),
            _int("nhead", 2, hi=256, doc="attention heads; must divide d_model"),
            _int("dim_feedforward", 2048, doc="the feed-forward net's hidden size"),
            _dropout_arg("PyTorch's default is 0.1; 0 keeps runs the same every time"),
            Param("activation", "choice", "relu", choices=("relu", "gelu")),
            Param("layer_norm_eps", "float", 1e-5, min=0.0, max=1.0),
            Param("norm_first", "bool", False, doc="layer norms before each block (pre-norm)"),
        ),
        _encoder_block,
        # PyTorch's words: the layer's attention says it of its own embed_dim and num_heads
        _heads_check("d_model", "nhead", "embed_dim", "num_heads"),
    ),
    Entry(
        "MLPHead",
        "Linear layers with activations between: a classifier's head",
        "nn.Sequential(nn.Flatten(), nn.Linear(in_features, h), nn.ReLU(), nn.Dropout(dropout), "
        "..., nn.Linear(h, out_features))",
        (
            _int("in_features", 16, doc="the size of the input's last dim (after flatten)"),
            Param(
                "hidden_features",
                "shape",
                [32],
                doc="the hidden layers' sizes, e.g. [64, 32]; [] for one Linear",
            ),  # fmt: skip
            _int("out_features", 10, doc="e.g. the number of classes"),
            _activation("the activation between two Linear layers"),
            _dropout_arg("after each activation (in train() only)"),
            Param("flatten", "bool", False, doc="flatten (N, C, H, W) to (N, C*H*W) first"),
        ),
        _mlp_head,
        _hidden_check,
    ),
)
BY_NAME = {e.name: e for e in ENTRIES}


def describe():
    """Every entry with its arguments, for the page (GET /api/module-library)."""
    return [e.describe() for e in ENTRIES]


def arguments(name, values):
    """The entry's argument values, defaults filled in, each checked: LibraryArgsError names
    every argument that is unknown, of the wrong type or out of range. KeyError: no entry."""
    entry = BY_NAME[name]
    if not isinstance(values, dict):
        raise LibraryArgsError(name, {"": "the arguments must be an object of name: value"})
    known = {a.name: a for a in entry.args}
    errors = {}
    for key in values:
        if key not in known:
            errors[key] = f"{name}() got an unexpected keyword argument '{key}'"
    full = {a.name: a.default for a in entry.args}
    for key, arg in known.items():
        if key not in values:
            continue
        value = values[key]
        if arg.type == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON from a page may write 3 as 3.0
        if arg.type == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        why = param_problem(arg, value)
        if key == "dropout" and why and isinstance(value, (int, float)):
            why = None  # the check below says it in PyTorch's words
        if why:
            errors[key] = f"{key} {why}"
        else:
            full[key] = value
    if entry.check is not None and not errors.keys() & known.keys():
        errors.update(entry.check(full))  # on good values only: one problem is told once
    errors.update({k: m for k, m in _dropout_check(full).items() if k in known})
    if errors:
        raise LibraryArgsError(name, errors)
    return full


def build(name, values):
    """The definition of entry `name` built from `values` (argument name -> value): a dict in
    the document's modules format. KeyError: no such entry; LibraryArgsError: bad values."""
    full = arguments(name, values)
    graph, summary = BY_NAME[name].build(full)
    shown = ", ".join(f"{a.name}={full[a.name]!r}" for a in BY_NAME[name].args)
    return {
        "name": name,
        "doc": f"{name}({shown}): {summary}",
        "nodes": graph.nodes,
        "edges": graph.edges,
        "inputs": [IN],
        "outputs": [OUT],
    }
