"""`nn` modules declared in code other than nn.Linear (layers.py reads that one):

    act = nn.ReLU()  /  nn.Softmax(dim=1)  /  nn.LeakyReLU(0.1)     the op of the same name
    loss_fn = nn.MSELoss()  /  nn.CrossEntropyLoss()                 the loss op (F.mse_loss)
    conv = nn.Conv2d(1, 6, 5)                                        a layer op (layer_forms.py)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), ...)           its layers one after another
    nn.Sequential(Block(4), *[Block(8) for _ in range(3)])           instances of the script's
                                                                     classes: module nodes
    norm = nn.Identity()                                             its input, no node

A declaration makes no node; each call of it (`h = act(x)`) makes its op's node. Which op an
`nn.<Class>` is comes from the registry: a layer op's LayerForm.classes, else the op whose
name is the class name in lower case without its `Loss` (MSELoss: mse_loss, LeakyReLU:
leaky_relu), or whose CallForm.nn_class it is (BCELoss: binary_cross_entropy); the
constructor's arguments are that op's params."""

import ast
import re

from .. import registry
from .layer_forms import (
    first_of_tuple,
    first_of_tuple_refusal,
    op_of_class,
    params_from_call,
    self_attention,
)
from .module_lists import elements
from .problems import Unsupported
from .shared_calls import layer_refusal
from .syntax import literal

# nn.Flatten flattens from dim 1 (it keeps the batch); torch.flatten from dim 0
_CLASS_DEFAULTS = {"Flatten": {"start_dim": 1}}


def op_of_module(cls):
    """The op (not a layer op) that a call of `nn.<cls>()` computes; None for none."""
    key = cls.lower()
    for spec in registry.all_ops():
        if spec.layer is not None or spec.call is None or spec.source:
            continue
        if spec.call.nn_class:
            if spec.call.nn_class == cls:
                return spec
            continue
        name = spec.name.replace("_", "")
        if name == key or (key.endswith("loss") and name == key[: -len("loss")]):
            return spec
    return None


class NnLayers:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.declared = {}  # variable -> ("op", op, params, used) | ("seq", [layer, ...])
        self.made = {}  # variable -> the nn.<cls>(...) call that declared it

    def declare(self, name, call, cls):
        """`name = nn.<cls>(...)`; Unsupported for a class no op reads."""
        self.declared[name] = self.layer(call, cls)
        self.made[name] = call  # (passed to a class's constructor: made again there)

    def layer(self, call, cls):
        """What `nn.<cls>(...)` declares (a Sequential: its layers, each declared)."""
        if cls == "Sequential":
            if call.keywords:
                raise Unsupported("nn.Sequential takes its layers as arguments")
            layers = elements(self.imp.constants, ast.List(elts=call.args, ctx=ast.Load()))
            return {"kind": "seq", "layers": [self._element(a) for a in layers]}
        if cls == "Identity":  # (its arguments are PyTorch's to ignore): its input itself
            return {"kind": "seq", "layers": []}
        if cls == "Linear":
            return {"kind": "linear", "call": call}
        if op_of_class(cls) is not None:
            op, params = params_from_call(cls, call)
            return {"kind": "op", "op": op, "name": cls, "params": params, "used": False}
        spec = op_of_module(cls)
        if spec is None:
            raise Unsupported(
                f"nn.{cls} is not read: write its function (F.<name>(x)) or one of nn.Linear, "
                "nn.Sequential, an activation, a loss or " + ", ".join(_layer_classes())
            )
        call, inplace = _without_inplace(call, spec)
        layer = {"kind": "op", "op": spec.name, "name": cls, "params": self._args(spec, cls, call)}
        return {**layer, "inplace": True} if inplace else layer

    def sequence_steps(self, it):
        """`for layer in net`, net an nn.Sequential: a name per layer (`net.0`, no script
        variable has a dot), each a Sequential of that one layer; None for another `it`."""
        entry = self.declared.get(it.id) if isinstance(it, ast.Name) else None
        if entry is None or entry.get("kind") != "seq":
            return None
        names = []
        for i, layer in enumerate(entry["layers"]):
            names.append(f"{it.id}.{i}")
            self.declared.setdefault(names[-1], {"kind": "seq", "layers": [layer]})
        return names

    def _element(self, node):
        """One layer of nn.Sequential: a constructor call or a layer declared before."""
        kind, rest = self.imp.modules.call_kind(node)
        if kind == "nn":
            layer = self.layer(node, rest)
            if first_of_tuple(layer):
                raise Unsupported(
                    f"nn.{rest} returns a tuple, which nn.Sequential would pass on: declare it "
                    "on its own and call it as layer(x)[0]"
                )
            return layer
        classes = self.imp.classes
        if classes.is_class_call(node):
            # an instance of a class of the script, under a name no variable has
            key = f"{node.func.id}@{node.lineno}:{node.col_offset}:{len(classes.instances)}"
            classes.instantiate(key, node)
            return {"kind": "instance", "key": key}
        raise Unsupported(
            "nn.Sequential's layers must be written nn.<Layer>(...) or <Module>(...) here"
        )

    def _args(self, spec, cls, call):
        """The constructor's literal arguments as the op's params (nn.Softmax(dim=1))."""
        ports = {p.name for p in spec.inputs}
        names = [a for a in spec.call.args if a not in ports]
        if len(call.args) > len(names):
            raise Unsupported(f"nn.{cls} takes at most {len(names)} arguments")
        params = {**_CLASS_DEFAULTS.get(cls, {}), **dict(zip(names, call.args))}
        for k in call.keywords:
            if k.arg is None or (k.arg not in names and k.arg not in spec.call.kwonly):
                raise Unsupported(f"nn.{cls} has no argument '{k.arg}' here")
            params[k.arg] = k.value
        params = {k: literal(v) if isinstance(v, ast.AST) else v for k, v in params.items()}
        for req in spec.call.required:
            if req not in params:
                raise Unsupported(f"nn.{cls} needs {req}=")
        return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}

    # -- calls ----------------------------------------------------------------------------------
    def call(self, name, node, meta):
        """`h = layer(x)` (a loss: `loss_fn(pred, target)`): the node of its op, or of the last
        layer of a Sequential."""
        if first_of_tuple(self.declared[name]) and self.declared[name].get("indexed") is not node:
            raise Unsupported(first_of_tuple_refusal(name, self.declared[name]["name"]))
        if self.declared[name].get("op") == "multi_head_attention":
            node = self_attention(node)  # attn(x, x, x, need_weights=False): x
        if node.keywords:
            raise Unsupported("a layer takes its tensors as positional arguments")
        layer = self.declared[name]
        first = layer["layers"][0] if layer["kind"] == "seq" and layer["layers"] else layer
        if first.get("inplace"):  # (a Sequential's first layer takes the call's tensor)
            self._check_inplace(name, node)
        return self._apply(self.declared[name], name, list(node.args), meta)

    def _check_inplace(self, name, node):
        """An activation made with inplace=True writes its result into its input. The graph
        gives the result a node of its own, which is the same where the line binds the result
        to the input's one name (`out = self.relu(out)`) and no other name holds the input."""
        imp = self.imp
        arg = node.args[0] if len(node.args) == 1 else None
        shown = name.removeprefix("self.")
        ok = isinstance(arg, ast.Name) and arg.id == imp.current_var and arg.id in imp.env
        if ok:
            nid = imp.env[arg.id]
            ok = not any(v == nid for k, v in imp.env.items() if k != arg.id)
        if not ok:
            raise Unsupported(
                f"{shown} was made with inplace=True: it changes its input, which the importer "
                f"reads only as `x = {shown}(x)` with no other name for x (or write "
                "inplace=False)"
            )

    def _apply(self, layer, name, args, meta):
        imp = self.imp
        if layer["kind"] == "seq":
            if len(args) != 1:
                raise Unsupported(f"'{name}' (nn.Sequential) takes one tensor")
            value = args[0] if layer["layers"] else self._operand(args[0])  # (Identity)
            for i, inner in enumerate(layer["layers"]):
                last = i == len(layer["layers"]) - 1
                value = self._apply(inner, f"{name}[{i}]", [value], meta if last else None)
            return value
        if layer["kind"] == "linear":
            return self._linear(layer, name, args, meta)
        if layer["kind"] == "instance":
            inputs = [self._operand(a) for a in args]
            # named as PyTorch names the layer (self.body[0]: body.0) where the line does not
            path = re.sub(r"\[(\d+)\]", r".\1", name).removeprefix("self.")
            imp.classes.instances[layer["key"]]["shown"] = path  # (its name in messages)
            return imp.classes.call_with(layer["key"], inputs, meta or path)
        if layer.get("used"):
            raise Unsupported(layer_refusal(name, layer["name"]))
        if "used" in layer:
            layer["used"] = True
        spec = registry.get(layer["op"])
        ports = [p.name for p in spec.inputs]
        if len(args) > len(ports):
            raise Unsupported(f"'{name}' takes at most {len(ports)} tensors")
        inputs = [(p, self._operand(a)) for p, a in zip(ports, args)]
        params = {**(spec.call.defaults if spec.call else {}), **layer["params"]}
        return imp.add_node(spec.name, params, inputs, meta)

    def _operand(self, arg):
        """A node id: the previous layer's (in a Sequential), or the argument's node."""
        return arg if isinstance(arg, str) else self.imp.exprs.operand_node(arg)

    def _linear(self, layer, name, args, meta):
        """An nn.Linear inside a Sequential: declared under a name of its own, then called."""
        imp = self.imp
        if len(args) != 1:
            raise Unsupported(f"'{name}' (nn.Linear) takes one tensor")
        key = f"{name}:linear"
        if key in imp.layers.declared:
            raise Unsupported(layer_refusal(name, "Linear"))
        imp.layers.declare(key, layer["call"])
        arg = args[0]
        if isinstance(arg, str):  # the previous layer's node, named for the call
            imp.env[key] = arg
            arg = ast.Name(id=key, ctx=ast.Load())
        call = ast.Call(func=ast.Name(id=key, ctx=ast.Load()), args=[arg], keywords=[])
        try:
            return imp.layers.call(key, call, meta)
        finally:
            imp.env.pop(key, None)


def _without_inplace(call, spec):
    """(the call without an `inplace=` keyword the op does not take, whether it was True)."""
    kw = [k for k in call.keywords if k.arg == "inplace"]
    if not kw or "inplace" in spec.call.args or "inplace" in spec.call.kwonly:
        return call, False
    value = literal(kw[0].value)
    if not isinstance(value, bool):
        raise Unsupported("inplace must be True or False")
    rest = [k for k in call.keywords if k.arg != "inplace"]
    return ast.Call(func=call.func, args=call.args, keywords=rest), value


def _layer_classes():
    from .layer_forms import supported_classes

    return [f"nn.{c}" for c in supported_classes()]
