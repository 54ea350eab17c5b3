"""A MultiheadAttention seeded as its layer node draws it, read as the node's seed. The node draws
q, k, v first, then out_proj (ops/attention_layers.py); PyTorch's constructor draws out_proj
first. So code export writes the seed after the constructor, then the init in the node's order
(export/layers.py):

    attn = nn.MultiheadAttention(16, 2, batch_first=True)
    torch.manual_seed(3)
    nn.init.xavier_uniform_(attn.in_proj_weight)
    attn.out_proj.reset_parameters()
    nn.init.zeros_(attn.out_proj.bias)              (where out_proj has a bias)

The three lines in this order right after `torch.manual_seed(S)` give the layer seed S (a
layer of a class's __init__, `self.attn`, or one inside a module instance, `l2.attn`, whose
seed goes into the instance's state: state_loads.py). Any other order of them is refused: it
draws other numbers than any seed of the node gives."""

import ast

from .problems import Unsupported
from .syntax import dotted

_OP = "multi_head_attention"
_ORDER = (
    "write the seed, then nn.init.xavier_uniform_(<layer>.in_proj_weight), "
    "<layer>.out_proj.reset_parameters() and nn.init.zeros_(<layer>.out_proj.bias), in this "
    "order: the node's own draws"
)


class AttentionInit:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.pending = None  # (the layer's code, its seed, the next step)

    def claims(self, stmt):
        """Whether `stmt` is one of the three init lines, on a MultiheadAttention."""
        return self._step(stmt) is not None

    def read(self, stmt):
        step, layer = self._step(stmt)
        key = ast.unparse(layer)
        if step == 0:
            seed = self.imp.random.fresh_seed()
            if seed is None:
                raise Unsupported(
                    "nn.init.xavier_uniform_ draws from PyTorch's global stream here: write "
                    "torch.manual_seed(S) right before it (S: the layer's seed)"
                )
            self.imp.random.layer_made()  # (the stream is drawn from)
            self.pending = (key, seed, 1)
            return None
        if self.pending is None or self.pending[0] != key or self.pending[2] != step:
            self.pending = None
            raise Unsupported(_ORDER)
        seed = self.pending[1]
        if step == 2 or not self._has_bias(layer):
            self.pending = None
            self._set_seed(layer, seed)
        else:
            self.pending = (key, seed, 2)
        return None

    # -- which line -----------------------------------------------------------------------------
    def _step(self, stmt):
        """(0, 1 or 2: which of the three lines, the layer's expression); None for any other
        line."""
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return None
        call = stmt.value
        if call.keywords:
            return None
        kind, rest = self.imp.modules.func_kind(dotted(call.func))
        if kind == "nn" and rest == "init.xavier_uniform_" and len(call.args) == 1:
            step, layer = 0, _under(call.args[0], ("in_proj_weight",))
        elif kind == "nn" and rest == "init.zeros_" and len(call.args) == 1:
            step, layer = 2, _under(call.args[0], ("out_proj", "bias"))
        elif (
            isinstance(call.func, ast.Attribute)
            and call.func.attr == "reset_parameters"
            and not call.args
        ):
            step, layer = 1, _under(call.func.value, ("out_proj",))
        else:
            return None
        if layer is None or self._params(layer) is None:
            return None
        return step, layer

    def _params(self, layer):
        """The params of the attention layer `layer` names (a declared one, or one inside a
        module instance: its node's own, {} where a state of the instance shadows them); None
        where it names no attention layer."""
        if isinstance(layer, ast.Name):
            entry = self.imp.nn.declared.get(layer.id) or {}
            return entry.get("params") if entry.get("op") == _OP else None
        loads = self.imp.state_loads
        root = loads.root(layer)
        if root is None:
            return None
        try:
            path, spec, rest = loads.node(*root)
        except Unsupported:
            return None
        if spec is None or spec.name != _OP or rest:
            return None
        inst = self.imp.classes.instances[root[0]]
        return inst.get("paths", {}).get(path, (0, None))[1] or {}

    def _has_bias(self, layer):
        return bool(self._params(layer).get("bias", True))

    def _set_seed(self, layer, seed):
        if isinstance(layer, ast.Name):
            self.imp.nn.declared[layer.id]["params"]["seed"] = seed
        else:
            self.imp.state_loads.layer_seed(*self.imp.state_loads.root(layer), seed)


def _under(node, attrs):
    """The expression `node` is `<layer>.<attrs>` of; None where it is not."""
    for attr in reversed(attrs):
        if not (isinstance(node, ast.Attribute) and node.attr == attr):
            return None
        node = node.value
    return node
