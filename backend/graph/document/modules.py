"""Modules: named subgraphs a document defines once and uses as nodes (like `nn.Module`).

A document of version 2 may list `modules`: each a name (its class name in exported code), its
own nodes and edges, and which of its nodes are its inputs (`module_input`) and outputs
(`module_output`), in the order `forward` takes and returns them. A node with op `module` and
param `module` set to a definition's name is an instance of it; its ports are the
definition's input and output node ids.

Everything that runs a document (validation, execution, training) runs its flat form, which
`flatten` makes: each instance `b` is replaced by copies of its definition's nodes with ids
`b/<inner id>` (nested instances give `a/b/<id>`; `/` is not allowed in a document's own ids,
so a path never collides with one). The input and output nodes stay in the flat graph as
identity nodes, so the edge into an instance's port and the edges inside it each carry their
own value and gradient, streamed under their own ids; the page shows an instance's ports from
its `b/<port>` nodes and an opened module from the `b/` ids.

Each instance has its own parameters, as two `Block()`s in PyTorch do:
- param `seed` (default 0) is added to the seed of every source node inside it, so two
  instances of a randomly initialised definition start from different values;
- param `state` maps an inner node's path to params that replace the definition's for this
  instance only (what training writes back: the trained values of `b/w` go to `b`'s state
  under `w`).
Edits to a definition reach every instance; `state` entries whose node is gone are ignored.
"""

import copy

from .problems import GraphInvalid, Problem

MODULE_OP = "module"
INPUT_OP = "module_input"
OUTPUT_OP = "module_output"
SEP = "/"
MAX_DEPTH = 16  # modules nested deeper than this are refused (a definition using itself, too)
SEED_RANGE = 2**31


class ModuleProblems(ValueError):
    """A document whose modules cannot be unpacked; `.problems` says where."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


def flatten(doc, max_nodes=None, max_edges=None):
    """The document with every module instance unpacked (the document itself when it has
    none). ModuleProblems names each instance or edge that cannot be unpacked. The limits
    default to the default run limits: a few kilobytes of nested instances can stand for
    billions of nodes, so no caller unpacks without a bound."""
    if not doc.modules:
        return doc
    problems = definition_problems(doc)
    if problems:
        raise ModuleProblems(problems)
    from ..limits import DEFAULT  # (limits.py imports nothing of the graph layer)

    max_nodes = DEFAULT.max_nodes if max_nodes is None else max_nodes
    max_edges = DEFAULT.max_edges if max_edges is None else max_edges
    problems = measured(doc, max_nodes, max_edges)
    if problems:
        raise ModuleProblems(problems)
    unpacker = _Unpacker(doc, max_nodes)
    try:
        nodes, edges = unpacker.expand(doc.nodes, doc.edges, "", 0, {}, ())
    except _TooBig as big:  # stopped at once: a few nested modules can stand for billions
        raise ModuleProblems(
            [_problem(f"the graph unpacks to more than {big.args[0]:,} nodes (the limit)")]
        ) from None
    if unpacker.problems:
        raise ModuleProblems(unpacker.problems)
    # Not cached on the document: a node's params may be changed in place between two runs.
    # Flattening costs a few microseconds a node (bench/modules.py).
    return doc.model_copy(update={"nodes": nodes, "edges": edges, "modules": [], "version": 1})


class _TooBig(Exception):
    pass


def flat_or_invalid(doc, limits):
    """flatten(doc) for a run or a training; validate.GraphInvalid names what cannot unpack."""
    try:
        return flatten(doc, limits.max_nodes, limits.max_edges)
    except ModuleProblems as bad:
        raise GraphInvalid(bad.problems) from None


# -- measuring before unpacking ---------------------------------------------------------------
# The unpacked size of a definition is the same wherever it is used, so it is worked out once
# per definition (memoised) and multiplied out: a document nested 17 deep with 3 instances a
# level is refused in microseconds, with one problem per definition, instead of walking its
# 3**16 paths. Every instance counts as a node too (it is drawn as one, and unpacking it is
# work even when its definition holds nothing but other instances).


def measured(doc, max_nodes, max_edges):
    """Problems that stop `doc` from being unpacked within the limits, found before anything
    is unpacked: definitions that contain themselves or nest more than MAX_DEPTH deep (each
    named once), and a document that would unpack past `max_nodes` nodes or `max_edges`
    edges. An empty list when it can be unpacked."""
    defs = {m.name: m for m in doc.modules}
    sizes = {}  # name -> (nodes, edges, depth) of one instance unpacked; None: cannot be
    problems = []

    def size(name, stack, where):  # where: the flat id of the instance that leads here
        if name in sizes:
            return sizes[name]
        if name in stack:
            chain = " → ".join(stack[stack.index(name) :] + (name,))
            problems.append(
                _problem(f"module {name} contains itself (through {chain})", node=where)
            )
            sizes[name] = None
            return None
        m = defs[name]
        nodes, edges, depth = 0, len(m.edges), 1
        for n in m.nodes:
            nodes += 1
            inner = n.params.get("module") if n.op == MODULE_OP else None
            if not isinstance(inner, str) or inner not in defs:
                continue  # a plain node, or an unknown module that expand() names
            got = size(inner, stack + (name,), where + SEP + n.id)
            if got is None:
                sizes[name] = None
                return None
            nodes, edges, depth = nodes + got[0], edges + got[1], max(depth, got[2] + 1)
        if depth > MAX_DEPTH:
            problems.append(
                _problem(
                    f"module {name}: modules are nested more than {MAX_DEPTH} deep", node=where
                )
            )
            sizes[name] = None
            return None
        # past the limits the exact figure does not matter: keep the numbers small
        sizes[name] = (min(nodes, max_nodes + 1), min(edges, max_edges + 1), depth)
        return sizes[name]

    nodes, edges = len(doc.nodes), len(doc.edges)
    for n in doc.nodes:
        inner = n.params.get("module") if n.op == MODULE_OP else None
        if isinstance(inner, str) and inner in defs:
            got = size(inner, (), n.id)
            if got is not None:
                nodes, edges = nodes + got[0], edges + got[1]
    if problems:
        return problems
    if nodes > max_nodes:
        return [_problem(f"the graph unpacks to more than {max_nodes:,} nodes (the limit)")]
    if edges > max_edges:
        return [_problem(f"the graph unpacks to more than {max_edges:,} edges (the limit)")]
    return []


def instance_of(path):
    """('b', 'w') for the flat id 'b/w'; (None, path) for a node outside any module."""
    head, sep, rest = path.partition(SEP)
    return (head, rest) if sep else (None, path)


def write_state(doc, path, params):
    """Store `params` for the flat node `path` where flatten reads them: the params of a top
    level node itself, or the `state` of the outermost instance that holds it. Returns the
    node whose params changed (a copy put into doc.nodes)."""
    head, rest = instance_of(path)
    node_id = head if head is not None else path
    for i, n in enumerate(doc.nodes):
        if n.id == node_id:
            if head is None:
                new = n.model_copy(update={"params": {**n.params, **params}})
            else:
                state = dict(n.params.get("state") or {})
                state[rest] = {**state.get(rest, {}), **params}
                new = n.model_copy(update={"params": {**n.params, "state": state}})
            doc.nodes[i] = new
            return new
    raise KeyError(node_id)


class _Unpacker:
    def __init__(self, doc, max_nodes):
        self.defs = {m.name: m for m in doc.modules}
        self.max_nodes = max_nodes
        self.count = 0
        self.problems = []

    def _problem(self, message, **where):
        self.problems.append(_problem(message, **where))

    def expand(self, nodes, edges, prefix, seed, state, stack):
        """The nodes and edges of one graph level with ids under `prefix`; instances inside
        it unpacked. `seed` is added to source seeds, `state` replaces inner params."""
        out_nodes, out_edges = [], []
        # where an edge into or out of an instance port really goes: (instance, port) -> id
        port_nodes = {}
        for n in nodes:
            if n.op == MODULE_OP:
                inner = self._instance(n, prefix, seed, state, stack)
                if inner is None:
                    continue
                i_nodes, i_edges, ports = inner
                out_nodes += i_nodes
                out_edges += i_edges
                port_nodes[n.id] = ports
                continue
            params = n.params
            own = state.get(n.id)
            if own:
                params = {**params, **own}
            if seed and "seed" in params:
                params = {**params, "seed": (int(params["seed"]) + seed) % SEED_RANGE}
            if prefix or params is not n.params:
                n = _renamed(n, {"id": prefix + n.id, "params": params})
            out_nodes.append(n)
            self.count += 1
            if self.max_nodes is not None and self.count > self.max_nodes:
                raise _TooBig(self.max_nodes)
        for e in edges:
            update = {}
            if prefix:
                update = {
                    "id": prefix + e.id,
                    "source": prefix + e.source,
                    "target": prefix + e.target,
                }
            ends = (
                ("source", "sourcePort", "out", "output", "out"),
                ("target", "targetPort", "in", "input", "input"),
            )
            for end, port_key, side, word, inner_port in ends:
                ports = port_nodes.get(getattr(e, end))
                if ports is None:
                    continue  # not an instance: the edge's end stays as it is
                port = getattr(e, port_key)
                if port not in ports[side]:
                    self._problem(
                        f"module {ports['name']} has no {word} {port!r}", edge=prefix + e.id
                    )
                    break
                update[end], update[port_key] = ports[side][port], inner_port
            else:
                out_edges.append(_renamed(e, update) if update else e)
        return out_nodes, out_edges

    def _instance(self, n, prefix, seed, state, stack):
        name = n.params.get("module")
        path = prefix + n.id
        m = self.defs.get(name) if isinstance(name, str) else None
        if m is None:
            known = ", ".join(sorted(self.defs)) or "none"
            self._problem(f"unknown module {name!r} (defined: {known})", node=path, param="module")
            return None
        if name in stack or len(stack) >= MAX_DEPTH:
            self._problem(
                f"module {name} contains itself (through {' → '.join(stack + (name,))})"
                if name in stack
                else f"modules are nested more than {MAX_DEPTH} deep",
                node=path,
            )
            return None
        own_seed = n.params.get("seed", 0)
        if not isinstance(own_seed, int) or isinstance(own_seed, bool) or own_seed < 0:
            self._problem("seed must be a whole number ≥ 0", node=path, param="seed")
            return None
        inner_state = _state_under(state, n.id)
        own_state = n.params.get("state") or {}
        if not isinstance(own_state, dict):
            self._problem("state must map inner node ids to params", node=path, param="state")
            return None
        for key, params in own_state.items():
            if isinstance(params, dict):
                inner_state[key] = {**params, **inner_state.get(key, {})}  # outer state wins
        nodes, edges = self.expand(
            m.nodes, m.edges, path + SEP, seed + own_seed, inner_state, stack + (name,)
        )
        ports = {
            "name": name,
            "in": {i: path + SEP + i for i in m.inputs},
            "out": {o: path + SEP + o for o in m.outputs},
        }
        return nodes, edges, ports


def _renamed(model, fields):
    """A copy of a node or edge with some fields replaced: model_copy(update=fields), which
    is what a big graph's flattening spends its time on, at half its cost (a shallow copy
    and one dict update; like model_copy, nothing is validated again)."""
    m = copy.copy(model)
    m.__dict__.update(fields)
    return m


def _state_under(state, instance_id):
    """The entries of `state` for nodes inside the instance `instance_id`, keyed from there."""
    lead = instance_id + SEP
    return {k[len(lead) :]: v for k, v in state.items() if k.startswith(lead)}


def _problem(message, **where):

    return Problem(message, **where)


def definition_problems(doc):
    """Problems of the definitions themselves, tied to the definition's inner node: inputs
    and outputs that are not input/output nodes of the definition, repeated names."""
    problems = []
    seen = set()
    for m in doc.modules:
        if m.name in seen:
            problems.append(_problem(f"module {m.name} is defined twice"))
        seen.add(m.name)
        ops = {n.id: n.op for n in m.nodes}
        for kind, ids, op in (("input", m.inputs, INPUT_OP), ("output", m.outputs, OUTPUT_OP)):
            for i in ids:
                if ops.get(i) != op:
                    problems.append(
                        _problem(f"module {m.name}: its {kind} {i!r} is not a {op} node inside it")
                    )
    return problems
