"""Layer nodes in exported code, written as a PyTorch user writes them: the layer declared once
(`conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)`), its weights set, then called
(`h = conv1(x)`). What to write comes from the op's LayerForm (registry.py): the class and its
constructor's arguments, read off the node's input and params; the state params it stores.

Weights start from the engine's seeded init: in engine Python, Linear and Conv2d by
`conv1.reset_parameters(eg.Generator().manual_seed(S))`; else by `init_like_engine(conv1,
seed=S)`, the script's helper (INIT_HELPER: `torch.manual_seed(S)`, then PyTorch's own
`reset_parameters()`; the engine's generator is PyTorch's), so both scripts start from the same
numbers.
Stored state (trained weights, batch_norm's running statistics) is copied in under `no_grad`.
A layer whose `mode` resolves to eval() in a run (`auto`, `eval`: an exported script is a
forward and backward run) gets `layer.eval()`.
"""

import inspect

import numpy as np

import engine as eg

from ..op_context import OpContext
from ..ops.layer_kit import attribute, constructor_signature, training_mode
from ..ops.sources import as_floats

SEEDED_RESET = ("Linear", "Conv2d")  # engine init by reset_parameters(generator)
# the script's helper giving a layer its starting values as the graph's run draws them: each
# layer node has a seed of its own, and PyTorch's default init drawn right after
# manual_seed(seed) is the engine's (its generator is PyTorch's), so eg and torch scripts get
# the same numbers; `{lib}` is eg or torch. MultiheadAttention is drawn in the node's order
# (ops/attention_layers.py): q, k, v first, then out_proj, which PyTorch's constructor draws
# first.
INIT_HELPER = '''
def init_like_engine(layer, seed):
    """The layer's starting values as Wiregrad draws them: PyTorch's default init, drawn right
    after {lib}.manual_seed(seed) (each layer of the graph has a seed of its own)."""
    {lib}.manual_seed(seed)
    layer.reset_parameters()
'''
INIT_HELPER_MHA = '''
def init_like_engine(layer, seed):
    """The layer's starting values as Wiregrad draws them: PyTorch's default init, drawn right
    after {lib}.manual_seed(seed) (each layer of the graph has a seed of its own)."""
    {lib}.manual_seed(seed)
    if isinstance(layer, nn.MultiheadAttention):  # q, k, v first, then out_proj
        nn.init.xavier_uniform_(layer.in_proj_weight)
        layer.out_proj.reset_parameters()
        for b in (layer.in_proj_bias, layer.out_proj.bias):
            if b is not None:
                nn.init.zeros_(b)
    else:
        layer.reset_parameters()
'''


def init_helper(lib, classes=()):
    """The helper's source for a script importing the engine as `eg` or PyTorch as `torch`
    whose helper seeds layers of `classes` ("Linear", "MultiheadAttention", ...)."""
    text = INIT_HELPER_MHA if "MultiheadAttention" in classes else INIT_HELPER
    return text.replace("{lib}", lib)


def needs_helper(lib, spec, params, x):
    """Whether the layer's declaration calls init_like_engine in a script of `lib`."""
    form = spec.layer
    cls = form.cls(x, params)
    if cls in SEEDED_RESET:
        return lib != "eg"
    return spec.param("seed") is not None and bool(form.state)


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


def declaration(lib, spec, params, x, name):
    """The lines that declare layer `name` of node params `params` on input stand-in `x`:
    constructor, initial weights, stored state, eval()."""
    form = spec.layer
    cls = form.cls(x, params)
    dtype = str(x.dtype).split(".")[-1] if x.dtype.is_floating_point else "float32"
    lines = [f"{name} = {constructor(lib, cls, form.args(x, params), dtype)}"]
    seed = params.get("seed") or 0
    copies = [param for param, _ in form.state if params.get(param) is not None]
    if cls in SEEDED_RESET and lib == "eg":
        lines.append(f"{name}.reset_parameters(eg.Generator().manual_seed({seed}))")
    elif needs_helper(lib, spec, params, x):
        lines.append(f"init_like_engine({name}, seed={seed})")
    module = made(spec, params, x)
    dt = "" if dtype == "float32" else f", dtype={lib}.{dtype}"
    stored = []
    keys = dict(form.state)
    for param in copies:
        t = attribute(module, keys[param]) if module is not None else None
        if t is None:
            continue
        if params.get(param) is not None:
            values = as_floats(params[param])  # as the document holds them
        else:
            values = _shortest(t.detach().numpy())
        stored.append(f"    {name}.{keys[param]}.copy_({lib}.tensor({values!r}{dt}))")
    if stored:
        lines.append(f"with {lib}.no_grad():  # the layer's values stored in the graph")
        lines += stored
    if form.modes and not training_mode(None, params):
        lines.append(f"{name}.eval()  # as in a forward or backward run (its mode: auto)")
    return lines


def _shortest(a):
    """Nested lists of the values of `a`, a float32 value each written as its shortest decimal
    (0.1, not 0.10000000149011612: the same float32 when read back)."""
    if a.dtype == np.float32:
        return np.vectorize(lambda v: float(str(v)), otypes=[object])(a).tolist()
    return a.tolist()


def call(spec, params, x, layer, arg):
    """The expression calling declared layer `layer` on variable `arg`."""
    plain = "{layer}({x})[0]" if spec.layer.first_of_tuple else "{layer}({x})"
    return CALLS.get(spec.layer.cls(x, params), plain).format(layer=layer, x=arg)


def parameter_names(spec, params, x):
    """The names of the layer's parameters ("weight", "out_proj.bias"), as the run names its
    leaves (`<node>.<name>`)."""
    module = made(spec, params, x)
    return [n for n, _ in module.named_parameters()] if module is not None else []
