"""The run's watch on the backward pass: the gradient along every editor edge, from the pass
itself, not recomputed.

The run watches each consumer's engine node, and the pass's observer (engine.watch's
observe_backward, called after each node as a post-hook on it would be) sees, for each input,
exactly what the node sends back along that edge. An op that is several engine ops (a
composite: cross_entropy, linear, `if`) instead gets an `alias` node on each input edge,
watched the same way. A node with no engine node of its own to watch (a leaf, a composite's
output) gets a tensor hook. Where a node feeds two consumers, its two edge gradients sum to
its gradient.

The watch list maps an engine node to one flat tuple (watch_entry: the editor node whose own
gradient it reports or None, which of its outputs that is, then each watched edge's five
fields): the C observer (_observe.c) reads it as such, with no pointer to follow per edge (the
backward pass reaches these entries long after the forward pass made them, so each pointer
followed was a cache miss). Hooks and the observer hold the recorder and the result's dicts,
never the run (see recorder.Recorder)."""

from dataclasses import dataclass

import engine as eg
from engine.watch import accumulator_of, alias, observe_backward

from ..limits import LimitExceeded
from .errors import MODIFIED, Cancelled, NodeError
from .plan import watched_edge
from .recorder import GRAD

CHECK_EVERY_OBSERVED = 8  # watched nodes between checks for cancel and the time limit


@dataclass(frozen=True)
class LeafGrads:
    """The leaves' .grad after a backward run, for a later run to start from (accumulate_grad:
    PyTorch without zero_grad). `signature` is the graph's structure and each leaf's key, shape
    and dtype: a run of another graph, or with other leaves, starts fresh instead."""

    signature: tuple
    grads: dict  # node id or "node.param" -> tensor (copied before a run adds to it)


def needs_grad(t):
    return t.grad_fn is not None or t.requires_grad


def lined_up(next_functions, inputs, watched, flat, accumulator_of):
    """The watched edges (plan.watched_edge) whose gradients an op's engine node sends
    back, or None when its next_functions do not line up with the op's inputs (then the run
    gives it an alias per edge instead). Edge k's input is flat[k] or, where flat is None (no
    variadic ports, whose inputs are lists), inputs[its position]: no flattening, which costs
    more than a small op. Edges whose input needs no gradient are left out. _observe.lined_up
    does the same in C."""
    partial = False
    for k, w in enumerate(watched):
        pos = w[0]
        t = inputs[pos] if flat is None else flat[k]
        want = t.grad_fn
        if want is None:
            if t.requires_grad:
                want = accumulator_of(t)
            else:
                partial = True
        if pos >= len(next_functions) or next_functions[pos][0] is not want:
            return None
    if not partial:
        return watched
    if flat is None:
        return tuple(w for w in watched if needs_grad(inputs[w[0]]))
    return tuple(w for w, t in zip(watched, flat) if needs_grad(t))


def watch_entry(edges, nid, nr):
    """The watch list's entry for an engine node that reports the gradients of `edges`
    (plan.watched_edge tuples) and, unless `nid` is None, editor node `nid`'s own gradient (its
    output `nr`): (nid, nr, then each edge's fields, flattened). _observe.Forward makes the same
    tuples in C."""
    return (nid, nr, *[x for edge in edges for x in edge])


def grad_edge(t):
    """The engine node a tensor's gradient goes to now (its grad_fn, or its AccumulateGrad),
    None for a tensor or number without one."""
    if not isinstance(t, eg.Tensor):
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    return accumulator_of(t) if t.requires_grad else None


class BackwardWatch:
    """One run's watch list and what reports from it: `kernels` is the compiled _observe
    module, or None for the Python versions (lined_up above, the closure in `observer`)."""

    def __init__(self, recorder, result, plan, owner, kernels):
        self.recorder, self.result, self.plan, self.owner = recorder, result, plan, owner
        self.kernels = kernels
        self.watch = {}  # engine node -> watch_entry(its watched edges, editor node or None, nr)
        self.lined_up = lined_up if kernels is None else kernels.lined_up

    def edges(self, out, inputs, step, nid):
        """Watch the op's own node for its edges' gradients (and, for `nid`, its own); False
        when its next_functions do not line up with the inputs (then the caller falls back
        to aliases)."""
        node = out.grad_fn
        flat = None
        if step.variadic:
            flat = [x for v in inputs for x in (v if isinstance(v, list) else [v]) if x is not None]
        mine = self.lined_up(node.next_functions, inputs, step.watched, flat, accumulator_of)
        if mine is None:
            return False
        if mine or nid is not None:
            self.watch[node] = watch_entry(mine, nid, out.output_nr)
        return True

    def alias(self, edge, t):
        """`t` as the input of one edge: an alias with a node of its own, which sends back the
        gradient of that edge alone (t itself when it needs no gradient)."""
        if not t.requires_grad:
            return t
        a = alias(t)
        self.owner[a.grad_fn] = ("edge", edge.id)
        self.watch[a.grad_fn] = watch_entry((watched_edge(self.plan, edge, 0),), None, 0)
        return a

    def node_hook(self, nid):
        """A tensor hook that reports node `nid`'s gradient (where no engine node does)."""
        rec, node_grads = self.recorder, self.result.node_grads  # not self: see the module

        def hook(grad):
            rec.checkpoint()
            if rec.quiet:
                return
            node_grads[nid] = grad
            rec.add((GRAD, nid, grad, None))

        return hook

    def observer(self):
        """What the backward pass calls after each engine node (observe_backward): for a node
        in `watch`, the gradient it sends along each of its editor edges and, for the editor
        node whose own engine node it is, the gradient that reached it (output `nr` of
        grad_outputs, what a tensor hook on it would see), in that order. One call per engine
        node, where a post-hook registered on each node cost as much as the op.

        The C observer does exactly what the closure below does, several times faster. A
        quiet pass (rec.quiet, set before this is called) records nothing."""
        rec, edge_grads, node_grads = self.recorder, self.result.edge_grads, self.result.node_grads
        if self.kernels is not None:
            every, quiet = CHECK_EVERY_OBSERVED, rec.quiet
            return self.kernels.Observer(
                self.watch, rec.pending, GRAD, rec.checkpoint, every, node_grads, edge_grads, quiet
            )
        watched_node, add, checkpoint = self.watch.get, rec.add, rec.checkpoint

        since_check = 0

        def observe(node, grad_inputs, grad_outputs):
            nonlocal since_check
            watched = watched_node(node)
            if watched is None:
                return
            since_check += 1
            if since_check >= CHECK_EVERY_OBSERVED:  # a node's backward takes microseconds
                since_check = 0
                checkpoint()
            if rec.quiet:
                return
            nid, nr = watched[0], watched[1]
            if nid is not None:
                g = grad_outputs[nr]
                if g is not None:
                    node_grads[nid] = g
                    add((GRAD, nid, g, None))
            for k in range(2, len(watched), 5):
                pos, eid, item, source, single = watched[k : k + 5]
                g = grad_inputs[pos]
                if g is not None:
                    edge_grads[eid] = g
                    add((GRAD, item, g, None))
                    if single:  # the source's one consumer: its gradient is this one
                        node_grads[source] = g
                        add((GRAD, source, g, None))

        return observe

    def backward(self, out, gradient, retain_graph):
        """One backward pass from `out`, watched."""
        with observe_backward(self.observer()):
            out.backward(gradient, retain_graph=retain_graph)


def pick_target(r):
    """The node a backward run `r` starts from: the document's target, else the last scalar
    that requires grad."""
    if r.target is not None:
        if r.target not in r.values:
            raise NodeError(
                r.target,
                RuntimeError(
                    "the backward target did not run (it is on a branch that was not taken)"
                ),
            )
        return r.target
    for nid in reversed(r.order):
        t = r.values.get(nid)
        if t is not None and t.numel() == 1 and t.requires_grad:
            return nid
    raise NodeError(
        None,
        RuntimeError(
            "backward needs a scalar target: no node gives a one-element tensor that requires grad"
        ),
    )


def run_backward(r, target, version_error):
    """Backward from `target` into the leaves' .grad of run `r`, with its teaching options
    (r.teaching, an executor.Teaching): the leaves' .grad start from `start_grads` when they
    are this graph's; `backward_twice` calls backward again, as a teaching run: the second pass
    fails with PyTorch's error unless the first retained the graph, and else adds the same
    gradients into .grad once more. `gradient_ones` starts the pass from ones of the target's
    shape, backward(gradient=torch.ones_like(target)): how a target that is not one number can
    be run backward at all (without it, PyTorch's error). `version_error(r, target, exc)` is
    the error of a pass that found a saved tensor written in place (documents with in-place
    ops). The result's `grads` are set after each pass that succeeds."""
    out, teaching = r.values[target], r.teaching
    gradient = eg.ones_like(out) if teaching.gradient_ones else None
    leaves = [leaf for leaf in r.leaves if leaf.tensor.requires_grad]
    keys = [leaf.key for leaf in leaves]
    signature = (
        r.plan.key,
        tuple(
            (k, tuple(leaf.tensor.shape), str(leaf.tensor.dtype)) for k, leaf in zip(keys, leaves)
        ),
    )
    start = teaching.start_grads
    if start is not None and start.signature == signature:
        for key, leaf in zip(keys, leaves):
            if start.grads.get(key) is not None:
                leaf.tensor.grad = start.grads[key].clone()  # backward adds into it in place
    grads = r.result.leaf_grads
    for second in (False, True) if teaching.backward_twice else (False,):
        if second:
            r.flush()  # the first pass's records, summarised before .grad changes
            r.recorder.quiet = True
        try:
            r.watch.backward(out, gradient, teaching.retain_graph and not second)
        except (Cancelled, LimitExceeded):
            raise
        except Exception as exc:
            if r.plan.inplace and str(exc).startswith(MODIFIED):
                raise version_error(r, target, exc) from exc
            raise NodeError(target, exc) from exc
        for key, leaf in zip(keys, leaves):
            g = leaf.tensor.grad
            if g is not None:
                grads[key] = g
                r.record({"kind": "leaf_grad", "node": leaf.node, "param": leaf.param}, g)
        r.result.grads = LeafGrads(signature, dict(grads))
