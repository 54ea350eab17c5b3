"""Graph documents for bench/editor.py: layered DAGs of small tensors that validate and run.

`layered_dag(n_nodes, n_edges)` makes exactly `n_nodes` nodes and about `n_edges` edges (within
1%; the caller checks what it needs):
4x4 `tensor` sources (randn, requires_grad), layers of elementwise ops (add/mul/sub take
`input` and `other`, tanh/sigmoid take `input`), then a reduction tail that adds up every node
nothing reads and ends in a `sum`, the document's target. Every node reaches the target, so a
backward run sends a gradient along every edge.
"""

from __future__ import annotations

import random

BINARY = ("add", "mul", "sub")
UNARY = ("tanh", "sigmoid")
SHAPE = [4, 4]


def layered_dag(
    n_nodes: int,
    n_edges: int,
    *,
    width: int = 24,
    seed: int = 0,
    laid_out: bool = False,
) -> dict:
    """A valid document of `n_nodes` nodes and about `n_edges` edges.

    Positions are all (0, 0) (the graph needs auto-layout), or with `laid_out` a plain layered
    grid (x by layer, y by index in the layer) so that it opens readable without elkjs.
    """
    rng = random.Random(seed)
    n_sources = width
    # the tail adds every sink into one chain ending in `sum`; the body keeps the sinks few by
    # always reading an unread node first, and picks binary or unary ops as the edge budget says
    nodes: list[dict] = []
    edges: list[dict] = []
    layer_of: dict[str, int] = {}
    unread: list[str] = []  # nodes nothing reads yet, oldest first

    def add_node(op, params, layer):
        nid = f"n{len(nodes)}"
        nodes.append({"id": nid, "op": op, "params": params, "position": {"x": 0, "y": 0}})
        layer_of[nid] = layer
        unread.append(nid)
        return nid

    def add_edge(src, dst, port):
        edges.append(
            {
                "id": f"e{len(edges)}",
                "source": src,
                "sourcePort": "out",
                "target": dst,
                "targetPort": port,
            }
        )
        if src in unread:
            unread.remove(src)

    for i in range(n_sources):
        add_node(
            "tensor",
            {"shape": SHAPE, "init": "randn", "seed": i, "requires_grad": True, "name": f"x{i}"},
            0,
        )

    layer = 1
    in_layer = 0
    prev: list[str] = [n["id"] for n in nodes]
    cur: list[str] = []
    while True:
        # what remains after this node: the tail needs (sinks - 1) adds + 1 sum, with
        # 2 edges per add and 1 for the sum
        body_left = n_nodes - len(nodes)
        tail_nodes = len(unread)  # upper bound: (sinks - 1) adds + sum
        if body_left <= tail_nodes:
            break
        edges_left = n_edges - len(edges)
        tail_edges = 2 * (len(unread) - 1) + 1
        # binary if we still need more than one edge per remaining node
        ops_left = body_left - tail_nodes
        binary = edges_left - tail_edges > ops_left
        # inputs: an unread node from earlier layers first (so every node gets read), else
        # a random node of the previous layer
        earlier = [u for u in unread if layer_of[u] < layer]
        a = earlier[0] if earlier else rng.choice(prev)
        if binary:
            op = rng.choice(BINARY)
            choices = [p for p in prev if p != a] or [n["id"] for n in nodes if n["id"] != a]
            b = rng.choice(choices)
            nid = add_node(op, {}, layer)
            add_edge(a, nid, "input")
            add_edge(b, nid, "other")
        else:
            nid = add_node(rng.choice(UNARY), {}, layer)
            add_edge(a, nid, "input")
        cur.append(nid)
        in_layer += 1
        if in_layer == width:
            layer, in_layer, prev, cur = layer + 1, 0, cur, []

    # the tail: add the sinks pairwise into one, then sum to a scalar
    sinks = list(unread)
    acc = sinks[0]
    layer += 1
    for s in sinks[1:]:
        nid = add_node("add", {}, layer)
        add_edge(acc, nid, "input")
        add_edge(s, nid, "other")
        acc = nid
        layer += 1
    target = add_node("sum", {}, layer)
    add_edge(acc, target, "input")

    if laid_out:
        rows: dict[int, int] = {}
        for n in nodes:
            lay = layer_of[n["id"]]
            rows[lay] = rows.get(lay, 0) + 1
            n["position"] = {"x": lay * 260, "y": (rows[lay] - 1) * 130}
    return {
        "format": "wiregrad.graph",
        "version": 1,
        "name": f"bench: {len(nodes)} nodes, {len(edges)} edges",
        "description": "a layered DAG of 4x4 tensors made by bench/_editor_graph.py",
        "nodes": nodes,
        "edges": edges,
        "target": target,
    }


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    from backend.graph import parse, validate

    for n, e in ((500, 900), (540, 1020)):
        doc = layered_dag(n, e)
        problems = validate(parse(doc))
        print(len(doc["nodes"]), len(doc["edges"]), problems[:3])
