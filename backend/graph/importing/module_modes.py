"""`model.eval()` / `model.train()` on an instance of a script's nn.Module class.

An nn.Module is in train mode until eval() is called, and the layers whose train() and eval()
differ (dropout, batch norm: registry `layer.modes`) compute accordingly. A definition is read
in train mode; an instance put in eval mode before its first call is a node of a variant of its
definition (`Net_eval`) whose such layers have the mode `auto` (eval() in a forward or backward
run, as layer_forms.set_mode gives a declared layer), nested module definitions included. One
mode per instance: eval() or train() after its first call is a problem at its line (the calls
before and after would need two modes of one set of parameters)."""

import copy

from .. import registry
from .problems import Unsupported

_MODE = {"eval": "auto", "train": "train"}


def set_instance_mode(reader, name, attr, call):
    """`name.eval()` / `name.train()`, name an instance of ClassReader `reader`."""
    if call.args or call.keywords:
        raise Unsupported(f"{attr}() takes no arguments here")
    inst = reader.instances[name]
    if inst["used"]:
        shown = name.removeprefix("self.")
        raise Unsupported(
            f"{shown}.{attr}() after {shown} was called: the importer reads one mode per "
            f"instance, so call {attr}() before its first call"
        )
    inst["mode"] = _MODE[attr]


def moded(reader, dname, mode):
    """The name of definition `dname` with its layers in `mode` (itself where nothing
    changes), made the first time it is asked for."""
    key = ("mode", dname, mode)
    if key in reader.names:
        return reader.names[key]
    d = reader.defs[dname]
    nodes = copy.deepcopy(d["nodes"])
    changed = False
    for n in nodes:
        spec = registry.get(n["op"])
        if n["op"] == "module":
            inner = moded(reader, n["params"]["module"], mode)
            changed = changed or inner != n["params"]["module"]
            n["params"]["module"] = inner
        elif spec is not None and spec.layer is not None and spec.layer.modes:
            changed = changed or n["params"].get("mode") != mode
            n["params"]["mode"] = mode
    name = dname
    if changed:
        name, k = f"{dname}_{'eval' if mode == 'auto' else mode}", 2
        while name in reader.defs or name in reader.classes:
            name, k = f"{dname}_{'eval' if mode == 'auto' else mode}_{k}", k + 1
        reader.defs[name] = {**d, "name": name, "nodes": nodes}
        reader.params[name] = reader.params.get(dname, set())
    reader.names[key] = name
    return name


def unused_unmoded(reader, d):
    """Whether definition `d` has a variant of another mode and no node of the document uses
    it (every instance of it was put in eval mode): left out of the document."""
    variants = [v for k, v in reader.names.items() if k[0] == "mode" and k[1] == d["name"]]
    if all(v == d["name"] for v in variants):
        return False
    used = {n["params"].get("module") for n in reader.imp.graph.nodes.values()}
    for other in reader.defs.values():
        if other is not None and other is not d:
            used |= {n["params"].get("module") for n in other["nodes"] if n["op"] == "module"}
    return d["name"] not in used
