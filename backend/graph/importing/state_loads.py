"""An instance's own values, read from the lines that set them after it is made and before it
is called (what code export writes for an instance whose `seed` or `state` differs from what
its class makes; a PyTorch user loading a checkpoint writes the same):

    l2 = Affine()
    with torch.no_grad():
        l2.w.copy_(torch.tensor([1.0, -2.0, 0.5]))         a source inside: its values
        l2.g.b.copy_(torch.randn((3,), ...))               (a nested instance's, by its path)
        l2.fc.weight.copy_(torch.tensor([[...]]))          a layer's stored state
    torch.manual_seed(5)                                   a layer's seed: the seed, then
    l2.fc.reset_parameters()                               its init drawn (code export's)
    l2.fc.reset_parameters(eg.Generator().manual_seed(5))  a layer's seed (engine Python)
    init_like_engine(l2.fc, seed=5)                        (older exported scripts' helper)
    l2.drop.train()                                        a layer's mode (its own)

Each goes into the instance node's `state` under the inner node's path (`w`, `g/b`, `fc`), as
modules.flatten reads it. An attribute names the inner node of that id (or whose id, made an
identifier, is the attribute: code export's names). A seed read here is the seed the node runs
with: the instance's own seed offset, which flatten adds to every seed inside, is taken off.
"""

import ast
import re

from .. import registry
from ..document.modules import SEED_RANGE
from .layer_forms import state_param
from .nodes import ImportedGraph
from .problems import Unsupported
from .syntax import dotted, kw, lists, literal

_SOURCE = "copy_ takes a tensor made here: torch.tensor(<values>), torch.randn(<shape>) ..."


class StateLoads:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self._scratch = None  # where a copied source is read, apart from the graph

    # -- which lines ----------------------------------------------------------------------------
    def claims(self, stmt):
        """Whether `stmt` sets values inside a module instance (a `with no_grad` block holding
        such a copy, init_like_engine(inst.layer, ...) or inst.layer.reset_parameters(...))."""
        if isinstance(stmt, ast.With):
            return any(self._copy_root(s) is not None for s in stmt.body)
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return False
        call = stmt.value
        if dotted(call.func) == "init_like_engine" and call.args:
            return self.root(call.args[0]) is not None
        f = call.func
        return (
            isinstance(f, ast.Attribute)
            and f.attr in ("reset_parameters", "eval", "train")
            and self.root(f.value) is not None
        )

    def root(self, node):
        """(instance variable, [attributes]) of `inst.a.b`; None where it is no instance's."""
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Name) and attrs and node.id in self.imp.classes.instances:
            return node.id, attrs
        return None

    def _copy_root(self, s):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            if isinstance(f, ast.Attribute) and f.attr == "copy_":
                return self.root(f.value)
        return None

    # -- reading --------------------------------------------------------------------------------
    def read(self, stmt):
        if isinstance(stmt, ast.With):
            return self._with(stmt)
        call = stmt.value
        if dotted(call.func) == "init_like_engine":
            seed = call.args[1] if len(call.args) > 1 else kw(call, "seed")
            seed = literal(seed) if seed is not None else 0
            if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
                raise Unsupported("init_like_engine's seed must be a whole number ≥ 0")
            var, attrs = self.root(call.args[0])
            self.layer_seed(var, attrs, seed)
            return None
        var, attrs = self.root(call.func.value)
        if call.func.attr in ("eval", "train"):
            return self._mode(var, attrs, call)
        self.layer_seed(var, attrs, self.imp.random.reset_seed(call))
        return None

    def _mode(self, var, attrs, call):
        """`inst.drop.eval()` / `.train()`: the mode of a layer inside (dropout, batch_norm)."""
        path, spec, rest = self.node(var, attrs)
        if call.args or call.keywords:
            raise Unsupported(f"{call.func.attr}() takes no arguments here")
        if rest or spec.layer is None or spec.param("mode") is None:
            raise Unsupported(f"{var}.{'.'.join(attrs)} is no layer with a train/eval mode")
        self._store(var, path, {"mode": call.func.attr})

    def _with(self, stmt):
        """`with eg.no_grad():` whose copies into instances are read here, the others by the
        layer reader; each line read (or reported) alone."""
        if (
            len(stmt.items) != 1
            or stmt.items[0].optional_vars is not None
            or not self.imp.modules.is_call(stmt.items[0].context_expr, "lib", "no_grad")
        ):
            raise Unsupported("only `with torch.no_grad():` holding copies of values is read")
        for s in stmt.body:
            self.imp.current_line = s.lineno
            try:
                root = self._copy_root(s)
                if root is None:
                    self.imp.layers.weight_copy(s)
                else:
                    self._copy(*root, s.value)
            except Unsupported as exc:
                self.imp.problem(s, str(exc))
        return None

    def _copy(self, var, attrs, call):
        if len(call.args) != 1 or call.keywords:
            raise Unsupported("copy_ takes one tensor")
        path, spec, rest = self.node(var, attrs)
        arg = call.args[0]
        if spec.source:
            if rest:
                raise Unsupported(f"{'.'.join(attrs)}: a source has no attribute {rest[0]}")
            self._store(var, path, self._source_params(spec, arg))
            return
        param = state_param(spec, ".".join(rest)) if spec.layer is not None else None
        if param is None:
            raise Unsupported(f"{var}.{'.'.join(attrs)} holds no values a node stores")
        stored = self.imp.weights_file.values(arg)  # state_dict["l2.fc.weight"]
        if stored is not None:
            self._store(var, path, {param: stored[0]})
            return
        if not (self.imp.modules.is_call(arg, "lib", "tensor") and len(arg.args) == 1):
            raise Unsupported("a layer's values are copied from torch.tensor(<values>)")
        self._store(var, path, {param: lists(literal(arg.args[0]))})

    def layer_seed(self, var, attrs, seed):
        path, spec, rest = self.node(var, attrs)
        if rest or spec.layer is None or spec.param("seed") is None:
            raise Unsupported(f"{var}.{'.'.join(attrs)} is not a layer of the module")
        self._store(var, path, {"seed": seed})

    def _source_params(self, spec, arg):
        """The params of the source `arg` makes, read apart from the graph (no node of its
        own): those `spec` has, but its name and requires_grad."""
        imp = self.imp
        if self._scratch is None:
            self._scratch = ImportedGraph(imp.source)
        scratch, graph = self._scratch, imp.graph
        scratch.nodes.clear()
        scratch.edges.clear()
        imp.graph = scratch
        try:
            nid = imp.exprs.expr(arg, "state")
        finally:
            imp.graph = graph
        node = scratch.nodes.get(nid)
        if node is None or node["op"] != "tensor" or scratch.edges:
            raise Unsupported(_SOURCE)
        return {
            k: v
            for k, v in node["params"].items()
            if k not in ("name", "requires_grad") and spec.param(k) is not None
        }

    def node(self, var, attrs):
        """(path inside the instance, the op spec of the node there, the attributes left);
        what with_state needs of the path is kept with the instance."""
        inst = self.imp.classes.instances[var]
        if inst.get("used"):
            raise Unsupported(f"set {var}'s values before calling it")
        cls, path, inner, between = inst.get("def", inst["cls"]), [], 0, []
        for i, attr in enumerate(attrs):
            d = self.imp.classes.defs.get(cls)
            if d is None:
                raise Unsupported(f"{cls} could not be read: see the lines of its class")
            node = _find(d["nodes"], attr)
            if node is None:
                raise Unsupported(f"{cls} has no node {attr!r} (the attribute names its node)")
            path.append(node["id"])
            if node["op"] == "module":
                cls = node["params"]["module"]
                inner += int(node["params"].get("seed") or 0)  # flatten adds it inside
                between.append((len(path), node["params"].get("state") or {}))
                continue
            spec = registry.get(node["op"])
            if spec is None:
                break
            # the node's own params, where no module between holds a state of its own for it
            shadowed = any("/".join(path[j:]) in st for j, st in between)
            own = None if shadowed else node["params"]
            inst.setdefault("paths", {})["/".join(path)] = (inner, own)
            return "/".join(path), spec, attrs[i + 1 :]
        raise Unsupported(f"{var}.{'.'.join(attrs)} is not a tensor or layer inside {cls}")

    def _store(self, var, path, params):
        state = self.imp.classes.instances[var].setdefault("state", {})
        state.setdefault(path, {}).update(params)


def with_state(inst, params, meta=None):
    """An instance node's params with the state its lines loaded. A seed loaded is the seed the
    node runs with: the offsets flatten adds (the instance's own, which its node comment may
    give in `meta`, and those of the modules between) are taken off. What equals the node's
    own params in the definition is left out (no state says it again)."""
    state = inst.get("state")
    if not state:
        return params
    offset = int(params.get("seed") or 0)
    hint = meta[2].get("params") if isinstance(meta, tuple) else None
    given = hint.get("seed") if isinstance(hint, dict) else None
    if isinstance(given, int) and not isinstance(given, bool):
        offset = given
    own = {}
    for path, p in state.items():
        inner, defaults = inst.get("paths", {}).get(path, (0, None))
        p = dict(p)
        if "seed" in p:
            p["seed"] = (int(p["seed"]) - offset - inner) % SEED_RANGE
        if defaults is not None:
            p = {k: v for k, v in p.items() if defaults.get(k, _MISSING) != v}
        if p:
            own[path] = p
    return {**params, "state": own} if own else params


_MISSING = object()


def _find(nodes, attr):
    """The node of id `attr`, or else the one whose id made an identifier is `attr`."""
    for n in nodes:
        if n["id"] == attr:
            return n
    found = [n for n in nodes if _ident(n["id"]) == attr]
    return found[0] if len(found) == 1 else None


def _ident(text):
    s = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_"))
    return "n" + s if s[:1].isdigit() else s
