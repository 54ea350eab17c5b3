"""The autograd graph the engine recorded in a run, mapped to the editor's nodes.

Each engine node (a grad_fn such as MulBackward0, or an AccumulateGrad) becomes an entry with
its name, the editor node that made it, and its saved tensors' shapes. The aliases the executor
puts on edges are collapsed away: the view shows the graph as the user's code would make it."""

from engine.autograd.graph import AccumulateGrad

from .summary import dtype_name


def autograd_record(target, owner, roots=None):
    starts = []
    for t in [target] if target is not None else roots or []:
        if t is not None and t.grad_fn is not None:
            starts.append(t.grad_fn)
        elif t is not None and t.requires_grad:
            from engine.autograd.graph import accumulator_of

            starts.append(accumulator_of(t))

    ids, entries, edges = {}, [], []

    def skip_aliases(node):
        while node is not None and owner.get(node, ("",))[0] == "edge":
            node = node.next_functions[0][0]
        return node

    stack = [skip_aliases(n) for n in starts]
    seen = set()
    order = []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        for nxt, _ in node.next_functions:
            nxt = skip_aliases(nxt)
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    for k, node in enumerate(order):
        ids[node] = f"g{k}"
    for node in order:
        who = owner.get(node)
        entry = {"id": ids[node], "name": type(node).__name__, "node": who[1] if who else None}
        if isinstance(node, AccumulateGrad):
            entry["param"] = who[2] if who and who[0] == "leaf" else None
            entry["variable_shape"] = list(node.variable.shape)
        else:
            info = node.saved_tensors_info
            entry["saved"] = (
                [{"shape": list(s), "dtype": dtype_name(d)} for s, d in info] if info else []
            )
        entries.append(entry)
        for i, (nxt, _) in enumerate(node.next_functions):
            nxt = skip_aliases(nxt)
            if nxt is not None:
                edges.append({"source": ids[node], "target": ids[nxt], "input": i})
    return {"kind": "autograd", "nodes": entries, "edges": edges}
