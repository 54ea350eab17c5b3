"""Documents with modules that the classes (export/classes.py) cannot say exactly are exported
as their flat graph (modules.flatten: what every run runs), with the flat ids made plain: `d1/w`,
the node `w` inside the instance `d1`, becomes `d1_w` (the importer reads ids back from the node
comments, and a `/` is no id a document may have).
"""

import re

from ..document.format import ID_PATTERN
from ..document.modules import SEP, flatten

_ID = re.compile(ID_PATTERN)


def flat_for_export(doc):
    """The document to export and {its id: the flat id} for the renamed nodes: `doc` itself
    when it has no modules."""
    if not doc.modules:
        return doc, {}
    flat = flatten(doc)
    taken = {n.id for n in flat.nodes if SEP not in n.id}
    node_ids = {}
    for n in flat.nodes:
        if SEP in n.id:
            node_ids[n.id] = _plain(n.id, taken)
    edge_taken = {e.id for e in flat.edges if SEP not in e.id}
    edge_ids = {e.id: _plain(e.id, edge_taken) for e in flat.edges if SEP in e.id}

    def nid(x):
        return node_ids.get(x, x)

    nodes = [n.model_copy(update={"id": nid(n.id)}) for n in flat.nodes]
    edges = [
        e.model_copy(
            update={
                "id": edge_ids.get(e.id, e.id),
                "source": nid(e.source),
                "target": nid(e.target),
            }
        )
        for e in flat.edges
    ]
    update = {"nodes": nodes, "edges": edges}
    if flat.target is not None:
        update["target"] = nid(flat.target)
    if flat.training is not None:
        t = flat.training
        moved = {"loss": nid(t.loss)}
        if t.output is not None:
            moved["output"] = nid(t.output)
        update["training"] = t.model_copy(update=moved)
    return flat.model_copy(update=update), {v: k for k, v in node_ids.items()}


def _plain(path, taken):
    """`path` with its separators made `_`, not in `taken` (then added to it), at most 64
    characters."""
    base = path.replace(SEP, "_")[:60]
    name, k = base, 2
    while name in taken or not _ID.match(name):
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name
