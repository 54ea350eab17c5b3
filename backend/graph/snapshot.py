"""Recognising a document as an earlier one with some params edited.

The page sends the whole document with every request, freshly parsed each time, and most
requests follow an edit of a param or two. What the executor (its plans) and validation keep of
a document is reused for such a document, and only the nodes whose params differ are looked at
again. Finding them reads every node and edge once, compared in C with a snapshot of the
earlier document, without hashing anything.
"""

from itertools import compress
from operator import attrgetter, itemgetter, ne

# Read straight from each model's __dict__ (where pydantic keeps a model's fields), a third
# cheaper than reading them as attributes
_FIELDS_OF = attrgetter("__dict__")
_NODE_FIELDS = itemgetter("id", "op", "params")
_EDGE_KEY = itemgetter("id", "source", "sourcePort", "target", "targetPort")


class Snapshot:
    """A document's structure and params as they were: per node (id, op, params) in document
    order, the params copied so that later edits are noticed, even nested ones made in place;
    each edge's fields, copied too; and `key`, the structure (node ids and ops, edges) hashed
    to 64 bits, the same for every snapshot of one structure (Python's tuple hash: in-memory
    only)."""

    __slots__ = ("nodes", "edges", "key")

    def __init__(self, doc):
        self.nodes = [(n.id, n.op, _copy(n.params)) for n in doc.nodes]
        self.edges = list(map(dict, map(_FIELDS_OF, doc.edges)))
        edge_keys = tuple(map(_EDGE_KEY, self.edges))
        self.key = hash((tuple((nid, op) for nid, op, _ in self.nodes), edge_keys))

    def edited(self, doc):
        """The indices (in document order) of the nodes whose params differ in `doc`, when
        `doc` has this structure; else None."""
        nodes, edges = doc.nodes, doc.edges
        if len(nodes) != len(self.nodes) or len(edges) != len(self.edges):
            return None
        # an edge is nothing but structure: its whole __dict__ is compared
        if list(map(_FIELDS_OF, edges)) != self.edges:
            return None
        fields = map(_NODE_FIELDS, map(_FIELDS_OF, nodes))
        differ = list(compress(range(len(nodes)), map(ne, fields, self.nodes)))
        for i in differ:
            if _NODE_FIELDS(nodes[i].__dict__)[:2] != self.nodes[i][:2]:
                return None  # another id or op: another structure
        return differ

    def with_params(self, doc, changed):
        """The snapshot of `doc`, whose nodes at `changed` have other params than this one's."""
        snap = object.__new__(Snapshot)
        snap.edges, snap.key = self.edges, self.key
        snap.nodes = list(self.nodes)
        for i in changed:
            n = doc.nodes[i]
            snap.nodes[i] = (n.id, n.op, _copy(n.params))
        return snap


def _copy(value):
    """A copy of JSON-like params (dicts, lists, numbers, strings), made for comparing: what
    copy.deepcopy does for them at a tenth of its cost (it keeps a memo of every object)."""
    cls = value.__class__
    if cls is dict:
        return {k: _copy(v) for k, v in value.items()} if value else {}
    if cls is list:
        return [_copy(v) for v in value]
    return value  # immutable, or something params never hold (compared as the same object)
