"""A script that says its graph as one model (MARK) read back as the flat graph it
was exported from: the one instance of the one class unpacked (modules.flatten), its port nodes
spliced out (an edge into an input port comes from the data node, one out of the output port
from the prediction) and the ids inside it without the instance's prefix."""

from ..document.modules import INPUT_OP, OUTPUT_OP, SEP, flatten

# the line export/model.py writes to have the class read back as the flat graph
MARK = "# (the graph as one model: Wiregrad reads this script back as its flat graph)"


def inlined(doc):
    """`doc` (one instance of one module definition) as its flat graph, ids as exported."""
    instances = [n for n in doc.nodes if n.op == "module"]
    if len(doc.modules) != 1 or len(instances) != 1:
        return doc  # not what the exporter writes: kept as read
    lead = instances[0].id + SEP
    flat = flatten(doc)
    ports = {n.id for n in flat.nodes if n.op in (INPUT_OP, OUTPUT_OP)}
    feed = {e.target: (e.source, e.sourcePort) for e in flat.edges if e.target in ports}

    def origin(nid, port):
        while nid in ports:
            nid, port = feed[nid]
        return nid, port

    def plain(nid):
        return nid[len(lead) :] if nid.startswith(lead) else nid

    taken, edges = set(), []
    for e in flat.edges:
        if e.target in ports:
            continue
        source, port = origin(e.source, e.sourcePort)
        eid, k = plain(e.id), 2
        while eid in taken:
            eid, k = f"{plain(e.id)}_{k}", k + 1
        taken.add(eid)
        update = {"id": eid, "source": plain(source), "sourcePort": port, "target": plain(e.target)}
        edges.append(e.model_copy(update=update))
    nodes = [n.model_copy(update={"id": plain(n.id)}) for n in flat.nodes if n.id not in ports]
    update = {"version": 1, "modules": [], "nodes": nodes, "edges": edges}
    if flat.target is not None:
        update["target"] = plain(origin(flat.target, "out")[0])
    if flat.training is not None:
        t, moved = flat.training, {"loss": plain(origin(flat.training.loss, "out")[0])}
        if t.output is not None:
            moved["output"] = plain(origin(t.output, "out")[0])
        update["training"] = t.model_copy(update=moved)
    return flat.model_copy(update=update)
