"""Running a document with in-place ops (ops/inplace.py): every node in statement order, as
the exported script runs its lines, each value as it was when its node ran, and the
"modified by an inplace operation" error of a backward pass tied to the write that caused it.

Such a document runs uncached: a cached value may be a tensor a write of this run changes (its
cache entry would then hold the new value under the old signature), and its order is the
statements', not the one the cache replays."""

import engine as eg
from engine.watch import stale_saved, version, version_counter

from .backward_watch import grad_edge, watch_entry
from .errors import NodeError
from .recorder import PLAIN


def forward_statements(r, order):
    """Every node of run `r` in statement order (the plan's order: document order, each node
    after its inputs): a reader before a write sees the old value, one after it the new."""
    for nid in order:
        step = r.steps[nid]
        if step.spec.extra.get("writes"):
            write_node(r, nid, step)
        else:
            r.run_node(nid)
        r.made[nid] = r.values[nid].grad_fn


def write_node(r, nid, step):
    """An in-place node: its output is its input, one version later. What was queued is
    summarised first, and every value in the memory it writes is kept as it was, so that each
    node shows the value it had when it ran. Its edges' gradients are watched where its engine
    node takes the inputs as they were before the write (a write through a view is a
    CopySlices behind the view's new grad_fn: those edges get no edge_grad)."""
    r.checkpoint()
    r.flush()  # summaries of the values before the write
    inputs = r.inputs(nid, step, False)
    written = inputs[0]
    vc = version_counter(written)
    for other, t in r.values.items():
        if other not in r.shown and (t is written or (vc is not None and version_counter(t) is vc)):
            with eg.no_grad():
                r.shown[other] = t.clone()
    before = [grad_edge(t) for t in inputs]
    out = r.compute(nid, step, False)
    if r.backward and out.requires_grad:
        gf = out.grad_fn
        if gf is not None:
            nf = gf.next_functions
            mine = tuple(
                w
                for w in step.watched
                if before[w[0]] is not None and w[0] < len(nf) and nf[w[0]][0] is before[w[0]]
            )
            if mine:
                r.watch.watch[gf] = watch_entry(mine, None, out.output_nr)
        out.register_hook(r.watch.node_hook(nid))
    r.values[nid] = out
    r.writes.append((nid, version_counter(out), version(out)))
    r.recorder.queue((PLAIN, {"kind": "value", "node": nid, "version": version(out)}, out, None))


def version_error(r, target, exc):
    """The "modified by an inplace operation" error of a backward pass, at the node whose
    saved value was overwritten (the engine node that failed: the newest one still holding a
    saved tensor whose version moved), naming the write that moved it."""
    stale = stale_saved(r.values[target].grad_fn)
    if stale is None:
        return NodeError(target, exc)
    node, t, want, have = stale
    who = r.owner.get(node)
    saved_by = who[1] if who is not None and who[0] == "node" else None
    vc = version_counter(t)
    by = next((w for w, wvc, v in r.writes if wvc is not None and wvc is vc and v > want), None)
    err = NodeError(saved_by or target, exc)
    err.extra = {
        "saved_by": saved_by,
        "saved_op": type(node).__name__,
        "overwritten_by": by,
        "expected_version": want,
        "version": have,
    }
    return err
