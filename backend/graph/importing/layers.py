"""Layers read from code: `fc = nn.Linear(in, out, bias=...)` declares one, `h = fc(x)` is its
`linear` node (each layer called once: a node has its own weights), and its weights come from
`fc.reset_parameters(generator)`, `init_like_engine(fc, seed=...)` or literal values copied in
under `with eg.no_grad():`. The same lines set the seed and stored state of the other layer ops
NnLayers declares (nn.Conv2d, nn.BatchNorm2d's running_mean ...), and `layer.eval()` /
`layer.train()` their mode."""

import ast

from .. import registry
from .layer_forms import set_mode, state_param
from .problems import Unsupported
from .shared_calls import layer_refusal
from .syntax import kw, lists, literal

_NO_GRAD = "only `with eg.no_grad():` holding layer weights is supported"
_COPY = "inside no_grad only layer.<state>.copy_(eg.tensor(...)) is supported (weight, bias ...)"


class LayerReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.declared = {}  # variable -> linear params (and whether it was called: "used")

    def layer_of(self, name):
        """(op, the dict of its node's params) of a declared layer: an nn.Linear here, or a
        layer op NnLayers declared (nn.Conv2d ...)."""
        if name in self.declared:
            return "linear", self.declared[name]
        entry = self.imp.nn.declared.get(name) or {}
        spec = registry.get(entry.get("op", ""))
        if spec is None or spec.layer is None:
            raise Unsupported(f"'{name}' is not a layer made by nn.Linear, nn.Conv2d ...")
        return spec.name, entry["params"]

    def set_mode(self, name, attr, call):
        """`bn.eval()` / `bn.train()` (a Sequential: each of its layers)."""
        if call.args or call.keywords:
            raise Unsupported(f"{attr}() takes no arguments here")
        if name in self.imp.nn.declared:
            set_mode(self.imp.nn.declared[name], attr)

    def declare(self, name, call):
        """`name = nn.Linear(...)`."""
        args = list(call.args)
        if len(args) > 3:
            raise Unsupported("nn.Linear(in_features, out_features, bias=...) takes 3 arguments")
        out = args[1] if len(args) > 1 else kw(call, "out_features")
        if out is None:
            raise Unsupported("nn.Linear needs out_features")
        out = literal(out)
        if not isinstance(out, int) or isinstance(out, bool):
            raise Unsupported("out_features must be a whole number")
        bias = args[2] if len(args) > 2 else kw(call, "bias")
        bias = True if bias is None else literal(bias)
        if not isinstance(bias, bool):
            raise Unsupported("bias must be True or False")
        for k in call.keywords:
            if k.arg not in ("in_features", "out_features", "bias", "dtype", "device"):
                raise Unsupported(f"nn.Linear has no argument '{k.arg}' here")
        self.declared[name] = {"out_features": out, "bias": bias, "seed": 0, "used": False}

    def call(self, name, node, meta):
        """`h = fc(x)`: the layer's linear node."""
        layer = self.declared[name]
        if layer["used"]:
            raise Unsupported(layer_refusal(name, "Linear"))
        if len(node.args) != 1 or node.keywords:
            raise Unsupported("a layer takes one tensor")
        layer["used"] = True
        params = {k: v for k, v in layer.items() if k != "used"}
        return self.imp.add_node(
            "linear", params, [("input", self.imp.exprs.operand_node(node.args[0]))], meta
        )

    # -- weights --------------------------------------------------------------------------------
    def init_like_engine(self, call):
        """`init_like_engine(fc, seed=S)`: the exporter's helper seeding a PyTorch layer."""
        if not call.args or not isinstance(call.args[0], ast.Name):
            raise Unsupported("init_like_engine(layer, seed=...) needs a layer variable")
        _, layer = self.layer_of(call.args[0].id)
        seed = call.args[1] if len(call.args) > 1 else kw(call, "seed")
        layer["seed"] = int(literal(seed)) if seed is not None else 0

    def reset_parameters(self, name, call):
        """`fc.reset_parameters(eg.Generator().manual_seed(S))`, or `fc.reset_parameters()`
        right after `torch.manual_seed(S)`: seed S."""
        self.layer_of(name)[1]["seed"] = self.imp.random.reset_seed(call)

    def with_statement(self, stmt):
        """`with eg.no_grad():` holding weight copies, each line read (or reported) alone."""
        if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
            raise Unsupported(_NO_GRAD)
        if not self.imp.modules.is_call(stmt.items[0].context_expr, "lib", "no_grad"):
            raise Unsupported(_NO_GRAD)
        for s in stmt.body:
            self.imp.current_line = s.lineno
            try:
                self.weight_copy(s)
            except Unsupported as exc:
                self.imp.problem(s, str(exc))
        return None

    def weight_copy(self, s):
        """`layer.weight.copy_(eg.tensor(V))` or `layer.bias.copy_(...)`."""
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            raise Unsupported(_COPY)
        call = s.value
        f = call.func
        if not (
            isinstance(f, ast.Attribute)
            and f.attr == "copy_"
            and isinstance(f.value, ast.Attribute)
            and len(call.args) == 1
        ):
            raise Unsupported(_COPY)
        # layer.weight, bn.running_mean, attn.out_proj.weight: the layer, then the state key
        parts, obj = [], f.value
        while isinstance(obj, ast.Attribute):
            parts.insert(0, obj.attr)
            obj = obj.value
        if not isinstance(obj, ast.Name):
            raise Unsupported(_COPY)
        op, layer = self.layer_of(obj.id)
        param = state_param(registry.get(op), ".".join(parts))
        arg = call.args[0]
        stored = self.imp.weights_file.values(arg) if param is not None else None
        if stored is not None:  # state_dict["conv1.weight"]: the weights file's (weights_file.py)
            layer[param] = stored[0]
            return
        if param is None or not (self.imp.modules.is_call(arg, "lib", "tensor") and arg.args):
            raise Unsupported(_COPY)
        layer[param] = lists(literal(arg.args[0]))
