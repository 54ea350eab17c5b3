"""Shapes read at read time: `x.size(0)`, `x.size()`, `x.shape[-1]`, `x.size()[1:]`, `x.dim()`,
`x.ndim`, `x.numel()` and `len(x)` of a tensor variable are written as the numbers they are
when the script runs, so that `B, T, C = x.size()`, `x.view(x.size(0), -1)` and arithmetic on
them are constants (constants.py). Define-by-run records the numbers a shape gave; so does the
graph.

A node's shape is found as the validator's dry run finds it
(backend/graph/document/validate.py): the op run on zero-filled stand-ins of its inputs, worked
out for the nodes a shape read needs and kept, so that a script is run on stand-ins at most once
node by node. A module_input of a class's forward has the shape of the tensor the instance is
called on (classes.py builds a forward that reads shapes where the instance is called); a module
node's outputs are its definition's, dry-run on the stand-ins of its inputs; a stand-in too big
to make has no known shape: a shape read of it is a
problem at its line."""

import ast

from .. import registry
from ..document.validate import dry_run_stand_in
from .constants import literal_node
from .nodes import PORT, port_ref, split_ref
from .problems import Unsupported

_METHODS = ("size", "dim", "numel", "nelement")
_ATTRS = ("shape", "ndim")


class NeedsShapes(Exception):  # noqa: N818 (a signal, not an error the user sees)
    """A class's forward reads the shape of its input: its definition is built where the
    instance is called, with the shapes of the tensors it is called on (classes.py)."""


class ShapeModel:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.inputs = None  # module_input id -> stand-in (a forward built for given shapes)
        self.known = {}  # node id -> stand-in (None: unknown)
        self.incoming = {}  # node id -> [(port, source)]
        self.seen_edges = 0

    # -- stand-ins ------------------------------------------------------------------------------
    def stand_in(self, ref):
        """The zero-filled stand-in of a node's value; None where its shape is unknown."""
        if PORT in ref:  # one output of a module node: known once the node is
            self.stand_in(split_ref(ref)[0])
            return self.known.get(ref)
        if ref in self.known:
            return self.known[ref]
        self._index_edges()
        order, stack = [], [ref]
        while stack:  # the nodes it depends on, not yet known, inputs first
            nid = stack.pop()
            if nid in self.known or nid in order:
                continue
            order.append(nid)
            stack.extend(split_ref(src)[0] for _, src in self.incoming.get(nid, ()))
        for nid in reversed(order):
            self.known[nid] = self._compute(nid)
        return self.known[ref]

    def forget_edges(self, changed):
        """The graph's edges changed other than by being added, and node `changed` is another
        op (a computed tensor made a leaf: leaf_values.py): read them anew."""
        self.incoming, self.seen_edges = {}, 0
        self.known.pop(changed, None)

    def _index_edges(self):
        edges = self.imp.graph.edges
        for src, dst, port in edges[self.seen_edges :]:
            self.incoming.setdefault(dst, []).append((port, src))
        self.seen_edges = len(edges)

    def _compute(self, nid):
        node = self.imp.graph.nodes.get(nid)
        if node is None:
            return None
        if node["op"] == "module_input":
            if self.inputs is None:
                raise NeedsShapes
            return self.inputs.get(nid)
        spec = registry.get(node["op"])
        if node["op"] == "module":
            return self._module(nid, node)
        if spec is None:
            return None
        inputs = {}
        for port, src in self.incoming.get(nid, ()):
            v = self.known.get(src)
            if v is None:
                return None
            inputs.setdefault(port, []).append(v)
        return dry_run_stand_in(spec, node["params"], inputs)

    def _module(self, nid, node):
        """A module node's stand-in (its output `out`; its other outputs kept under their
        port refs): its definition dry-run on the stand-ins of its inputs."""
        inputs = {}
        for port, src in self.incoming.get(nid, ()):
            inputs[port] = self.known.get(src)
        outs = _module_outputs(self.imp.classes.defs, node, inputs, 0) or {}
        for port, t in outs.items():
            if port != "out":
                self.known[port_ref(nid, port)] = t
        return outs.get("out")

    def shape(self, name):
        """The shape of the tensor variable `name`; Unsupported where it is not known."""
        nid = self.imp.ref_name(name)
        t = self.stand_in(nid)
        if t is None:
            raise Unsupported(
                f"the shape of '{name.removeprefix('self.')}' is not known where it is read "
                "(an output of a module, or a tensor too big for a stand-in): write the number"
            )
        return tuple(t.shape)

    def rank(self, node):
        if isinstance(node, ast.Name) and node.id in self.imp.env:
            return len(self.shape(node.id))
        return None

    # -- a statement ----------------------------------------------------------------------------
    def substituted(self, stmt):
        """`stmt` with each shape read of a tensor variable written as its numbers (its own
        expressions only; the lines of a body are read when they are)."""
        if _is_backward(stmt):
            return stmt  # L.backward(torch.ones(L.shape)): the importer's own reading of it
        fields = [f for f in stmt._fields if f not in ("body", "orelse", "finalbody", "handlers")]
        if not any(self._reads_shape(getattr(stmt, f, None)) for f in fields):
            return stmt
        new = type(stmt)(**{f: getattr(stmt, f) for f in stmt._fields})
        for f in fields:
            v = getattr(stmt, f, None)
            if isinstance(v, ast.AST):
                setattr(new, f, _Substitute(self).visit(_copy(v)))
            elif isinstance(v, list):
                setattr(new, f, [_Substitute(self).visit(_copy(x)) for x in v])
        return ast.copy_location(new, stmt)

    def _reads_shape(self, node):
        if node is None:
            return False
        nodes = node if isinstance(node, list) else [node]
        for root in nodes:
            if not isinstance(root, ast.AST):
                continue
            for n in ast.walk(root):
                if self._tensor_of(n) is not None:
                    return True
        return False

    def _tensor_of(self, n):
        """The tensor variable whose shape `n` reads, or None."""
        env = self.imp.env
        if isinstance(n, ast.Attribute) and n.attr in _ATTRS:
            base = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            base = n.func.value if n.func.attr in _METHODS else None
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len":
            base = n.args[0] if len(n.args) == 1 and not n.keywords else None
        else:
            return None
        if isinstance(base, ast.Name) and base.id in env:
            return base.id
        return None


def _module_outputs(defs, node, inputs, depth):
    """{output port: stand-in} of module node `node` on the stand-ins `inputs` (by port):
    each node of its definition dry-run in the order it was read (inputs first), nested
    modules in turn; None where the definition is not known."""
    d = defs.get(node["params"].get("module"))
    if d is None or depth > 32:
        return None
    into = {}
    for e in d["edges"]:
        src = e["source"] if e["sourcePort"] == "out" else port_ref(e["source"], e["sourcePort"])
        into.setdefault(e["target"], []).append((e["targetPort"], src))
    values = {}
    for n in _inputs_first(d["nodes"], into):
        nid = n["id"]
        if n["op"] == "module_input":
            values[nid] = inputs.get(nid)
            continue
        ins = {}
        for port, src in into.get(nid, ()):
            ins.setdefault(port, []).append(values.get(src))
        if any(v is None for vs in ins.values() for v in vs):
            values[nid] = None
        elif n["op"] == "module":
            outs = _module_outputs(defs, n, {p: vs[0] for p, vs in ins.items()}, depth + 1)
            for port, t in (outs or {}).items():
                values[nid if port == "out" else port_ref(nid, port)] = t
        else:
            spec = registry.get(n["op"])
            values[nid] = dry_run_stand_in(spec, n["params"], ins) if spec else None
    return {o: values.get(o) for o in d["outputs"]}


def _inputs_first(nodes, into):
    """The nodes of a definition, each after those it reads (a renamed node `self.w` is
    listed last)."""
    by_id = {n["id"]: n for n in nodes}
    order, done, stack = [], set(), [(n["id"], False) for n in reversed(nodes)]
    while stack:
        nid, ready = stack.pop()
        if ready:
            order.append(by_id[nid])
            continue
        if nid in done or nid not in by_id:
            continue
        done.add(nid)
        stack.append((nid, True))
        stack.extend((split_ref(src)[0], False) for _, src in into.get(nid, ()))
    return order


class _Substitute(ast.NodeTransformer):
    def __init__(self, model):
        self.model = model

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        # x.shape[0]: one size, x.size()[1:]: a slice of the shape, as its tuple
        if isinstance(node.value, ast.Tuple) and not isinstance(node.slice, ast.Slice):
            try:
                values, i = ast.literal_eval(node.value), ast.literal_eval(node.slice)
            except ValueError:
                return node
            if type(i) is int and -len(values) <= i < len(values):
                return literal_node(values[i], node)
            return node
        if isinstance(node.value, ast.Tuple) and isinstance(node.slice, ast.Slice):
            try:
                values = ast.literal_eval(node.value)
                bounds = [
                    None if b is None else ast.literal_eval(b)
                    for b in (node.slice.lower, node.slice.upper, node.slice.step)
                ]
            except ValueError:
                return node
            if all(b is None or type(b) is int for b in bounds) and bounds[2] != 0:
                return literal_node(tuple(values[slice(*bounds)]), node)
        return node

    def generic_visit(self, node):
        name = self.model._tensor_of(node)
        if name is None:
            return super().generic_visit(node)
        shape = self.model.shape(name)
        if isinstance(node, ast.Attribute):
            v = shape if node.attr == "shape" else len(shape)
        elif isinstance(node.func, ast.Name):  # len(x)
            if not shape:
                raise Unsupported("len() of a 0-d tensor")
            v = shape[0]
        else:
            v = self._method(node, shape)
        return literal_node(v, node)

    def _method(self, node, shape):
        attr = node.func.attr
        if attr == "dim" and not node.args:
            return len(shape)
        if attr in ("numel", "nelement") and not node.args:
            n = 1
            for s in shape:
                n *= s
            return n
        if attr == "size" and not node.args and not node.keywords:
            return shape
        if attr == "size" and len(node.args) == 1 and not node.keywords:
            i = self.model.imp.constants.value(node.args[0])
            if type(i) is not int or not -len(shape) <= i < len(shape):
                raise Unsupported(f"size() takes a dim from {-len(shape)} to {len(shape) - 1}")
            return shape[i]
        raise Unsupported(f"{attr}() is read as x.size(), x.size(dim), x.dim() or x.numel()")


def _is_backward(stmt):
    v = getattr(stmt, "value", None) if isinstance(stmt, ast.Expr) else None
    return isinstance(v, ast.Call) and getattr(v.func, "attr", None) == "backward"


def _copy(node):
    import copy

    return copy.deepcopy(node)
