"""Recognising a document as an earlier one with some params edited.

Most requests follow an edit of a param or two. What the executor (its plans) and validation
keep of a document is reused for such a document, and only the nodes whose params differ are
looked at again. A document comes in one of two ways:

- whole and freshly parsed: every node and edge is read once, compared in C with a snapshot of
  the earlier document (params by `params_keys`: exact to the type and the sign of zero);
- made by `edit_nodes` from the earlier document (the server does this for a `run` that sends
  only the edited nodes): it shares the earlier document's node and edge objects but for the
  edited nodes, so only the nodes that are not the snapshot's own objects are compared.
"""

import marshal
from itertools import compress, repeat
from operator import attrgetter, is_, itemgetter, ne, not_

from .format import Node

# Read straight from each model's __dict__ (where pydantic keeps a model's fields), a third
# cheaper than reading them as attributes
_FIELDS_OF = attrgetter("__dict__")
_ID_OP = itemgetter("id", "op")
_PARAMS = itemgetter("params")
_EDGE_KEY = itemgetter("id", "source", "sourcePort", "target", "targetPort")
# more nodes than this that are not a snapshot's own objects are compared all together, in C
_FEW = 32
# params compared in chunks of this many nodes (see params_blobs)
_CHUNK = 64


class Snapshot:
    """A document's structure and params as they were: per node its (id, op) (`nodes`) and
    its params' key (`params`, see params_keys) in document order; each edge's fields,
    copied; `key`, the structure (node ids and ops, edges) hashed to 64 bits, the same for
    every snapshot of one structure (Python's tuple hash: in-memory only); and the node and
    edge objects themselves, which edit_nodes' documents share."""

    __slots__ = (
        "nodes",
        "params",
        "params_blobs",
        "edges",
        "key",
        "node_objects",
        "edge_objects",
    )

    def __init__(self, doc):
        self.node_objects, self.edge_objects = tuple(doc.nodes), tuple(doc.edges)
        fields = list(map(_FIELDS_OF, doc.nodes))
        self.nodes = list(map(_ID_OP, fields))
        self.params = params_keys(map(_PARAMS, fields))
        self.params_blobs = params_blobs(self.params)
        self.edges = list(map(dict, map(_FIELDS_OF, doc.edges)))
        edge_keys = tuple(map(_EDGE_KEY, self.edges))
        self.key = hash((tuple(self.nodes), edge_keys))

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
        fields = list(map(_FIELDS_OF, nodes))
        if list(map(_ID_OP, fields)) != self.nodes:
            return None  # another id or op somewhere: another structure
        params = list(map(_PARAMS, fields))
        # a chunk of params at a time, each in one marshal call and one comparison; each node's
        # only in a chunk that differs (one node edited, say)
        differ, dumps = [], marshal.dumps
        for a, blob in zip(range(0, len(params), _CHUNK), self.params_blobs):
            chunk = params[a : a + _CHUNK]
            if blob is not None:
                try:
                    if dumps(chunk, 2) == blob:
                        continue
                except ValueError:
                    pass  # what marshal cannot write: each node's params compared below
            keys = params_keys(chunk)
            old = self.params[a : a + _CHUNK]
            differ += [a + k for k in compress(range(len(keys)), map(ne, keys, old))]
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
            if (n.id, n.op) != self.nodes[i]:
                return None  # another id or op: another structure
            if params_keys((n.params,))[0] != self.params[i]:
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
        snap.nodes, snap.edges, snap.key = self.nodes, self.edges, self.key
        snap.node_objects, snap.edge_objects = tuple(doc.nodes), tuple(doc.edges)
        snap.params = list(self.params)
        for i, key in zip(changed, params_keys(doc.nodes[i].params for i in changed)):
            snap.params[i] = key
        snap.params_blobs = params_blobs(snap.params)
        return snap


def params_keys(params):
    """Per params dict, bytes that are equal exactly when the params are the same JSON value.
    Python's == is not enough: 1 == 1.0 == True and 0.0 == -0.0, yet `dim: 1.0` is no dim and
    1 / -0.0 is -inf, so what was kept for one document must not serve the other. marshal's
    format 2 writes each value with its type and floats as their 8 bytes, and (unlike later
    formats) nothing about object identity or string interning; it runs in C, and it makes
    the copy that keeps later in-place edits from going unnoticed. Params holding what marshal
    cannot write (not JSON: only a Python caller could put it there) get a key equal to
    nothing, so they always count as edited."""
    params = list(params)
    try:
        return list(map(marshal.dumps, params, repeat(2)))
    except ValueError:
        return [_key_or_unique(p) for p in params]


def params_blobs(keys):
    """Per chunk of _CHUNK params (in document order), what marshal writes for the list of them,
    made from their params_keys `keys` alone; None for a chunk where some params have no bytes
    of their own (see params_keys), and for all where this Python writes lists otherwise
    (checked at import: then every node's params are compared one by one). marshal's format is
    prefix-free, so a chunk written whole equals its blob exactly when each of its params
    dicts equals its key."""
    blobs = []
    for a in range(0, len(keys), _CHUNK):
        chunk = keys[a : a + _CHUNK]
        ok = _LISTS_JOIN and all(map(bytes.__instancecheck__, chunk))
        blobs.append(_joined(chunk) if ok else None)
    return blobs


def _joined(keys):
    # a list in format 2: its count, then its items as each is written alone (no references
    # between them)
    return b"[" + len(keys).to_bytes(4, "little") + b"".join(keys)


def _key_or_unique(params):
    try:
        return marshal.dumps(params, 2)
    except ValueError:
        return object()


_PROBE = [{}, {"a": [1, 2.0, None, True], "b": "x"}, {"c": {"d": -0.0, "e": [[]]}}]
_LISTS_JOIN = marshal.dumps(_PROBE, 2) == _joined(params_keys(_PROBE))


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
    new_nodes = list(base.nodes)
    positions = base._positions
    for node in nodes:
        if not isinstance(node, Node):
            node = Node.model_validate(node)
        i = None if positions is None else positions.get(node.id)
        if i is None or i >= len(new_nodes) or new_nodes[i].id != node.id:
            # none kept yet, or base's node list was changed in place since: made anew
            positions = base._positions = {n.id: k for k, n in enumerate(base.nodes)}
            i = positions.get(node.id)
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
    doc._positions = positions  # the same ids at the same places (None: no nodes were sent)
    return doc
