"""Layer nodes in exported code, written as a PyTorch user writes them: the layer declared once
(`conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)`), its weights set, then called
(`h = conv1(x)`). What to write comes from the op's LayerForm (registry.py): the class and its
constructor's arguments, read off the node's input and params; the state params it stores.

Weights start from the node's seed as a person seeds a layer: `torch.manual_seed(S)` (engine
Python: `eg.manual_seed(S)`) on the line before the layer is made. A layer node draws its init
from a fresh `Generator().manual_seed(S)` (ops/layer_kit.py), and the engine's generator is
PyTorch's, so PyTorch's constructor right after the seed gives the node's values (Linear,
Conv2d, Embedding). MultiheadAttention is drawn in the node's order (ops/attention_layers.py:
q, k, v first, then out_proj, which PyTorch's constructor draws first): the seed follows its
constructor, then the three init lines in that order (SeedLines). A layer already made (a
module instance's own seed, export/classes.py) is seeded again by the seed and
`layer.reset_parameters()`. Consecutive seeds cannot share one `manual_seed`: a layer's draws
move the stream on, and no seed's stream starts where another's left off.
Stored state (trained weights, batch_norm's running statistics) is copied in under `no_grad`.
A layer whose `mode` resolves to eval() in a run (`auto`, `eval`: an exported script is a
forward and backward run) gets `layer.eval()`.
"""

import inspect

import engine as eg

from ..op_context import OpContext
from ..ops.layer_kit import attribute, constructor_signature, training_mode
from ..ops.sources import as_floats

REORDERED = "MultiheadAttention"  # drawn in another order than its constructor draws
MHA_NOTE = "  # drawn as Wiregrad draws them: q, k, v first, then out_proj"


def draws_init(spec):
    """Whether the layer op's init draws from its seed (not dropout's masks, not a norm's
    ones and zeros)."""
    return spec.layer is not None and spec.param("seed") is not None and bool(spec.layer.state)


def seed_lines(lib, cls, name, seed, made, bias=True):
    """The lines that give layer `name` (of class `cls`) the values seed `seed` draws: before
    its constructor (`made` False: the seed), or once it is made (the seed and its init)."""
    seed_line = f"{lib}.manual_seed({seed})"
    if cls == REORDERED:
        lines = [
            seed_line + MHA_NOTE,
            f"nn.init.xavier_uniform_({name}.in_proj_weight)",
            f"{name}.out_proj.reset_parameters()",
        ]
        return lines + ([f"nn.init.zeros_({name}.out_proj.bias)"] if bias else [])
    return [seed_line, f"{name}.reset_parameters()"] if made else [seed_line]


# a layer's call on its input `x` where it is not `layer(x)`
CALLS = {"MultiheadAttention": "{layer}({x}, {x}, {x}, need_weights=False)[0]"}
_EMPTY = inspect.Parameter.empty


class _Grab(OpContext):
    """Keeps the module the node's run makes (a dry run at the default limits)."""

    layer = None

    def module(self, key, factory):
        self.layer = factory()
        return self.layer


def made(spec, params, x):
    """The engine module node `spec`/`params` makes on input `x` (a stand-in), as a run makes
    it: seeded, its stored state loaded; None if the node fails on `x`."""
    ctx = _Grab()
    try:
        with eg.no_grad():
            spec.run(ctx, [x], params)
    except Exception:
        return None
    return ctx.layer


def constructor(lib, cls, args, dtype="float32"):
    """`nn.Conv2d(1, 8, kernel_size=3, padding=1)`: the required arguments by position, the
    others by name where they differ from the class's defaults (PyTorch's and the engine's
    signatures are the same)."""
    sig = constructor_signature(cls)
    names = [n for n in sig.parameters if n != "self"]
    parts, positional = [], True
    for i, (k, v) in enumerate(args.items()):
        default = sig.parameters[k].default
        v = tuple(v) if isinstance(v, list) else v
        if positional and default is _EMPTY and i < len(names) and names[i] == k:
            parts.append(repr(list(v) if isinstance(v, tuple) else v))
            continue
        positional = False
        if default is not _EMPTY and default == v:
            continue
        parts.append(f"{k}={list(v) if isinstance(v, tuple) else v!r}")
    if dtype != "float32":
        parts.append(f"dtype={lib}.{dtype}")
    return f"nn.{cls}({', '.join(parts)})"


def declaration(lib, spec, params, x, name, sidecar=None):
    """The lines that declare layer `name` of node params `params` on input stand-in `x`:
    seed, constructor, stored state (from `sidecar`'s file where it takes them), eval()."""
    form = spec.layer
    cls = form.cls(x, params)
    dtype = str(x.dtype).split(".")[-1] if x.dtype.is_floating_point else "float32"
    made_line = f"{name} = {constructor(lib, cls, form.args(x, params), dtype)}"
    if not draws_init(spec):
        lines = [made_line]
    elif cls == REORDERED:
        bias = bool(params.get("bias", True))
        lines = [made_line, *seed_lines(lib, cls, name, params.get("seed") or 0, True, bias)]
    else:
        lines = [*seed_lines(lib, cls, name, params.get("seed") or 0, False), made_line]
    return lines + after_made(lib, spec, params, x, name, sidecar)


def after_made(lib, spec, params, x, name, sidecar=None):
    """The lines after layer `name` is made and seeded: its stored state (a literal, or the
    tensor of `sidecar`'s file: export/sidecar.py), eval()."""
    form = spec.layer
    dtype = str(x.dtype).split(".")[-1] if x.dtype.is_floating_point else "float32"
    lines = []
    copies = [param for param, _ in form.state if params.get(param) is not None]
    module = made(spec, params, x) if copies else None
    dt = "" if dtype == "float32" else f", dtype={lib}.{dtype}"
    stored = []
    keys = dict(form.state)
    for param in copies:
        t = attribute(module, keys[param]) if module is not None else None
        if t is None:
            continue
        values = as_floats(params[param])  # as the document holds them
        code = sidecar.ref(f"{name}.{keys[param]}", values, dtype) if sidecar else None
        stored.append(f"    {name}.{keys[param]}.copy_({code or f'{lib}.tensor({values!r}{dt})'})")
    if stored:
        lines.append(f"with {lib}.no_grad():  # the layer's values stored in the graph")
        lines += stored
    if form.modes and not training_mode(None, params):
        lines.append(f"{name}.eval()  # as in a forward or backward run (its mode: auto)")
    return lines


def call(spec, params, x, layer, arg):
    """The expression calling declared layer `layer` on variable `arg`."""
    plain = "{layer}({x})[0]" if spec.layer.first_of_tuple else "{layer}({x})"
    return CALLS.get(spec.layer.cls(x, params), plain).format(layer=layer, x=arg)


def parameter_names(spec, params, x):
    """The names of the layer's parameters ("weight", "out_proj.bias"), as the run names its
    leaves (`<node>.<name>`)."""
    module = made(spec, params, x)
    return [n for n, _ in module.named_parameters()] if module is not None else []
