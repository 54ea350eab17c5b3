"""The autograd graph the engine recorded in a run, mapped to the editor's nodes.

Each engine node (a grad_fn such as MulBackward0, or an AccumulateGrad) becomes an entry with
its name, the editor node that made it, and its saved tensors' shapes. The aliases the executor
puts on edges are collapsed away: the view shows the graph as the user's code would make it.

Runs of a document usually record engine graphs of one shape (a leaf's values edited: every op
the same, on tensors of the same shapes), and then their views are the same: `view_of_run`
sends the last one again, without claiming engine nodes or walking the graph."""

import threading
from collections import OrderedDict

from engine.watch import AccumulateGrad, accumulator_of

from .summary import dtype_name

_VIEWS = OrderedDict()  # (plan key, target) -> (metas key, view) of the latest such run
_VIEWS_KEPT = 16
_VIEWS_LOCK = threading.Lock()


def view_of_run(r, target):
    """The autograd view of run `r`: behind `target` (backward) or every value (forward),
    the last run's again when it can be. Whether it can be is in the metas: per node, its
    params (not a source's: they only make values) and its value's shape, dtype,
    requires_grad and grad_fn type, with the branches the branching nodes took."""
    if r.plan.inplace:  # claimed from the engine node each node made when it ran
        for nid, fn in r.made.items():
            claim(r.owner, nid, fn)
        roots = [r.values[target]] if target is not None else list(r.values.values())
        return autograd_record(None, r.owner, roots=roots)
    slot = (r.plan.key, target)
    key = (tuple(r.picked.items()), tuple(r.metas))
    with _VIEWS_LOCK:
        last = _VIEWS.get(slot)
    if last is not None and last[0] == key:
        return dict(last[1])
    for nid, out in r.values.items():  # claims in compute order: each node gets its own
        claim(r.owner, nid, out.grad_fn)
    if target is not None:
        graph = autograd_record(r.values[target], r.owner)
    else:
        graph = autograd_record(None, r.owner, roots=list(r.values.values()))
    with _VIEWS_LOCK:
        _VIEWS[slot] = (key, graph)
        _VIEWS.move_to_end(slot)
        while len(_VIEWS) > _VIEWS_KEPT:
            _VIEWS.popitem(last=False)
    return dict(graph)


def claim(owner, nid, fn):
    """Mark the engine nodes editor node `nid` created (behind `fn`, its value's grad_fn)
    as its own in `owner`, where no earlier node claimed them."""
    stack = [fn] if fn is not None else []
    while stack:
        n = stack.pop()
        if n in owner:
            continue
        owner[n] = ("node", nid)
        stack.extend(
            f
            for f, _ in n.next_functions
            if f is not None and f not in owner and not isinstance(f, AccumulateGrad)
        )


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
            entry["variable_shape"] = list(node.variable.shape)
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
