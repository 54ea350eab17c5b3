"""A document indexed for lookups: what the executor and the exporter both walk."""

from collections import defaultdict

from .. import registry
from .validate import resolved_params, topological_order


class GraphIndex:
    """Nodes by id, their op specs and resolved params, the edges into each node (by port, in
    document order) and out of it, and a topological order (document order breaks ties)."""

    def __init__(self, doc):
        self.doc = doc
        self.nodes = {n.id: n for n in doc.nodes}
        self.specs = {n.id: registry.get(n.op) for n in doc.nodes}
        self.params = {n.id: resolved_params(self.specs[n.id], n.params) for n in doc.nodes}
        self.incoming = {n.id: defaultdict(list) for n in doc.nodes}  # id -> port -> [edges]
        self.outgoing = {n.id: [] for n in doc.nodes}  # node id -> [edges]
        for e in doc.edges:
            self.incoming[e.target][e.targetPort].append(e)
            self.outgoing[e.source].append(e)
        self.order, _ = topological_order(doc)
        # a document with in-place ops runs in statement order: `order` (document order
        # breaking ties) is then the one order every run, export and validation keeps
        self.inplace = any(s is not None and s.extra.get("writes") for s in self.specs.values())

    def ancestors(self, roots, cut=None):
        """The ids of `roots` and of every node they depend on through edges (not through the
        edge `cut`, where one is given)."""
        seen, stack = set(), list(roots)
        while stack:
            nid = stack.pop()
            if nid in seen:
                continue
            seen.add(nid)
            for edges in self.incoming[nid].values():
                stack.extend(e.source for e in edges if e is not cut)
        return seen
