"""What a run needs of a document that does not depend on values: a Plan (the index, the
compute order, resolved params, each node's Step), kept for the document's next runs. A
document that comes back with only some params changed reuses it and re-resolves just those
nodes (plan_for)."""

import threading
from typing import NamedTuple

import numpy as np

from ..document.index import GraphIndex
from ..document.snapshot import Snapshot
from ..document.validate import resolved_params


class Port(NamedTuple):
    """An input port of a step: its name, its edges in (in order) and whether it is variadic
    (the op then takes a list)."""

    name: str
    edges: tuple
    variadic: bool


class Step:
    """One node of a plan: its op, resolved params and inputs, and the part of its cache
    signature that depends on the node alone."""

    __slots__ = (
        "spec",
        "params",
        "ports",
        "srcs",
        "key",
        "composite",
        "source",
        "variadic",
        "run",
        "port_srcs",
        "one_consumer",
        "watched",
        "row",
    )

    def __init__(self, index, nid):
        spec, params = index.specs[nid], index.params[nid]
        incoming = index.incoming[nid]
        self.spec, self.params = spec, params
        self.composite = spec.extra.get("composite", False)
        self.source = spec.source
        # per port its edges, and each edge's position among the op's arguments (what the
        # engine node's next_functions and post-hook grad_inputs follow)
        self.ports, self.srcs, positions, parts, pos = [], [], [], [], 0
        for port in spec.inputs:
            edges = tuple(incoming.get(port.name, ()))
            self.ports.append(Port(port.name, edges, port.variadic))
            parts.append((port.name, len(edges)))
            for e in edges:
                self.srcs.append(e.source)
                positions.append((e, pos))
                if port.variadic:
                    pos += 1
            if not port.variadic:
                pos += 1
        self.variadic = any(port.variadic for port in self.ports)
        self.run = spec.run
        # each port's source when every port has one edge or none (forward_paths.forward_fresh)
        simple = not self.variadic and not spec.branches
        simple = simple and all(len(port.edges) <= 1 for port in self.ports)
        self.port_srcs = (
            tuple(p.edges[0].source if p.edges else None for p in self.ports) if simple else None
        )
        # (with in-place ops every node gets its own gradient hook: an edge into a write may
        # not be watchable, see inplace.write_node)
        self.one_consumer = len(index.outgoing[nid]) == 1 and not index.inplace
        # what the backward observer needs of each edge in (see watched_edge)
        self.watched = tuple(watched_edge(index, e, pos) for e, pos in positions)
        node = index.nodes[nid]
        # Python's tuple hash: 64 bits, in-memory only (the cache never leaves the process)
        self.key = hash((nid, node.op, repr(sorted(params.items())), tuple(parts)))
        # what forward_paths.forward_fresh reads of the node, in one plain tuple (unpacking it
        # costs less than reading each attribute, or unpacking a NamedTuple, per node):
        # (id, run, params, port_srcs, composite, source, key or None for a source,
        # one_consumer, watched)
        self.row = (nid, self.run, params, self.port_srcs, self.composite, self.source)
        self.row += (None if self.source else self.key, self.one_consumer, self.watched)


def watched_edge(index, edge, pos):
    """What the backward observer needs of an edge it watches, as a plain tuple (the C observer,
    _observe.c, reads it as one): (the gradient's position among the consumer's inputs, the
    edge's id, its item in a `grads` pack ([edge, source, target]), its source, whether it is
    its source's only consumer: then the edge's gradient is the source's too, reported with
    it, no hook needed)."""
    item = (edge.id, edge.source, edge.target)
    single = len(index.outgoing[edge.source]) == 1 and not index.inplace
    return (pos, edge.id, item, edge.source, single)


def static_order_of(index):
    """The order executor._Run.demand computes nodes in, for a document without branches (whose
    order then depends on no value): every sink pulled in document order, each node after its
    inputs in port order. Every node runs: each one is a sink or feeds one."""
    done, order = set(), []
    for root in [nid for nid in index.order if not index.outgoing[nid]]:
        stack = [(root, 0)]
        while stack:
            nid, stage = stack.pop()
            if nid in done:
                continue
            if stage == 0:
                stack.append((nid, 1))
                ports = index.incoming[nid]
                for port in reversed(index.specs[nid].inputs):
                    for e in reversed(ports.get(port.name, ())):
                        stack.append((e.source, 0))
            else:
                done.add(nid)
                order.append(nid)
    return order


class Plan(GraphIndex):
    """Everything a run needs of a document that no value changes: the index, resolved params,
    each node's step and, without `if` nodes, the compute order. Shared by concurrent runs, so
    never changed once made: a document with other params gets a copy (see `edited`)."""

    def __init__(self, doc):
        super().__init__(doc)
        # what the document was (see plan_for); its `key`, the structure hashed, is what a
        # run's autograd view, its leaves' grads and the cache's last run are kept under
        self.snapshot = Snapshot(doc)
        self.key = self.snapshot.key
        self.steps = {nid: Step(self, nid) for nid in self.order}
        has_if = any(spec.branches for spec in self.specs.values())
        self.static_order = None if has_if else static_order_of(self)
        if self.inplace:  # statement order (validation refuses `if` beside in-place ops)
            self.static_order = list(self.order)
        if self.static_order is not None:  # for runs that start from the last one
            order = self.static_order
            self.positions = {nid: p for p, nid in enumerate(order)}
            self.order_ids = np.array(order, dtype=object)
            self.step_keys = np.fromiter((self.steps[n].key for n in order), np.int64, len(order))
            self.rows = [self.steps[n].row for n in order]

    def edited(self, doc, changed):
        """A copy for `doc`, whose nodes at `changed` (indices in document order) have other
        params than this plan's. Its `nodes` and `doc` stay this plan's but for those nodes:
        what a run reads of a node is its op and params, the same in both."""
        plan = object.__new__(Plan)
        plan.__dict__.update(self.__dict__)
        plan.nodes, plan.params, plan.steps = dict(self.nodes), dict(self.params), dict(self.steps)
        plan.snapshot = self.snapshot.with_params(doc, changed)
        for i in changed:
            n = doc.nodes[i]
            plan.nodes[n.id] = n
            plan.params[n.id] = resolved_params(self.specs[n.id], n.params)
            plan.steps[n.id] = Step(plan, n.id)
        if self.static_order is not None and changed:
            plan.step_keys, plan.rows = self.step_keys.copy(), list(self.rows)
            for i in changed:
                nid = doc.nodes[i].id
                plan.step_keys[self.positions[nid]] = plan.steps[nid].key
                plan.rows[self.positions[nid]] = plan.steps[nid].row
        return plan


_PLANS = []  # the plans of recent runs, the latest last: at most one per structure
_PLANS_KEPT = 8
_PLANS_LOCK = threading.Lock()


def plan_for(doc):
    """The plan of `doc`: a recent run's plan when its document had the same structure (node
    ids and ops, edges), with the params of the nodes that differ resolved anew.

    Documents arrive freshly parsed, so nothing of them is hashed yet, or made by edit_nodes
    from an earlier one: either way they are compared with the recent plans' snapshots
    (snapshot.py), the second kind only where it does not share the snapshot's objects."""
    with _PLANS_LOCK:
        recent = _PLANS[::-1]
    plan = changed = None
    for old in recent:
        changed = old.snapshot.edited(doc)
        if changed is not None:
            plan = old
            break
    if plan is None:
        plan = Plan(doc)
    elif changed:
        plan = plan.edited(doc, changed)
    else:
        plan.snapshot.adopt(doc)
    with _PLANS_LOCK:
        for k, old in enumerate(_PLANS):
            if old.key == plan.key:
                del _PLANS[k]
                break
        _PLANS.append(plan)
        del _PLANS[:-_PLANS_KEPT]
    return plan
