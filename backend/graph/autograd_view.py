"""The autograd graph the engine recorded in a run, mapped to the editor's nodes.

Each engine node (a grad_fn such as MulBackward0, or an AccumulateGrad) becomes an entry with
its name, the editor node that made it, and its saved tensors' shapes. The aliases the executor
puts on edges are collapsed away: the view shows the graph as the user's code would make it."""

from engine.autograd.graph import AccumulateGrad, accumulator_of

from .summary import dtype_name


def autograd_record(target, owner, roots=None):
    """{"kind": "autograd", "nodes": [...], "edges": [...]} for the graph behind `target` (or
    behind every tensor of `roots`). `owner` maps engine nodes to ("node", id),
    ("edge", id) for the executor's aliases, or ("leaf", id, param)."""
    starts = []
    for t in [target] if target is not None else roots or []:
        if t is not None and t.grad_fn is not None:
            starts.append(t.grad_fn)
        elif t is not None and t.requires_grad:
            starts.append(accumulator_of(t))
    aliases = {n for n, who in owner.items() if who[0] == "edge"}

    def skip(node):
        while node in aliases:
            node = node.next_functions[0][0]
        return node

    # one walk: number each node when first seen, list its entry and its edges
    ids, entries, edges = {}, [], []
    stack = [skip(n) for n in starts]
    for n in stack:
        if n is not None and n not in ids:
            ids[n] = f"g{len(ids)}"
    while stack:
        node = stack.pop()
        if node is None:  # each node is pushed once, when it is first numbered
            continue
        who = owner.get(node)
        entry = {"id": ids[node], "name": type(node).__name__, "node": who[1] if who else None}
        if node.__class__ is AccumulateGrad:
            entry["param"] = who[2] if who and who[0] == "leaf" else None
            entry["variable_shape"] = list(node.variable._data.shape)
        else:
            info = node.saved_tensors_info
            entry["saved"] = (
                [{"shape": list(s), "dtype": dtype_name(d)} for s, d in info] if info else []
            )
        entries.append(entry)
        for i, (nxt, _) in enumerate(node.next_functions):
            if nxt is None:
                continue
            if aliases:
                nxt = skip(nxt)
            nid = ids.get(nxt)
            if nid is None:
                nid = ids[nxt] = f"g{len(ids)}"
                stack.append(nxt)
            edges.append({"source": entry["id"], "target": nid, "input": i})
    return {"kind": "autograd", "nodes": entries, "edges": edges}
