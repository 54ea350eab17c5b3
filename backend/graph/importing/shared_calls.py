"""An instance called more than once, as PyTorch runs it: one set of parameters for all its
calls, whose gradients add up.

    blk = Block()
    y = blk(blk(x))

A module node holds its own parameters, so the calls cannot each be a node of `Block` as it is.
At the second call the instance is made to share: its parameters (the tensors its `__init__`
made, nn.Parameter and the like, at any depth of the definition's own lines) become tensor
nodes of the graph around it, made once (`blk.w`), and each call is a node of a variant of the
definition, `Block_shared`, in which each parameter is an input port of the same id, wired from
that one node. The gradient reaching `blk.w` is then the sum over the calls, as in PyTorch; the
node made for the first call is changed over to the variant. The instance's loaded values
(state_loads.py) go to the shared nodes.

A parameter kept inside a node cannot be shared that way: a layer's weights (nn.Linear and the
other layer ops store theirs in the node) and the parameters of a module used inside. Such an
instance called twice is refused at the line, saying what to write."""

from .. import registry
from ..document.modules import SEED_RANGE
from .problems import Unsupported

SHAREABLE = ("tensor", "parameter", "scalar")  # source ops whose node can feed several calls


def share(reader, name):
    """Make instance `name` of `reader` (a ClassReader) shared, once: its parameter nodes
    made in reader's graph, its earlier module nodes changed to the variant and wired."""
    inst = reader.instances[name]
    if "shared" in inst:
        return
    base = reader.defs[inst["def"]]
    shown = inst.get("shown") or name.removeprefix("self.")
    params = _parameters(reader, inst, base, shown)
    if not params:
        inst["shared"] = {}  # nothing to share: each call is a node of the definition as it is
        return
    variant = _variant(reader, inst["def"], base, [nid for nid, _ in params])
    imp, own = reader.imp, {}
    for nid, p in params:
        node = imp.add_node(p.pop("op"), p, [], f"{shown}.{nid}")
        imp.graph.nodes[node]["param"] = True  # a parameter of the module being read, if any
        own[nid] = node
    for n in inst.get("nodes", ()):  # the nodes of the calls before (an if may rename one)
        n["params"]["module"] = variant
        state = n["params"].get("state")
        if state:
            kept = {k: v for k, v in state.items() if k not in own}
            if kept:
                n["params"]["state"] = kept
            else:
                n["params"].pop("state")
        for port, src in own.items():
            imp.graph.edges.append((src, n["id"], port))
    inst["def"], inst["shared"] = variant, own
    if inst.get("state"):
        inst["state"] = {k: v for k, v in inst["state"].items() if k not in own}


def _parameters(reader, inst, base, shown):
    """[(inner node id, the params of the node that replaces it)] of the instance's
    parameters; Unsupported where one is kept inside a node."""
    own = reader.params.get(inst["def"], set())
    state = inst.get("state") or {}
    offset = inst.get("seed", 0)
    out = []
    for n in base["nodes"]:
        spec = registry.get(n["op"])
        # (a layer's node and a nested instance's are made where forward calls them)
        if n["op"] == "module" and _holds_parameters(reader, n["params"].get("module")):
            raise Unsupported(_refusal(shown, inst["cls"], n["id"], "a module with parameters"))
        if spec is not None and spec.layer is not None and spec.layer.state:
            raise Unsupported(_refusal(shown, inst["cls"], n["id"], f"a {n['op']} layer"))
        if n["id"] not in own or n["op"] not in SHAREABLE:
            continue
        p = dict(n["params"])
        if "seed" in p:  # (the seed flatten would run it with inside the instance)
            p["seed"] = (int(p["seed"]) + offset) % SEED_RANGE
        p.update(state.get(n["id"], {}))
        if spec.param("name") is not None:
            p["name"] = f"{shown}.{n['id']}"
        out.append((n["id"], {**p, "op": n["op"]}))
    return out


def _holds_parameters(reader, dname):
    """Whether definition `dname` (at any depth) has a parameter: a source that requires grad
    or a layer that stores weights."""
    d = reader.defs.get(dname)
    if d is None:
        return True
    for n in d["nodes"]:
        spec = registry.get(n["op"])
        if n["op"] == "module" and _holds_parameters(reader, n["params"].get("module")):
            return True
        if spec is not None and spec.layer is not None and spec.layer.state:
            return True
        if spec is not None and spec.source and n["params"].get("requires_grad"):
            return True
    return False


def _refusal(shown, cls, nid, what):
    return (
        f"'{shown}' is called a second time: PyTorch shares its parameters between the calls "
        f"(their gradients add up), and {cls}'s {nid!r} is {what}, whose weights are kept in "
        "its node, which two calls cannot share. For shared weights write them as "
        "nn.Parameter tensors (x @ self.w.T + self.b); for separate ones make one "
        f"{cls}(...) per call"
    )


def _variant(reader, dname, base, ports):
    """The name of the definition `dname` with the parameters `ports` as input ports (made
    once per definition)."""
    key = (dname, tuple(ports))
    if key in reader.variants:
        return reader.variants[key]
    taken = set(reader.defs) | set(reader.classes)
    name, k = f"{dname}_shared", 2
    while name in taken:
        name, k = f"{dname}_shared_{k}", k + 1
    nodes = [
        {"id": n["id"], "op": "module_input", "params": {}, "position": n["position"]}
        if n["id"] in ports
        else n
        for n in base["nodes"]
    ]
    reader.defs[name] = {**base, "name": name, "nodes": nodes, "inputs": base["inputs"] + ports}
    reader.params[name] = set()
    reader.variants[key] = name
    return name


def unused_base(reader, d):
    """Whether definition `d` has a shared variant and no node of the document uses it."""
    if not any(base == d["name"] for base, _ in reader.variants):
        return False
    used = {n["params"].get("module") for n in reader.imp.graph.nodes.values()}
    for other in reader.defs.values():
        if other is not None:
            used |= {n["params"].get("module") for n in other["nodes"] if n["op"] == "module"}
    return d["name"] not in used


def layer_refusal(name, cls):
    """Why layer `name` (an nn.<cls>) cannot be called a second time, and what to write."""
    shown = name.removeprefix("self.").replace(":linear", "")
    return (
        f"layer '{shown}' is called a second time: PyTorch shares its weights between the calls "
        "(their gradients add up), and a layer node keeps its own, so two nodes would not give "
        "PyTorch's gradients. For shared weights write them as nn.Parameter tensors "
        f"(x @ self.w.T + self.b); for separate ones make one nn.{cls}(...) per call"
    )
