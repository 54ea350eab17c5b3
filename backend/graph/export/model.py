"""A flat graph written as the model a PyTorch user writes: the computation from its data
inputs to the prediction its loss reads becomes one `nn.Module` class named after the graph,
and the loss is computed outside it.

    class LenetDigits(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            ...
        def forward(self, data):
            ...
            return logits

    model = LenetDigits()
    logits = model(data)
    loss = F.cross_entropy(logits, labels)

How: the document is rewritten as a document with one module definition (the model's nodes,
a module_input per data input, one module_output) and one instance of it (`as_model`), and
classes.ClassWriter writes that; the script says so in MARK, and the importer reads it
back as the flat graph (importing/model_graph.py, before the training loop is read, so that
the loop's loss and output name flat nodes). The script prints the loss, and the accuracy
where the model classifies; with the trace option, under the original ids, the loss and every
parameter's gradient (what a PyTorch user reaches from outside `forward`).

A graph stays flat (with the sentence `as_model` gives) where the model cannot say it: `if`
nodes or in-place ops (lessons on what each statement does), lesson steps with run options
(teaching options run on the flat graph), no layer (a lesson on each value's gradient, which a
model would hide inside `forward`), no loss node of two inputs as the target, or a value inside
the model read by anything but the loss; and wherever `to_python(..., model=False)` asks for the
flat form.
"""

import re

from .. import registry
from ..document.format import Edge, ModuleDef, Node
from ..document.modules import INPUT_OP, MODULE_OP, OUTPUT_OP, SEP
from ..document.validate import resolved_params, topological_order
from ..importing.importer import ImportFailed, from_python
from ..importing.model_graph import MARK
from . import printout
from .classes import ClassWriter


def class_name(text):
    """The graph's name in CamelCase ("LeNet on digits" -> "LeNetOnDigits"); "Model" when
    nothing of it is left."""
    words = re.findall(r"[A-Za-z0-9]+", str(text or ""))
    name = "".join(w[:1].upper() + w[1:] for w in words)[:60]
    if not name or name[0].isdigit():
        name = "Model" + name[:54]
    return name


def as_model(doc):
    """(the document as one module instance, the instance's id, {flat id: original id}), or
    (None, the sentence why it stays flat)."""
    specs = {n.id: registry.get(n.op) for n in doc.nodes}
    if any(s.branches for s in specs.values()):
        return None, "it has an if node, which a model's forward would hide"
    if any(s.extra.get("writes") for s in specs.values()):
        return None, "it has in-place ops, a lesson on each statement's effect"
    if any(step.options is not None for step in doc.lesson):
        return None, "its lesson steps run options on the flat graph"
    if not any(s.layer is not None for s in specs.values()):
        return None, "it has no layer: every value and gradient is the lesson"
    nodes = {n.id: n for n in doc.nodes}
    incoming = {n.id: [] for n in doc.nodes}
    for e in doc.edges:
        incoming[e.target].append(e)
    t = doc.target
    if t is None or len(incoming[t]) < 2 or specs[t].category != "losses":
        return None, "its target is not a loss of a prediction and a target"
    first = specs[t].inputs[0].name
    pred = next((e.source for e in incoming[t] if e.targetPort == first), None)
    if pred is None or specs[pred].source or specs[pred].category == "data":
        return None, "its loss reads no computed prediction"
    inside, inputs, stack = set(), set(), [pred]
    while stack:
        n = stack.pop()
        if n in inside or n in inputs:
            continue
        s, p = specs[n], nodes[n].params
        if s.category == "data" or (s.name == "tensor" and not p.get("requires_grad")):
            inputs.add(n)  # data: the model's input
            continue
        inside.add(n)
        stack += [e.source for e in incoming[n]]
    if not inputs:
        return None, "its prediction reads no data input"
    for e in doc.edges:
        if e.source in inside and e.target not in inside and e.source != pred:
            return None, f"{e.target} reads {e.source}, a value inside the model"
    order, _ = topological_order(doc)
    ids = set(nodes)
    inst = _fresh("model", ids)
    out_port = _fresh(f"{pred}_out", inside | inputs)
    model_inputs = [
        n for n in order if n in inputs and any(e.source == n for m in inside for e in incoming[m])
    ]
    inner_nodes = [nodes[n] for n in order if n in inside]
    inner_nodes += [Node(id=i, op=INPUT_OP, position=nodes[i].position) for i in model_inputs]
    inner_nodes.append(Node(id=out_port, op=OUTPUT_OP, position=nodes[pred].position))
    inner_edges, top_edges = [], []
    for e in doc.edges:
        if e.target in inside:
            inner_edges.append(e)  # (a data input's edge now comes from its port node)
        elif e.source == pred:
            update = {"source": inst, "sourcePort": out_port}
            top_edges.append(e.model_copy(update=update))
        else:
            top_edges.append(e)
    taken = {e.id for e in doc.edges}
    out_edge = _fresh(f"{pred}_to_out", taken)
    inner_edges.append(Edge(id=out_edge, source=pred, target=out_port, targetPort="input"))
    for i in model_inputs:
        eid = _fresh(f"{i}_in", taken)
        top_edges.append(Edge(id=eid, source=i, target=inst, targetPort=i))
    name = class_name(doc.name)
    definition = ModuleDef(
        name=name, nodes=inner_nodes, edges=inner_edges, inputs=model_inputs, outputs=[out_port]
    )
    instance = Node(id=inst, op=MODULE_OP, params={"module": name}, position=nodes[pred].position)
    top = [n for n in doc.nodes if n.id not in inside] + [instance]
    update = {"version": 2, "modules": [definition], "nodes": top, "edges": top_edges}
    if doc.training is not None:
        # (the loss's input, the model's output, is the output a training infers)
        update["training"] = doc.training.model_copy(update={"output": None})
    original = {inst + SEP + n: n for n in inside}
    original[inst + SEP + out_port] = pred
    return doc.model_copy(update=update), (inst, original)


def _fresh(base, taken):
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def model_writer(doc, ex, names):
    """The ClassWriter of the graph as a model (export/classes.py imports this module's
    document), or (None, why) where the graph stays flat."""
    mdoc, found = as_model(doc)
    if mdoc is None:
        return None, found

    class ModelWriter(ClassWriter):
        """Writes the model document, prints under the flat graph's ids."""

        retains = False  # (it prints the loss and the parameters' gradients: leaves' .grad)
        # no `# node` comment on `model(...)` and no `# ports` comments: the importer unpacks
        # the one instance (importing/model_graph.py), so they say nothing the graph keeps;
        # placed again where the script would not read back the same without them
        placed = False
        sections = ("# -- the model", "", "# -- the data, the prediction and the loss")

        def __init__(self):
            inst, self.original = found
            super().__init__(mdoc, ex(mdoc), names)
            port = self.defs[self.top.nodes[inst].params["module"]].outputs[0]
            flat = inst + SEP + port
            # the prediction keeps its own name at the top: `logits = model(data)`
            del self.out[(inst, port)]
            var = self._fresh(self.ex.var[self.original_of(flat, back=True)], {})
            self.out[(inst, port)] = self.ex.var[flat] = var
            self.ex.note = MARK[2:]
            self.ex.builds = "the model and its data"
            if self.ex.trace:
                self.ex.prints = (
                    'prints the loss and each parameter\'s gradient ("value <node> <json>", '
                    '"grad <parameter> <json>")'
                )
            else:
                self.ex.prints = "prints the loss" + (
                    " and the accuracy" if self.classified() else ""
                )
            output = doc.training.output if doc.training is not None else None
            self.training_output = output  # written in the loop's hint (export/training_loop.py)

        def reads_back(self, source):
            """Whether `source` imports as the flat graph it was exported from (ids, ops,
            params, places, labels, wires, target); where not, the comments left
            out are placed again (the caller writes the script once more)."""

            try:
                same = _same_flat(doc, from_python(source, weights=self.sidecar.tensors))
            except ImportFailed:
                same = False
            if not same:
                self.placed = True
            return same

        def scope(self, name):
            return ""  # (the model's values: named as its state_dict names them)

        def original_of(self, key, back=False):
            if back:  # the flat id of the node the output port carries
                pred = self.original[key]
                return next(k for k, v in self.original.items() if v == pred and k != key)
            head, dot, rest = key.partition(".")
            return self.original.get(head, head) + dot + rest

        def shows(self, nid):
            return [_SHOWN.sub(lambda m: self._renamed(m), s) for s in super().shows(nid)]

        def classified(self):
            """(the prediction's variable, the labels') where the model classifies the labels
            its loss reads (export/printout.py), else None."""
            ex = self.ex
            pred, labels = (
                [e.source for e in ex.incoming[ex.target][p.name]]
                for p in ex.specs[ex.target].inputs[:2]
            )
            if len(pred) != 1 or len(labels) != 1:
                return None
            if not printout.classifies(ex.meta.get(pred[0]), ex.meta.get(labels[0])):
                return None
            return ex.var[pred[0]], ex.var[labels[0]]

        def result_lines(self):
            """What a person prints after backward: the loss and the accuracy; with the trace
            option the loss and each parameter's gradient (in one loop over the model's
            parameters where each prints under its own name)."""
            ex, target = self.ex, self.ex.target
            if not ex.trace:
                lines = [
                    "",
                    "# -- results",
                    printout.value_line(ex.var[target], ex.meta.get(target)),
                ]
                found = self.classified()
                return lines + ([printout.accuracy_line(*found)] if found else [])
            lines = ["", "# -- results: the loss and each parameter's gradient, one line each"]
            lines.append(f"show('value', {target!r}, {ex.var[target]})")
            grads = [s for nid in self.obj for s in self.shows(nid) if _PARAM_GRAD.match(s)]
            (inst,) = self.obj.values()
            if all(m.group(1) == m.group(2) for m in map(_PARAM_GRAD.match, grads)):
                lines.append(f"for name, p in {inst}.named_parameters():")
                lines.append("    show('grad', name, p.grad)")
            else:
                lines += grads
            return lines

        def _renamed(self, m):
            return f"show({m.group(1)}, {self.original_of(m.group(2))!r}"

    return ModelWriter(), None


def _same_flat(a, b):
    """Whether documents a and b have the same nodes (id, op, params, position, label), wires
    and target (the training loop is written, and read back, after: export/training_loop.py)."""

    def nodes(d):
        out = {}
        for n in d.nodes:
            spec = registry.get(n.op)
            params = resolved_params(spec, n.params) if spec is not None else n.params
            out[n.id] = (n.op, params, n.position.x, n.position.y, n.label)
        return out

    def wires(d):
        return sorted((e.source, e.sourcePort, e.target, e.targetPort) for e in d.edges)

    return nodes(a) == nodes(b) and wires(a) == wires(b) and a.target == b.target


_SHOWN = re.compile(r"show\(('\w+'), '([^']*)'")
# a parameter's gradient printed under its key: show('grad', 'fc1.weight', model.fc1.weight.grad)
_PARAM_GRAD = re.compile(r"show\('grad', '([^']*)', \w+\.([\w.]+)\.grad\)$")
