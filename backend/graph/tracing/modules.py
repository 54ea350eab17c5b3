"""The traced nodes grouped into module definitions, one per `nn.Module` class a person wrote.

fx's `nn_module_stack` says, for each node, the modules it was computed in. Every instance of a
class that is not PyTorch's own (`torch.nn` containers and activations are walked through, their
nodes belong to the module that holds them) becomes a `module` node of a definition: its nodes,
a `module_input` for each value it reads from outside (in the order it first reads them) and a
`module_output` for each it hands out. Instances whose definitions come out the same (the same
class, ops, params and wiring; weights aside) share one definition, each instance holding its
own weights in its `state`, as the editor's modules do; a class whose instances differ gets
`Block`, `Block_2`, ... Inner nodes get ids that do not depend on where the instance sits, so
that equal instances compare equal; the instance's id is its attribute path (`blocks.0`), so a
flat id `blocks.0/fc` reads as PyTorch's `blocks.0.fc`."""

import json

from .capture import CaptureError

# params that hold values (the weights), which instances of one definition may differ in
_VALUE_PARAMS = {
    "value",
    "weight",
    "bias_value",
    "running_mean",
    "running_var",
    "in_proj_weight",
    "in_proj_bias",
    "out_proj_weight",
    "out_proj_bias",
    "state",  # a nested instance's own weights
}


def _user_class(cls):
    return not (cls.__module__ or "").startswith("torch.")


def _groups(stack):
    """The user-class entries of a node's module stack, outermost first: [(key, path, cls)]."""
    return [(k, path, cls) for k, (path, cls) in stack.items() if _user_class(cls)]


def group_modules(built, target, layer_ids):
    """(nodes, edges, modules, target) of the top level, the nodes of user-class instances
    replaced by module nodes."""
    nodes = {n["id"]: n for n in built.nodes}
    order = [n["id"] for n in built.nodes]
    owner = {}  # node id -> [(key, path, cls)] of the instances it sits in
    for nid in order:
        stack = dict(built.stack.get(nid) or {})
        if nid in layer_ids and stack:
            stack.pop(next(reversed(stack)))  # the layer module itself: the node is the layer
        owner[nid] = _groups(stack)
    keys = {}
    for nid in order:
        for depth, (key, path, cls) in enumerate(owner[nid]):
            keys.setdefault(key, (depth, path, cls))
    if not keys:
        return list(nodes.values()), list(built.edges), [], target
    grouping = _Grouping(nodes, order, list(built.edges), owner, target)
    # innermost first: an instance's definition is made before the one that holds it
    for key in sorted(keys, key=lambda k: -keys[k][0]):
        depth, path, cls = keys[key]
        grouping.fold(key, depth, path, cls)
    # a target inside a module is its output port's node in the flat graph (`inner/out`)
    target = grouping.target
    if grouping.nodes[target]["op"] == "module":
        target = f"{target}/{grouping.target_port}"
    return (
        [grouping.nodes[i] for i in grouping.order],
        grouping.edges,
        grouping.definitions,
        target,
    )


class _Grouping:
    def __init__(self, nodes, order, edges, owner, target):
        self.nodes, self.order, self.edges, self.owner = nodes, order, edges, owner
        self.target = target
        self.target_port = "out"  # the target's output: a module instance's port once folded
        self.definitions = []
        self.by_signature = {}  # signature -> definition name
        self.names = set()

    def fold(self, key, depth, path, cls):
        members = [
            i for i in self.order if len(self.owner[i]) > depth and self.owner[i][depth][0] == key
        ]
        if not members:
            return
        inside = set(members)
        parent = self.owner[members[0]][:depth]
        inner_edges = [e for e in self.edges if e["source"] in inside and e["target"] in inside]
        into = [e for e in self.edges if e["source"] not in inside and e["target"] in inside]
        out_of = [e for e in self.edges if e["source"] in inside and e["target"] not in inside]

        # canonical inner ids: the layer's or parameter's own attribute path where the id is
        # one, else the op and its count in order
        rename, used, counts = {}, set(), {}
        prefix = f"{path}."
        for i in members:
            n = self.nodes[i]
            if n["op"] == "module":
                base = i  # a nested instance: already its path inside this one
            elif i.startswith(prefix) and "/" not in i:
                base = i[len(prefix) :]
            else:
                counts[n["op"]] = counts.get(n["op"], 0) + 1
                c = counts[n["op"]]
                base = n["op"] if c == 1 else f"{n['op']}_{c}"
            base = base.replace("/", "_")
            while base in used:
                base += "_"
            used.add(base)
            rename[i] = base

        inputs, input_of = [], {}  # module_input ids; outside source -> its module_input
        for e in into:
            src = (e["source"], e["sourcePort"])
            if src not in input_of:
                name = f"in{len(inputs)}"
                input_of[src] = name
                inputs.append(name)
        if len(inputs) == 1:
            input_of = {k: "x" for k in input_of}
            inputs = ["x"]
        outputs, output_of = [], {}
        sources = [(e["source"], e["sourcePort"]) for e in out_of]
        if self.target in inside:
            sources.append((self.target, self.target_port))
        for src in sources:
            if src not in output_of:
                output_of[src] = f"out{len(outputs)}"
                outputs.append(output_of[src])
        if len(outputs) == 1:
            output_of = {k: "out" for k in output_of}
            outputs = ["out"]
        if not outputs:
            raise CaptureError(f"model.{path}: its results are not used")

        inner_nodes = [{"id": x, "op": "module_input", "params": {}} for x in inputs]
        values = {}
        for i in members:
            n = dict(self.nodes[i])
            n["id"] = rename[i]
            params = dict(n.get("params") or {})
            kept = {k: params.pop(k) for k in list(params) if k in _VALUE_PARAMS}
            values[rename[i]] = kept
            if "name" in params:  # a leaf's variable name: its attribute in this class
                params["name"] = rename[i].replace(".", "_")
            n["params"] = {**params, **kept}
            n.pop("label", None)
            inner_nodes.append(n)
        inner_nodes += [{"id": o, "op": "module_output", "params": {}} for o in outputs]
        inner = []
        for e in inner_edges:
            inner.append({**e, "source": rename[e["source"]], "target": rename[e["target"]]})
        for e in into:
            port = input_of[(e["source"], e["sourcePort"])]
            inner.append({**e, "source": port, "sourcePort": "out", "target": rename[e["target"]]})
        for src, name in output_of.items():
            inner.append(
                {
                    "id": "",
                    "source": rename[src[0]],
                    "sourcePort": src[1],
                    "target": name,
                    "targetPort": "input",
                }
            )
        for k, e in enumerate(inner):
            e["id"] = f"e{k + 1}"

        definition = {
            "name": cls.__name__,
            "doc": f"{cls.__name__}, traced from the live module",
            "nodes": inner_nodes,
            "edges": inner,
            "inputs": inputs,
            "outputs": outputs,
        }
        name, state = self._definition(cls.__name__, definition, values)

        instance_id = path
        if parent:
            outer_path = parent[-1][1]
            instance_id = path[len(outer_path) + 1 :] if path.startswith(outer_path + ".") else path
        instance_id = self._free_id(instance_id, inside)
        params = {"module": name}
        if state:
            params["state"] = state
        instance = {"id": instance_id, "op": "module", "params": params}

        # the instance takes the members' place
        first = self.order.index(members[0])
        self.order = [i for i in self.order if i not in inside]
        self.order.insert(first, instance_id)
        for i in members:
            del self.nodes[i]
            del self.owner[i]
        self.nodes[instance_id] = instance
        self.owner[instance_id] = parent
        edges = [e for e in self.edges if e["source"] not in inside and e["target"] not in inside]
        wired = set()
        for e in into:  # one edge per input port, however many inner nodes read it
            port = input_of[(e["source"], e["sourcePort"])]
            if port not in wired:
                wired.add(port)
                edges.append({**e, "target": instance_id, "targetPort": port})
        for e in out_of:
            port = output_of[(e["source"], e["sourcePort"])]
            edges.append({**e, "source": instance_id, "sourcePort": port})
        self.edges = _dedupe(edges)
        if self.target in inside:
            self.target_port = output_of[(self.target, self.target_port)]
            self.target = instance_id

    def _definition(self, cls_name, definition, values):
        """(the definition's name, the instance's state): an equal definition is shared."""
        bare = {
            **definition,
            "nodes": [
                {**n, "params": {k: v for k, v in n["params"].items() if k not in _VALUE_PARAMS}}
                for n in definition["nodes"]
            ],
        }  # (the weights left out before anything is written: they are most of the bytes)
        signature = json.dumps(bare, sort_keys=True)
        name = self.by_signature.get(signature)
        if name is not None:
            return name, {i: v for i, v in values.items() if v}
        name = cls_name
        k = 1
        while name in self.names:
            k += 1
            name = f"{cls_name}_{k}"
        self.names.add(name)
        definition["name"] = name
        self.definitions.append(definition)
        self.by_signature[signature] = name
        return name, {}

    def _free_id(self, base, leaving):
        taken = set(self.nodes) - set(leaving)
        nid, k = base, 1
        while nid in taken:
            k += 1
            nid = f"{base}_{k}"
        return nid


def _dedupe(edges):
    """Edge ids unique again (an edge into an instance keeps its id; two may now coincide)."""
    seen, out = set(), []
    for e in edges:
        eid = e["id"]
        while eid in seen:
            eid += "_"
        seen.add(eid)
        out.append({**e, "id": eid})
    return out
