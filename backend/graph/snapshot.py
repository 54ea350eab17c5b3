"""Recognising a document as an earlier one with some params edited.

Most requests follow an edit of a param or two. What the executor (its plans) and validation
keep of a document is reused for such a document, and only the nodes whose params differ are
looked at again. A document comes in one of two ways:

- whole and freshly parsed: every node and edge is read once, compared in C with a snapshot of
  the earlier document, without hashing anything;
- made by `edit_nodes` from the earlier document (the server does this for a `run` that sends
  only the edited nodes): it shares the earlier document's node and edge objects but for the
  edited nodes, so only the nodes that are not the snapshot's own objects are compared.
"""

from itertools import compress
from operator import attrgetter, is_, itemgetter, ne, not_

from .document import Node

# Read straight from each model's __dict__ (where pydantic keeps a model's fields), a third
# cheaper than reading them as attributes
_FIELDS_OF = attrgetter("__dict__")
_NODE_FIELDS = itemgetter("id", "op", "params")
_EDGE_KEY = itemgetter("id", "source", "sourcePort", "target", "targetPort")
# more nodes than this that are not a snapshot's own objects are compared all together, in C
_FEW = 32


class Snapshot:
    """A document's structure and params as they were: per node (id, op, params) in document
    order, the params copied so that later edits are noticed, even nested ones made in place;
    each edge's fields, copied too; `key`, the structure (node ids and ops, edges) hashed
    to 64 bits, the same for every snapshot of one structure (Python's tuple hash: in-memory
    only); and the node and edge objects themselves, which edit_nodes' documents share."""

    __slots__ = ("nodes", "edges", "key", "node_objects", "edge_objects")

    def __init__(self, doc):
        self.node_objects, self.edge_objects = tuple(doc.nodes), tuple(doc.edges)
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
        if doc._edit and all(map(is_, edges, self.edge_objects)):
            return self._edited_by_identity(nodes, edges)
        return self._edited_by_content(nodes, edges)

    def _edited_by_content(self, nodes, edges):
        # an edge is nothing but structure: its whole __dict__ is compared
        if list(map(_FIELDS_OF, edges)) != self.edges:
            return None
        fields = map(_NODE_FIELDS, map(_FIELDS_OF, nodes))
        differ = list(compress(range(len(nodes)), map(ne, fields, self.nodes)))
        for i in differ:
            if _NODE_FIELDS(nodes[i].__dict__)[:2] != self.nodes[i][:2]:
                return None  # another id or op: another structure
        return differ

    def _edited_by_identity(self, nodes, edges):
        """For a document made by edit_nodes, whose edges are the snapshot's own: its nodes
        that are the snapshot's own are as they were (edit_nodes trusts that nothing edits them
        in place), and only the others are compared."""
        others = list(compress(range(len(nodes)), map(not_, map(is_, nodes, self.node_objects))))
        if len(others) > _FEW:  # made from another document (say, another client's): in C
            return self._edited_by_content(nodes, edges)
        differ = []
        for i in others:
            n = nodes[i]
            nid, op, params = self.nodes[i]
            if n.id != nid or n.op != op:
                return None  # another id or op: another structure
            if n.params != params:
                differ.append(i)
        return differ

    def adopt(self, doc):
        """Let the objects of `doc`, just found to be as this snapshot says (no node edited),
        stand for its nodes and edges, so that edit_nodes' documents made from `doc` are
        recognised by identity. (Either objects are right for a run that reads them at the
        same time: the snapshot is shared.)"""
        self.node_objects, self.edge_objects = tuple(doc.nodes), tuple(doc.edges)

    def with_params(self, doc, changed):
        """The snapshot of `doc`, whose nodes at `changed` have other params than this one's."""
        snap = object.__new__(Snapshot)
        snap.edges, snap.key = self.edges, self.key
        snap.node_objects, snap.edge_objects = tuple(doc.nodes), tuple(doc.edges)
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


class EditError(ValueError):
    """An edit that does not fit the document it edits."""


def edit_nodes(base, nodes):
    """`base` with some of its nodes replaced by edited versions of them (dicts or Nodes with
    the same id and op, whose params, position or label may differ): a new document sharing
    every other node, and every edge, with `base`.

    Plans and validation recognise it as an earlier document edited by comparing only the
    nodes that are not that document's own objects, so the nodes it shares with `base` must
    not have been edited in place since `base` ran or was validated (a document edited in
    place is compared whole: pass it to run() itself). EditError for a node `base` does not
    have, or another op."""
    position = {n.id: i for i, n in enumerate(base.nodes)}
    new_nodes = list(base.nodes)
    for node in nodes:
        if not isinstance(node, Node):
            node = Node.model_validate(node)
        i = position.get(node.id)
        if i is None:
            raise EditError(f"node '{node.id}' is not in the graph being edited")
        if node.op != base.nodes[i].op:
            raise EditError(
                f"node '{node.id}' is a '{base.nodes[i].op}' node in the graph being edited; an "
                f"edit cannot make it '{node.op}' (send the whole graph)"
            )
        new_nodes[i] = node
    doc = base.model_copy(update={"nodes": new_nodes, "edges": list(base.edges)})
    doc._edit = True
    return doc
