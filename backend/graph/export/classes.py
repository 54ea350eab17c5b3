"""Documents with modules exported as a PyTorch user writes them: each module definition an
`nn.Module` class, each instance one object of it.

    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(<the definition's w>)      # sources and layers: attributes
            torch.manual_seed(1)                              # its node's seed
            self.fc = nn.Linear(3, 3)                         # (nested instances: Sub())
        def forward(self, x):                                 # its module_input nodes
            h = self.fc(x * self.w)
            return h                                          # its module_output nodes

    l1 = Affine()
    l2 = Affine()
    with torch.no_grad():            # l2's own values: its seed and state, loaded as a
        l2.w.copy_(<l2's w>)         # checkpoint is (only what differs from Affine()'s)
    l1_y = l1(x)                     # (ids and places: the layout block, export/layout.py)

A class's `__init__` makes the definition's own values (the seeds and params it holds). An
instance whose `seed` or `state` gives other values (modules.flatten) gets them after it is
made: a source copied in (`l2.w.copy_(...)`) under `no_grad`, a layer seeded again
(`torch.manual_seed(5)`, `l2.fc.reset_parameters()`) and its stored state copied. The
numbers are those of the flat graph every run runs, so the script prints the executor's values
and gradients; the importer reads the same lines back (importing/state_loads.py) and the
instance's node comment carries its exact `seed` and `state`.

The script prints the target's value (export/printout.py); with the trace option, every value
and gradient a PyTorch user can reach from outside `forward`, under the flat ids (`l1/w`): each
output port's value and gradient (`l1/y`), each source's value and gradient (`l1/w`, `t/g/b`:
`t.g.b`), each layer's parameter gradients (`l1/fc.weight`). The values computed inside
`forward` are not printed.

A document the classes cannot say exactly is written as its flat graph (export/flat.py):
`if` nodes or in-place ops anywhere, a module used on inputs that make different layers (a
Linear's in_features), an instance value of another shape than its class makes, data nodes
inside a module, a definition without outputs. `Unwritable` names why.
"""

import engine as eg

from .. import registry
from ..document.format import Node
from ..document.modules import INPUT_OP, MODULE_OP, OUTPUT_OP, SEP, flatten
from ..document.validate import resolved_params, topological_order
from ..importing.port_comments import ports_comment
from ..op_context import OpContext
from ..ops import datasets
from ..ops.sources import tensor_code
from . import layers as export_layers
from . import printout
from .lines import node_comment, retain_lines
from .sidecar import stored_source as sidecar_source

_MODULE_ATTRS = {a for a in dir(eg.nn.Module()) if not a.startswith("__")} | {"self"}


class Unwritable(Exception):
    """A document with modules that the classes cannot say exactly (the message says why)."""


class _Level:
    """One graph level (the document's top or a module definition): its nodes, the edges into
    each node by port, and a topological order."""

    def __init__(self, graph):
        self.graph = graph
        self.nodes = {n.id: n for n in graph.nodes}
        self.incoming = {n.id: {} for n in graph.nodes}
        for e in graph.edges:
            self.incoming[e.target].setdefault(e.targetPort, []).append(e)
        self.order, _ = topological_order(graph)


class ClassWriter:
    """The class-based script of `doc` (version 2, validated) from `ex`, the exporter
    (export._Exporter) of its flat graph: the analysis (values, shapes, requires_grad,
    variables of the top-level nodes) is the flat graph's."""

    retains = True  # the script keeps the top-level values' gradients (retain_grad) to print
    # the instances and port nodes carry their ids and places in comments (a model leaves them
    # out where the script reads back the same without them: export/model.py)
    placed = True
    sections = (
        "# -- modules: one nn.Module class per module definition",
        "# -- the model: one object per module instance, each with its own values",
        "# -- the graph, one line per node, in topological order",
    )

    def __init__(self, doc, ex, names):
        self.doc, self.ex, self.lib = doc, ex, ex.lib
        self.ident, self.good = names  # export._ident, export._is_good_name
        self.defs = {m.name: m for m in doc.modules}
        self.levels = {name: _Level(m) for name, m in self.defs.items()}
        self.top = _Level(doc)
        self.paths = {}  # definition -> flat prefixes of its instances ("l1/", "t/g/")
        self._instances(self.top, "")
        self.used = [m.name for m in doc.modules if m.name in self.paths]
        self._bare = {}
        self._check()
        self.cls = self._class_names()
        self.attrs = {m: self._attr_names(m) for m in self.used}
        self._top_names()
        if not ex.trace:
            target = ex.var.get(ex.target)
            ex.prints = f"prints `{target}`" if target else "prints its outputs"

    # -- analysis ---------------------------------------------------------------------------
    def _instances(self, level, prefix):
        for nid in level.order:
            n = level.nodes[nid]
            if n.op == MODULE_OP:
                name = n.params["module"]
                self.paths.setdefault(name, []).append(prefix + nid + SEP)
                self._instances(self.levels[name], prefix + nid + SEP)

    def _check(self):
        ex = self.ex
        if ex.inplace:
            raise Unwritable("the graph has in-place ops")
        for nid in ex.order:
            spec = ex.specs[nid]
            if spec.branches:
                raise Unwritable("the graph has an if node")
            if SEP in nid and spec.category == "data":
                raise Unwritable(f"module data node {nid}: data is read at the top level")
        for name in self.used:
            if not self.defs[name].outputs:
                raise Unwritable(f"module {name} has no outputs")

    def bare(self, name):
        """{path inside: (spec, resolved params)} of the flat nodes of a plain `name()`."""
        if name not in self._bare:
            probe = Node(id="m", op=MODULE_OP, params={"module": name})
            flat = flatten(
                self.doc.model_copy(
                    update={"nodes": [probe], "edges": [], "target": None, "training": None}
                )
            )
            out = {}
            for n in flat.nodes:
                spec = registry.get(n.op)
                out[n.id[2:]] = (spec, resolved_params(spec, n.params))
            self._bare[name] = out
        return self._bare[name]

    def _class_names(self):
        """A class name per definition: its own name, but where the script's own functions
        (the datasets' generators) or Python's names have it."""
        out, taken = {}, {fn.__name__ for fn in datasets.FUNCTIONS.values()}
        for name in self.used:
            c, k = name, 2
            while c in taken or not self.good(c):
                c, k = f"{name}_{k}", k + 1
            taken.add(c)
            out[name] = c
        return out

    def _attr_names(self, name):
        """{inner id: attribute} of the definition's sources, layers and instances, and
        {inner id: local variable} of the others (forward's arguments and results); a nested
        instance's outputs: {(id, port): local variable}. One name space: none is taken twice."""
        level, out, taken = self.levels[name], {}, set(_MODULE_ATTRS) | set(self.cls.values())

        def fresh(base):
            name_, k = base, 2
            while name_ in taken or not self.good(name_):
                name_, k = f"{base}_{k}", k + 1
            taken.add(name_)
            return name_

        for nid in level.order:
            n = level.nodes[nid]
            if n.op != OUTPUT_OP:
                out[nid] = fresh(self.ident(nid) or n.op)
        for nid in level.order:
            n = level.nodes[nid]
            if n.op == MODULE_OP:
                for port in self.defs[n.params["module"]].outputs:
                    out[(nid, port)] = fresh(f"{out[nid]}_{self.ident(port) or 'out'}")
        return out

    def _top_names(self):
        """Variables of the top-level instances (object, outputs); the flat exporter's names
        that a class took are renamed."""
        ex, taken = self.ex, set(self.cls.values())
        for table in (ex.var, ex.layer):
            for k, v in list(table.items()):
                if v in taken:
                    table[k] = self._fresh(v + "_", table)
        for nid, pair in list(ex.arrays.items()):
            ex.arrays[nid] = tuple(self._fresh(v + "_", {}) if v in taken else v for v in pair)
        self.obj, self.out = {}, {}
        for nid in self.top.order:
            n = self.top.nodes[nid]
            if n.op != MODULE_OP:
                continue
            label = n.label if self.good(n.label) else ""
            self.obj[nid] = self._fresh(label or self.ident(nid) or "module", {})
            for port in self.defs[n.params["module"]].outputs:
                var = self._fresh(f"{self.obj[nid]}_{self.ident(port) or 'out'}", {})
                self.out[(nid, port)] = var
                ex.var[nid + SEP + port] = var  # the flat output node: what reads it reads this

    def _fresh(self, base, table):
        ex = self.ex
        taken = (
            {v for k, v in ex.var.items() if SEP not in k}  # (the flat inner names are unused)
            | {v for k, v in ex.layer.items() if SEP not in k}
            | {v for pair in ex.arrays.values() for v in pair}
            | set(self.cls.values())
            | set(getattr(self, "obj", {}).values())
            | set(getattr(self, "out", {}).values())
            | set(table.values())
        )
        name, k = base, 2
        while name in taken or not self.good(name):
            name, k = f"{base}_{k}", k + 1
        return name

    # -- a level's values -----------------------------------------------------------------------
    def _arg(self, level, names, edge):
        """The variable an edge brings: an instance's output port, or its source's."""
        src = level.nodes[edge.source]
        if src.op == MODULE_OP:
            return names[(edge.source, edge.sourcePort)]
        return names[edge.source]

    def _args(self, level, names, nid, ports):
        return [
            self._arg(level, names, e) for port in ports for e in level.incoming[nid].get(port, [])
        ]

    def comment(self, key, node, hints):
        return node_comment(node.id, node.position, hints.get(key))

    # -- classes ----------------------------------------------------------------------------
    def classes(self, hints):
        """The class of every definition an instance uses, a nested one before its user."""
        written, out = set(), []

        def write(name):
            if name in written:
                return
            written.add(name)
            for n in self.defs[name].nodes:
                if n.op == MODULE_OP:
                    write(n.params["module"])
            texts = {self.class_lines(name, p, hints) for p in self.paths[name]}
            if len(texts) > 1:
                raise Unwritable(f"module {name} makes other layers on its instances' inputs")
            out.extend(texts.pop() + ("", ""))

        for name in self.used:
            write(name)
        return out

    def class_lines(self, name, prefix, hints):
        """The class of definition `name`, its layers shaped by the instance at `prefix`."""
        m, level, attrs = self.defs[name], self.levels[name], self.attrs[name]
        lib = self.lib
        names = {}  # inner id (or (instance, port)) -> the expression of its value in forward
        init, body = ["super().__init__()"], []
        for nid in level.order:
            n = level.nodes[nid]
            flat = prefix + nid
            if n.op == INPUT_OP:
                names[nid] = attrs[nid]
            elif n.op == OUTPUT_OP:
                names[nid] = self._args(level, names, nid, ["input"])[0]
            elif n.op == MODULE_OP:
                sub = n.params["module"]
                init.append(f"self.{attrs[nid]} = {self.cls[sub]}()")
                lead = nid + SEP
                own = {r[len(lead) :]: v for r, v in self.bare(name).items() if r.startswith(lead)}
                init += self.adjustments(f"self.{attrs[nid]}", sub, own, prefix + nid + SEP)
                outs = self.defs[sub].outputs
                for port in outs:
                    names[(nid, port)] = attrs[(nid, port)]
                args = self._args(level, names, nid, self.defs[sub].inputs)
                call = f"self.{attrs[nid]}({', '.join(args)})"
                lhs = ", ".join(names[(nid, p)] for p in outs)
                body.append(f"{lhs} = {call}  {self.comment((name, nid), n, hints)}")
            else:
                spec = self.ex.specs[flat]
                params = resolved_params(spec, n.params)
                if spec.source:
                    names[nid] = f"self.{attrs[nid]}"
                    code = self._stored(name, f"self.{attrs[nid]}", spec, params)
                    # (each object its own tensor: the loaded one is shared by every call)
                    code = f"{code}.clone()" if code else _source_code(lib, spec, params)
                    if self.ex.rg[flat]:
                        code = f"nn.Parameter({code})"
                    note = self.comment((name, nid), n, hints)
                    init.append(f"self.{attrs[nid]} = {code}  {note}")
                elif spec.layer is not None:
                    x = self.ex._layer_input(flat)
                    layer = f"self.{attrs[nid]}"
                    self.ex.sidecar.scope = self.scope(name)
                    try:
                        init += export_layers.declaration(lib, spec, params, x, layer, self.sidecar)
                    finally:
                        self.ex.sidecar.scope = ""
                    arg = self._args(level, names, nid, [p.name for p in spec.inputs])[0]
                    names[nid] = attrs[nid]
                    call = export_layers.call(spec, params, x, layer, arg)
                    body.append(f"{attrs[nid]} = {call}  {self.comment((name, nid), n, hints)}")
                else:
                    args = self._args(level, names, nid, [p.name for p in spec.inputs])
                    names[nid] = attrs[nid]
                    code = spec.code(lib, args, params)
                    body.append(f"{attrs[nid]} = {code}  {self.comment((name, nid), n, hints)}")
        ports = self._ports([level.nodes[o] for o in m.outputs])
        body.append(f"return {', '.join(names[o] for o in m.outputs)}{ports}")
        head = [f"class {self.cls[name]}(nn.Module):"]
        if m.doc.strip():
            head.append(f"    {_docstring(m.doc.strip())}")
            head.append("")
        ins = ", ".join(["self"] + [attrs[i] for i in m.inputs])
        lines = head + ["    def __init__(self):"] + ["        " + s for s in init]
        ports = self._ports([level.nodes[i] for i in m.inputs])
        lines += ["", f"    def forward({ins}):{ports}"] + ["        " + s for s in body]
        return tuple(lines)

    @property
    def sidecar(self):
        return self.ex.sidecar

    def scope(self, name):
        """The prefix of the names of definition `name`'s own values in the weights file (a
        model's none: its names are the model's state_dict keys)."""
        return f"{self.cls[name]}."

    def _stored(self, name, expr, spec, params):
        """The weights file's tensor for a source of definition `name` (None: inline)."""
        found = sidecar_source(spec, params)
        if found is None:
            return None
        self.sidecar.scope = self.scope(name) if name is not None else ""
        try:
            return self.sidecar.ref(expr, *found)
        finally:
            self.sidecar.scope = ""

    # -- an instance's own values -------------------------------------------------------------
    def adjustments(self, obj, name, actual, flat_prefix):
        """The lines that give the object `obj` (a `name()` just made) the values `actual`
        ({path inside: (spec, params)}) where they differ from what `name()` makes; the
        layers' input stand-ins from the flat nodes under `flat_prefix`."""
        lib, copies, lines = self.lib, [], []
        for rel, (spec, made) in self.bare(name).items():
            got = actual.get(rel)
            if got is None or got[1] == made or spec.name in (INPUT_OP, OUTPUT_OP):
                continue
            params = got[1]
            path = f"{obj}.{self.attr_path(name, rel)}"
            if spec.source:
                code = _source_code(lib, spec, params)
                if _stand_in(spec, params) != _stand_in(spec, made):
                    raise Unwritable(f"{flat_prefix}{rel} has another shape than {name}() makes")
                if code != _source_code(lib, spec, made):
                    code = self._stored(None, path, spec, params) or code
                    copies.append(f"{path}.copy_({code})")
            elif spec.layer is not None:
                x = self.ex._layer_input(flat_prefix + rel)
                seed = params.get("seed") or 0
                if export_layers.draws_init(spec) and seed != (made.get("seed") or 0):
                    cls, bias = spec.layer.cls(x, params), bool(params.get("bias", True))
                    lines += export_layers.seed_lines(lib, cls, path, seed, True, bias)
                new = export_layers.after_made(lib, spec, params, x, path)
                old = export_layers.after_made(lib, spec, made, x, path)
                if new != old:  # (eval() again only where its mode differs from the class's)
                    new = export_layers.after_made(lib, spec, params, x, path, self.sidecar)
                    lines += [s for s in new if not s.startswith(f"{path}.eval()")]
                    evals = [any(s.startswith(f"{path}.eval()") for s in d) for d in (new, old)]
                    if evals[0] != evals[1]:
                        lines.append(f"{path}.eval()" if evals[0] else f"{path}.train()")
            else:
                x = self._probe_args(spec)
                if spec.code(lib, x, params) != spec.code(lib, x, made):
                    raise Unwritable(f"{flat_prefix}{rel} has params of its own ({spec.name})")
        if copies:
            lines.append(f"with {lib}.no_grad():  # {obj}'s own values (its seed, its state)")
            lines += ["    " + c for c in copies]
        return lines

    def _probe_args(self, spec):
        return [f"in{i}" for i, _ in enumerate(spec.inputs)]

    def attr_path(self, name, rel):
        """`g.b` for the path `g/b` inside definition `name`: attribute by attribute."""
        head, _, rest = rel.partition(SEP)
        attr = self.attrs[name][head]
        if not rest:
            return attr
        sub = self.levels[name].nodes[head].params["module"]
        return f"{attr}.{self.attr_path(sub, rest)}"

    # -- the top level ------------------------------------------------------------------------
    def model_lines(self):
        """Each top-level instance made, then given its own values."""
        out = []
        for nid, obj in self.obj.items():
            name = self.top.nodes[nid].params["module"]
            out.append(f"{obj} = {self.cls[name]}()")
            lead = nid + SEP
            actual = {
                fid[len(lead) :]: (self.ex.specs[fid], self.ex.params[fid])
                for fid in self.ex.order
                if fid.startswith(lead)
            }
            out += self.adjustments(obj, name, actual, lead)
        return out

    def call_lines(self, nid, hints):
        """`l1_y = l1(x)  # node l1 ...`: a top-level instance called."""
        n = self.top.nodes[nid]
        m = self.defs[n.params["module"]]
        names = dict(self.ex.var)
        names.update(self.out)
        args = self._args(self.top, names, nid, m.inputs)
        lhs = ", ".join(self.out[(nid, p)] for p in m.outputs)
        comment = f"  {self.comment(nid, n, hints)}" if self.placed else ""
        return [f"{lhs} = {self.obj[nid]}({', '.join(args)}){comment}"]

    def _ports(self, nodes):
        """The `# ports` comment of a forward's inputs or its return ('' where not placed)."""
        return f"  {ports_comment(nodes, _own_params)}" if self.placed else ""

    def shows(self, nid):
        """The results of a top-level instance: its outputs, then each source's value and
        gradient and each layer's parameter gradients inside it (at any depth)."""
        ex, lead, out = self.ex, nid + SEP, []
        name = self.top.nodes[nid].params["module"]
        for port in self.defs[name].outputs:
            fid, var = lead + port, self.out[(nid, port)]
            out.append(f"show('value', {fid!r}, {var})")
            if ex.target and ex.rg.get(fid):
                out.append(f"show('grad', {fid!r}, {var}.grad)")
        for fid in ex.order:
            if not fid.startswith(lead):
                continue
            spec = ex.specs[fid]
            if not spec.source and spec.layer is None:
                continue
            path = f"{self.obj[nid]}.{self.attr_path(name, fid[len(lead) :])}"
            if spec.source:
                out.append(f"show('value', {fid!r}, {path})")
                if ex.target and ex.rg[fid]:
                    out.append(f"show('grad', {fid!r}, {path}.grad)")
            elif spec.layer is not None and ex.target:
                for p in ex._layer_parameters(fid):
                    out.append(f"show('grad', {f'{fid}.{p}'!r}, {path}.{p}.grad)")
        return out

    def object_path(self, fid):
        """`l1.g.fc` for the flat id `l1/g/fc`."""
        head, _, rest = fid.partition(SEP)
        name = self.top.nodes[head].params["module"]
        return f"{self.obj[head]}.{self.attr_path(name, rest)}"

    # -- the script ---------------------------------------------------------------------------
    def check_target(self):
        """Unwritable where backward starts inside a module, at a value forward keeps."""
        t = self.ex.target
        if t is not None and t not in self.ex.var:
            raise Unwritable(f"the target {t} is inside a module")
        if t is not None and SEP in t and t not in {k[0] + SEP + k[1] for k in self.out}:
            raise Unwritable(f"the target {t} is inside a module")

    def script(self, hints):
        ex = self.ex
        lines = ex.preamble(uses_nn=True, then_class=True)
        lines.append(self.sections[0])
        for m in self.doc.modules:
            if m.name not in self.paths:  # (its layers' sizes come from an instance's input)
                lines.append(f"# (module {m.name} has no instance: not written)")
        lines += self.classes(hints)
        lines.append(self.sections[1])
        lines += self.model_lines()
        lines += ["", "", self.sections[2]]
        for nid in self.top.order:
            if nid in self.obj:
                lines += self.call_lines(nid, hints)
            else:
                lines += ex._node_lines(nid, hints)
        if ex.target:
            kept = []
            for nid in self.top.order:
                if nid in self.obj:
                    name = self.top.nodes[nid].params["module"]
                    for port in self.defs[name].outputs:
                        if ex.rg.get(nid + SEP + port):
                            kept.append(self.out[(nid, port)])
                elif ex.rg[nid] and not ex.specs[nid].source:
                    kept.append(ex.var[nid])
            retain = retain_lines(kept) if kept and self.retains and ex.trace else []
            lines += ex.backward_lines(ex.var[ex.target], retain)
        return "\n".join(lines + self.result_lines()) + "\n"

    def result_lines(self):
        """The results section: the target's value, or with the trace option every top-level
        value and gradient (a model's: model.py)."""
        ex = self.ex
        if not ex.trace:
            return self.printed_results()
        lines = ["", printout.TRACE_HEADING]
        for nid in self.top.order:
            if nid in self.obj:
                lines += self.shows(nid)
            else:
                lines += ex._shows(nid) if ex.target else ex._shows(nid)[:1]
        return lines

    def printed_results(self):
        """What a person prints: the target's value; with no target, the values of the top
        level's ends (an instance's outputs, or a node's value)."""
        ex, lines = self.ex, ["", "# -- results"]
        if ex.target:
            return lines + [printout.value_line(ex.var[ex.target], ex.meta.get(ex.target))]
        used = {e.source for e in self.top.graph.edges}
        for nid in self.top.order:
            if nid in used:
                continue
            if nid in self.obj:
                name = self.top.nodes[nid].params["module"]
                for port in self.defs[name].outputs:
                    meta = ex.meta.get(nid + SEP + port)
                    lines.append(printout.value_line(self.out[(nid, port)], meta))
            else:
                lines.append(printout.value_line(ex.var[nid], ex.meta.get(nid)))
        return lines

    # -- hints: what the code cannot say, in the node comments ---------------------------------
    def initial_hints(self):
        hints = {}
        for nid, n in self.top.nodes.items():
            if n.label is not None:
                hints[nid] = {"label": n.label}
        for name in self.used:
            for n in self.defs[name].nodes:
                if n.label is not None and n.op not in (INPUT_OP, OUTPUT_OP):
                    hints[(name, n.id)] = {"label": n.label}
        return hints

    def add_hints(self, hints, back):
        """Add to `hints` whatever `back` (the script read back) got wrong; True if any. The
        instances' seeds first, their states once every seed is right: the importer reads a
        state's seeds relative to the instance seeds around it."""
        for seeds_only in (True, False):
            changed = self._hint_level(hints, None, self.doc.nodes, back.nodes, seeds_only)
            got = {m.name: m for m in back.modules}
            for name in self.used:
                b = got.get(self.cls[name])
                if b is not None:
                    nodes = [n for n in self.defs[name].nodes if n.op not in (INPUT_OP, OUTPUT_OP)]
                    changed = self._hint_level(hints, name, nodes, b.nodes, seeds_only) or changed
            if changed:
                return True
        return False

    def _hint_level(self, hints, name, nodes, back_nodes, seeds_only):
        got = {n.id: n for n in back_nodes}
        changed = False
        for node in nodes:
            b = got.get(node.id)
            if b is None:
                continue
            key = node.id if name is None else (name, node.id)
            h = hints.setdefault(key, {})
            if b.op != node.op:
                if h.get("op") != node.op:
                    h["op"] = node.op
                    changed = True
            else:
                want, have = _params(node), _params(b)
                if node.op == MODULE_OP and seeds_only:
                    want = {"seed": want["seed"]}
                for k, v in want.items():
                    if have.get(k, _MISSING) != v and h.get("params", {}).get(k, _MISSING) != v:
                        h.setdefault("params", {})[k] = v
                        changed = True
            if not h:
                del hints[key]
        return changed


_MISSING = object()


def _params(node):
    """A node's params with their defaults (an instance: module, seed 0 and state {})."""
    if node.op == MODULE_OP:
        p = node.params
        return {"module": p.get("module"), "seed": p.get("seed", 0), "state": p.get("state") or {}}
    spec = registry.get(node.op)
    return resolved_params(spec, node.params) if spec is not None else dict(node.params)


def _own_params(node):
    """A port node's params that are not its op's defaults (a module_input's `shape`)."""
    spec = registry.get(node.op)
    return {
        k: v for k, v in node.params.items() if spec.param(k) is None or spec.param(k).default != v
    }


def _source_code(lib, spec, params):
    """A source's tensor as code, without requires_grad (nn.Parameter or copy_ around it)."""
    if spec.name in ("tensor", "parameter"):
        return tensor_code(lib, [], params, False)
    return spec.code(lib, [], params)


def _stand_in(spec, params):
    try:
        with eg.no_grad():
            t = spec.run(OpContext(), [], params)
        return tuple(t.shape), str(t.dtype)
    except Exception:
        return None


def _docstring(text):
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in body)
    return f'"""{body}"""'
