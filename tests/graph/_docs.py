"""Small builders for graph documents in tests: nodes, edges and documents as plain dicts."""

from backend.graph import parse


def tensor(node_id, shape=None, **params):
    """A `tensor` source; `shape` (with `init`) or `value=` in params."""
    if shape is not None:
        params["shape"] = list(shape)
    return {"id": node_id, "op": "tensor", "params": params}


def node(node_id, op, **params):
    return {"id": node_id, "op": op, "params": params}


def edge(edge_id, source, target, port="input", source_port="out"):
    return {
        "id": edge_id,
        "source": source,
        "sourcePort": source_port,
        "target": target,
        "targetPort": port,
    }


def doc(nodes, edges=(), **fields):
    return parse({"nodes": list(nodes), "edges": list(edges), **fields})


def chain(ids_ops, first="x"):
    """Edges `first -> ids_ops[0] -> ids_ops[1] ...` (each into port `input`), with the nodes."""
    nodes, edges, prev = [], [], first
    for nid, op, params in ids_ops:
        nodes.append(node(nid, op, **params))
        edges.append(edge(f"{prev}-{nid}", prev, nid))
        prev = nid
    return nodes, edges


def two_in_a_row(definition, source, first, second, end="loss"):
    """A version-2 document: `source` -> instance `first` -> instance `second` -> sum `end`,
    both instances of `definition` (ports `x` and `y`); `first` and `second` are (id, params)."""
    (a, a_params), (b, b_params) = first, second
    name = definition["name"]
    return parse(
        {
            "version": 2,
            "modules": [definition],
            "nodes": [
                source,
                node(a, "module", module=name, **a_params),
                node(b, "module", module=name, **b_params),
                node(end, "sum"),
            ],
            "edges": [
                edge("e1", source["id"], a, "x"),
                edge("e2", a, b, "x", source_port="y"),
                edge("e3", b, end, source_port="y"),
            ],
            "target": end,
        }
    )


def long_chain(n=30, shape=(4,)):
    """x (ones, requires grad) -> cos -> sin -> cos ... (n ops) -> sum: a long graph of small
    ops, for cancellation and batching."""
    nodes = [tensor("x", list(shape), init="ones", requires_grad=True)]
    ops = [(f"n{i}", "sin" if i % 2 else "cos", {}) for i in range(n)]
    more, edges = chain(ops + [("s", "sum", {})])
    return doc(nodes + more, edges)


def affine_module(name="Affine", activation="relu"):
    """A module definition: y = activation(x * w + b), w and b parameters of shape (3,) drawn
    from randn (seeds 1 and 2)."""
    return {
        "name": name,
        "nodes": [
            node("x", "module_input"),
            {"id": "w", "op": "parameter", "params": {"shape": [3], "init": "randn", "seed": 1}},
            {"id": "b", "op": "parameter", "params": {"shape": [3], "init": "randn", "seed": 2}},
            node("m", "mul"),
            node("a", "add"),
            node("r", activation),
            node("y", "module_output"),
        ],
        "edges": [
            edge("xm", "x", "m"),
            edge("wm", "w", "m", "other"),
            edge("ma", "m", "a"),
            edge("ba", "b", "a", "other"),
            edge("ar", "a", "r"),
            edge("ry", "r", "y"),
        ],
        "inputs": ["x"],
        "outputs": ["y"],
    }
