"""A leaf made from a computed value, read without running the script:

    weights = torch.randn(784, 10) / math.sqrt(784)
    weights.requires_grad_()                 (or weights.requires_grad = True,
    w = (torch.arange(6.0) / 6).requires_grad_()    or self.w = nn.Parameter(torch.ones(3) * 0.1))

In PyTorch a tensor computed from tensors that need no gradient (or through detach()) is a
leaf, and requires_grad_() makes it one that needs its gradient: it starts from the values the
computation gave and keeps no history of it. The graph says so with a `tensor` node holding
those values (requires_grad on): the nodes that computed them are run on the engine while
reading (never the script: the registry's ops on the values the graph already holds), and
those that nothing else reads go. Where the computation needs a gradient itself (a tensor with
requires_grad, a layer), the tensor is no leaf: requires_grad_() changes nothing, as in
PyTorch, and `x.requires_grad = True` is PyTorch's error. nn.Parameter(t) is read as
t.detach().requires_grad_(): always a leaf. requires_grad_(False) on a leaf that requires grad
makes it one that does not (clear_requires_grad)."""

import engine as eg

from .. import registry
from ..document.validate import resolved_params
from ..limits import DEFAULT
from .nodes import PORT
from .problems import Unsupported
from .random_draws import MAX_VALUES

_NO_LEAF = (
    "you can only change requires_grad flags of leaf variables: '{name}' is computed from "
    "tensors that require grad (write {name}.detach().requires_grad_() for a new leaf)"
)


class _Reading:
    """What an op's run may ask of whoever runs it (op_context.OpContext's questions),
    answered for values worked out while reading: on the CPU, within a graph's limits, layers
    made anew."""

    device = "cpu"
    limits = DEFAULT

    def check_numel(self, n):
        if n > self.limits.max_elements:
            raise Unsupported(
                f"a tensor of {n:,} elements is over the limit of "
                f"{self.limits.max_elements:,} elements per tensor"
            )

    def add_parameters(self, named):
        """(A layer's parameters: none reach here, a layer's output is no leaf.)"""

    def module(self, key, factory):
        return factory()


def make_leaf(imp, nid, name, attribute=False):
    """`name.requires_grad_()` (or `name.requires_grad = True` where `attribute`) on the
    computed node `nid`: the node becomes a tensor source of its values that requires grad;
    nothing where it already requires grad (PyTorch's error for the attribute)."""
    graph = imp.graph
    incoming = {}
    for src, dst, port in graph.edges:
        incoming.setdefault(dst, []).append((port, src))
    order = _ancestors(nid, incoming, graph.nodes)
    reached = _ancestors(nid, incoming, graph.nodes, cut="detach")
    if any(_needs_grad(graph.nodes.get(n)) for n in reached):
        if attribute:
            raise Unsupported(_NO_LEAF.format(name=name))
        return  # requires_grad_() on a tensor that requires grad already: nothing changes
    value = _worked_out(graph.nodes, incoming, order, name)
    if not value.is_floating_point():
        raise Unsupported(
            f"only Tensors of floating point dtype can require gradients ('{name}' is "
            f"{str(value.dtype).removeprefix('engine.')})"
        )
    if value.numel() > MAX_VALUES:
        raise Unsupported(
            f"'{name}' is a leaf made from a computed value of {value.numel():,} numbers, more "
            f"than the {MAX_VALUES:,} an import writes out: make it with torch.randn / zeros "
            "/ ones and requires_grad=True"
        )
    node = graph.nodes[nid]
    node["op"] = "tensor"
    node["params"] = {
        "value": value.tolist(),
        "dtype": str(value.dtype).removeprefix("engine."),
        "requires_grad": True,
        "name": name.removeprefix("self."),
    }
    graph.edges = [e for e in graph.edges if e[1] != nid]
    _drop_unread(imp, order[:-1])
    imp.shapes.forget_edges(nid)
    imp.notes.add(
        imp.current_line,
        f"{name}: a leaf made from a computed value: the {value.numel():,} values the "
        "computation gives are its starting values (a tensor node), as in PyTorch",
    )


def clear_requires_grad(imp, nid, name):
    """`name.requires_grad_(False)` (or `name.requires_grad = False`): a leaf that requires
    grad stops requiring it (its source node's requires_grad, as PyTorch's flag; a parameter
    node becomes a tensor node of the same values); on a tensor that needs no gradient nothing
    changes; on a computed one that does, PyTorch's error. Refused once the leaf is used: the
    lines before read it requiring grad, which one node cannot say."""
    graph = imp.graph
    node = None if PORT in nid else graph.nodes.get(nid)
    spec = registry.get(node["op"]) if node is not None else None
    frees = spec is not None and spec.source and spec.name in ("tensor", "parameter")
    if frees and (spec.name == "parameter" or node["params"].get("requires_grad")):
        if any(src == nid for src, _, _ in graph.edges):
            raise Unsupported(
                f"{name}.requires_grad_(False) after {name} is used: the lines before read "
                f"it requiring grad, which the graph cannot say; stop it requiring grad before "
                "it is used"
            )
        node["op"] = "tensor"
        node["params"] = {**node["params"], "requires_grad": False}
        return
    incoming = {}
    for src, dst, port in graph.edges:
        incoming.setdefault(dst, []).append((port, src))
    reached = _ancestors(nid, incoming, graph.nodes, cut="detach")
    if node is None or any(_needs_grad(graph.nodes.get(n)) for n in reached):
        raise Unsupported(
            "you can only change requires_grad flags of leaf variables. If you want to use a "
            f"computed variable in a subgraph that doesn't require differentiation use "
            f"{name}_no_grad = {name}.detach()."
        )


def _ancestors(nid, incoming, nodes, cut=None):
    """`nid` and the nodes it is computed from, inputs first (not past a node of op `cut`:
    what a gradient reaches)."""
    order, seen, stack = [], set(), [(nid, False)]
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        if cut is not None and nodes.get(n, {}).get("op") == cut:
            continue
        stack.extend((src, False) for _, src in incoming.get(n, ()) if src not in seen)
    return order


def _needs_grad(node):
    """Whether a node's value needs a gradient (or cannot be worked out here: a module's)."""
    if node is None:
        return True
    spec = registry.get(node["op"])
    if spec is None or spec.layer is not None or spec.name == "parameter":
        return True
    return bool(spec.source and node["params"].get("requires_grad"))


def _worked_out(nodes, incoming, order, name):
    """The value of the last node of `order` (its ancestors first), each op run on the
    engine on the values of its inputs."""
    values, ctx = {}, _Reading()
    for n in order:
        node = nodes[n]
        spec = registry.get(node["op"])
        by_port = {}
        for port, src in incoming.get(n, ()):
            if PORT in src:
                raise Unsupported(f"'{name}' is computed from a module's output")
            by_port.setdefault(port, []).append(values[src])
        args = [
            by_port.get(p.name, []) if p.variadic else (by_port.get(p.name) or [None])[0]
            for p in spec.inputs
        ]
        try:
            with eg.no_grad():
                values[n] = spec.run(ctx, args, resolved_params(spec, node["params"]))
        except Unsupported:
            raise
        except Exception as exc:  # the op's own error, in PyTorch's words
            raise Unsupported(f"the value of '{name}' cannot be worked out: {exc}") from None
    return values[order[-1]]


def _drop_unread(imp, candidates):
    """The nodes of `candidates` that nothing reads now (no edge, no variable, not a node a
    `# node` comment made), latest first, so that a chain read only by the leaf goes."""
    graph = imp.graph
    named = {v for v in imp.env.values() if v is not None}
    for n in reversed(candidates):
        node = graph.nodes.get(n)
        if node is None or not node.get("auto") or n in named or n == imp.target:
            continue
        if any(src == n or src.startswith(n + PORT) for src, _, _ in graph.edges):
            continue
        del graph.nodes[n]
        graph.edges = [e for e in graph.edges if e[1] != n]
