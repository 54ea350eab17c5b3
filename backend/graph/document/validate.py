"""Validation: every problem of a document at once, each tied to its node, edge, port or param,
before anything runs.

Structure first (unknown ops and ports, missing inputs, two edges into one input, cycles, params
out of range); then, when the structure is sound, shapes: the graph runs once on zero-filled
stand-ins under no_grad, so a shape that cannot work fails with exactly PyTorch's words.
"""

import math
import threading
from collections import defaultdict

import engine as eg
from engine.watch import array_of

from .. import registry
from ..limits import DEFAULT
from ..op_context import OpContext
from . import modules, stale
from .problems import GraphInvalid, Problem
from .snapshot import Snapshot

_META_ELEMENTS = 1_000_000  # bigger stand-ins are skipped: their shape is checked when run


# -- params ----------------------------------------------------------------------------------
def param_problem(param, value):
    """None if `value` suits `param`, else the reason it does not."""
    if value is None:
        return None if param.nullable or param.type in ("str",) else "must not be empty"
    t = param.type
    if t == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if t in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a number"
        if t == "int" and not isinstance(value, int):
            return "must be a whole number"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be finite"
        if t == "float" and abs(value) > 1.7e308:  # a huge JSON integer: no float can hold it
            return "must be finite"
        if param.min is not None and value < param.min:
            return f"must be at least {param.min:g}"
        if param.max is not None and value > param.max:
            return f"must be at most {param.max:g}"
        return None
    if t == "choice":
        return None if value in param.choices else f"must be one of {', '.join(param.choices)}"
    if t == "str":
        if not isinstance(value, str) or len(value) <= param.max_length:
            return None if isinstance(value, str) else "must be a short text"
        if param.max_length > 200:  # a dataset's CSV: say how long it may be
            return f"must be at most {param.max_length:,} characters"
        return "must be a short text"
    if t == "shape":
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= -1 for v in value
        )
        return None if ok and len(value) <= 16 else "must be a list of sizes, e.g. [2, 3]"
    if t == "dims":
        if isinstance(value, int) and not isinstance(value, bool):
            return None
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        )
        return None if ok else "must be a dim or a list of dims"
    if t == "tensor":
        return None if _is_nested_numbers(value) else "must be a number or nested lists of numbers"
    return f"has an unknown type {t}"


def _is_nested_numbers(v, depth=0):
    if isinstance(v, (bool, int, float)):
        return True
    if isinstance(v, list) and depth < 16:
        return all(_is_nested_numbers(x, depth + 1) for x in v)
    return False


def resolved_params(spec, params):
    """The node's params with defaults filled in (the executor runs on these)."""
    out = {p.name: p.default for p in spec.params}
    out.update({k: v for k, v in params.items() if spec.param(k) is not None})
    return out


# -- structure ---------------------------------------------------------------------------------
def topological_order(doc):
    """Node ids in an order where every edge points forward (document order breaks ties); the
    second value is the set of nodes left over because they sit on or behind a cycle."""
    ids = [n.id for n in doc.nodes]
    index = {nid: i for i, nid in enumerate(ids)}
    indegree = dict.fromkeys(ids, 0)
    out = defaultdict(list)
    for e in doc.edges:
        if e.source in index and e.target in index:
            indegree[e.target] += 1
            out[e.source].append(e.target)
    import heapq

    ready = [index[n] for n in ids if indegree[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        nid = ids[heapq.heappop(ready)]
        order.append(nid)
        for t in out[nid]:
            indegree[t] -= 1
            if indegree[t] == 0:
                heapq.heappush(ready, index[t])
    return order, {n for n in ids if indegree[n] > 0}


def _find_cycle(doc, stuck):
    """One cycle among the stuck nodes, as a list of ids in order."""
    succ = defaultdict(list)
    for e in doc.edges:
        if e.source in stuck and e.target in stuck:
            succ[e.source].append(e.target)
    start = next(n.id for n in doc.nodes if n.id in stuck)
    path, seen = [start], {start: 0}
    while True:
        nxt = next(iter(succ[path[-1]]), None)
        if nxt is None:
            return path
        if nxt in seen:
            return path[seen[nxt] :]
        seen[nxt] = len(path)
        path.append(nxt)


def size_problems(doc, limits=DEFAULT):
    problems = []
    if len(doc.nodes) > limits.max_nodes:
        problems.append(
            Problem(f"the graph has {len(doc.nodes)} nodes; the limit is {limits.max_nodes}")
        )
    if len(doc.edges) > limits.max_edges:
        problems.append(
            Problem(f"the graph has {len(doc.edges)} edges; the limit is {limits.max_edges}")
        )
    return problems


def _param_problems(n, spec):
    """The problems of node n's params: unknown ones, values out of range or of the wrong type."""
    problems = []
    for key, value in n.params.items():
        param = spec.param(key)
        if param is None:
            if n.op == "parameter" and key == "requires_grad":  # allowed, and always on
                if value is not True:
                    problems.append(
                        Problem("a parameter always requires grad", node=n.id, param=key)
                    )
                continue
            problems.append(Problem(f"unknown param '{key}' for {n.op}", node=n.id, param=key))
            continue
        why = param_problem(param, value)
        if why:
            problems.append(Problem(f"{key} {why}", node=n.id, param=key))
    return problems


def _input_problems(n, spec, connected):
    """Inputs of node n that need an edge and have none (`connected`: its ports with edges);
    an op that takes a `scalar` param instead of an input may go without either only once the
    param is set."""
    problems = []
    for port in spec.inputs:
        wired = port.name in connected
        if not port.optional and not wired:
            problems.append(
                Problem(
                    f"input '{port.name}' of {n.op} is not connected", node=n.id, port=port.name
                )
            )
        elif (
            spec.extra.get("scalar_for") == port.name
            and not wired
            and n.params.get("scalar") is None
        ):
            problems.append(
                Problem(
                    f"input '{port.name}' of {n.op} is not connected and no scalar is set",
                    node=n.id,
                    port=port.name,
                )
            )
    return problems


def structural_problems(doc, limits=DEFAULT):
    problems = []
    nodes = {}
    for n in doc.nodes:
        if n.id in nodes:
            problems.append(Problem(f"duplicate node id '{n.id}'", node=n.id))
        nodes[n.id] = n
    edge_ids = set()
    for e in doc.edges:
        if e.id in edge_ids:
            problems.append(Problem(f"duplicate edge id '{e.id}'", edge=e.id))
        edge_ids.add(e.id)

    for n in doc.nodes:
        spec = registry.get(n.op)
        if spec is None:
            problems.append(Problem(f"unknown op '{n.op}'", node=n.id))
            continue
        problems += _param_problems(n, spec)

    filled = defaultdict(list)
    for e in doc.edges:
        src, dst = nodes.get(e.source), nodes.get(e.target)
        if src is None:
            problems.append(Problem(f"edge from unknown node '{e.source}'", edge=e.id))
        if dst is None:
            problems.append(Problem(f"edge into unknown node '{e.target}'", edge=e.id))
        if src is None or dst is None:
            continue
        if e.source == e.target:
            problems.append(
                Problem(f"edge from '{e.source}' into itself", edge=e.id, node=e.target)
            )
        src_spec, dst_spec = registry.get(src.op), registry.get(dst.op)
        if src_spec is not None and e.sourcePort not in src_spec.outputs:
            problems.append(
                Problem(
                    f"{src.op} has no output '{e.sourcePort}'",
                    edge=e.id,
                    node=e.source,
                    port=e.sourcePort,
                )
            )
        if dst_spec is not None:
            port = dst_spec.port(e.targetPort)
            if port is None:
                problems.append(
                    Problem(
                        f"{dst.op} has no input '{e.targetPort}'",
                        edge=e.id,
                        node=e.target,
                        port=e.targetPort,
                    )
                )
                continue
            filled[(e.target, e.targetPort)].append(e.id)
            if not port.variadic and len(filled[(e.target, e.targetPort)]) == 2:
                problems.append(
                    Problem(
                        f"input '{e.targetPort}' of {dst.op} already has an "
                        "edge; an input takes one",
                        edge=e.id,
                        node=e.target,
                        port=e.targetPort,
                    )
                )

    for n in doc.nodes:
        spec = registry.get(n.op)
        if spec is None:
            continue
        connected = {port.name for port in spec.inputs if filled.get((n.id, port.name))}
        problems += _input_problems(n, spec, connected)

    problems += inplace_problems(doc)
    _, stuck = topological_order(doc)
    if stuck:
        cycle = _find_cycle(doc, stuck)
        text = " -> ".join(cycle + [cycle[0]])
        for nid in cycle:
            problems.append(Problem(f"cycle: {text}", node=nid))
    if doc.target is not None and doc.target not in nodes:
        problems.append(Problem(f"the target '{doc.target}' is not a node of the graph"))
    return problems


def inplace_problems(doc):
    """A document with in-place ops runs in statement order (its nodes' order, each node after
    its inputs): an in-place node placed before one of its inputs would run before a value it
    reads exists, and an `if` would pick statements by value."""
    specs = {n.id: registry.get(n.op) for n in doc.nodes}
    if not any(s is not None and s.extra.get("writes") for s in specs.values()):
        return []
    where = {n.id: i for i, n in enumerate(doc.nodes)}
    problems = []
    for e in doc.edges:
        spec = specs.get(e.target)
        if spec is None or not spec.extra.get("writes") or e.source not in where:
            continue
        if where[e.source] > where.get(e.target, -1):
            problems.append(
                Problem(
                    f"{spec.name} writes in statement order, but its input '{e.source}' comes "
                    f"after it in the graph: delete this node and add it again after "
                    f"'{e.source}'",
                    node=e.target,
                    edge=e.id,
                    port=e.targetPort,
                )
            )
    for n in doc.nodes:
        spec = registry.get(n.op)
        if spec is not None and spec.branches:
            problems.append(
                Problem(
                    "a graph with in-place ops runs its statements in order, which an if "
                    "cannot keep: use where, or take the in-place ops out",
                    node=n.id,
                )
            )
    return problems


# -- shapes -------------------------------------------------------------------------------------
class _MetaContext(OpContext):
    """What ops may ask of the executor, answered for a dry run (layers made anew)."""

    device = "cpu"  # stand-ins live on the CPU whatever device the run will use

    def __init__(self, limits):
        self.limits = limits


def shape_problems(doc, limits=DEFAULT, skip=frozenset()):
    """Run the graph on zero-filled stand-ins; each failing node reports PyTorch's message.
    Nodes in `skip` (they have problems of their own) and what depends on them are left out."""
    return _dry_run(doc, limits, skip)[0]


def inferred_shapes(doc, limits=DEFAULT):
    """Each node's output shape as the dry run infers it, before anything runs (the editor
    writes them at the nodes' output ports). Nodes with problems, what depends on them, and
    stand-ins too big to make are left out. Inside modules: under the flat ids (`b/<id>`)."""
    try:
        doc = modules.flatten(doc, limits.max_nodes, limits.max_edges)
    except modules.ModuleProblems:
        return {}
    if size_problems(doc, limits):
        return {}
    problems = structural_problems(doc, limits)
    skip = {p.node for p in problems if p.node} | {
        e.target for e in doc.edges if any(p.edge == e.id for p in problems)
    }
    meta = _dry_run(doc, limits, frozenset(skip))[1]
    return {nid: list(t.shape) for nid, t in meta.items()}


def _dry_run(doc, limits, skip=frozenset()):
    """(problems, each node's stand-in, the topological order, each node's incoming edges)."""
    order, _ = topological_order(doc)
    nodes = {n.id: n for n in doc.nodes}
    incoming = defaultdict(list)
    for e in doc.edges:
        incoming[e.target].append(e)
    meta, problems = {}, []
    ctx = _MetaContext(limits)
    with eg.no_grad():
        for nid in order:
            if nid not in skip:
                _dry_run_node(ctx, nodes[nid], incoming[nid], meta, problems)
    return problems, meta, order, incoming


def _dry_run_node(ctx, node, edges, meta, problems):
    """Node `node` on its inputs' stand-ins in `meta`: its own stand-in goes into `meta`, or
    its error (in the engine's, that is PyTorch's, words) into `problems`. A node with an
    input that has no stand-in (it failed, or is too big to make) is left out."""
    spec = registry.get(node.op)
    params = resolved_params(spec, node.params)
    try:
        inputs = _meta_inputs(spec, edges, meta)
    except _Unknown:
        return
    old = stale.find(node.id, spec.name, params, inputs)
    if old:
        # trained values of an earlier size: said at their param, with a code the editor
        # offers a reset for; the rest of the graph is checked as if they were reset
        problems.extend(
            Problem(s.message, node=node.id, param=s.param, code=stale.STALE_VALUES) for s in old
        )
        params = stale.without(params, old)
    try:
        if spec.source:
            out = _meta_source(ctx, spec, params)
        elif spec.branches:
            out = inputs[1]  # either branch may run; the then-branch stands for both
        else:
            if spec.extra.get("writes") and inputs[0] is not None:
                # a write on a copy: the stand-ins are kept for validating the next edit
                inputs[0] = inputs[0].clone()
            out = spec.run(ctx, inputs, params)
    except Exception as exc:  # the op's own error, in the engine's (PyTorch's) words
        # a dataset's problem names the param it is about (datasets.py)
        param = getattr(exc, "param", None)
        problems.append(Problem(str(exc).strip("'\""), node=node.id, param=param))
        return
    if out is not None and out.numel() <= _META_ELEMENTS:
        meta[node.id] = out


class _Unknown(Exception):
    pass


def dry_run_stand_in(spec, params, inputs, limits=DEFAULT):
    """One node's stand-in, as the dry run makes it, from its inputs' stand-ins by port
    ({port: [tensors]}); None where the op fails on them or the stand-in is too big (code
    import reads shapes with it while a graph is being read)."""
    params = resolved_params(spec, params)
    args = []
    for port in spec.inputs:
        vals = inputs.get(port.name, [])
        args.append(vals if port.variadic else (vals[0] if vals else None))
    ctx = _MetaContext(limits)
    try:
        with eg.no_grad():
            if spec.source:
                out = _meta_source(ctx, spec, params)
            elif spec.branches:
                out = args[1]
            else:
                if spec.extra.get("writes") and args[0] is not None:
                    args[0] = args[0].clone()
                out = spec.run(ctx, args, params)
    except Exception:  # the op's own error: the run reports it at the node
        return None
    return out if out is not None and out.numel() <= _META_ELEMENTS else None


def _meta_inputs(spec, edges, meta):
    inputs = []
    for port in spec.inputs:
        mine = [e for e in edges if e.targetPort == port.name]
        vals = []
        for e in mine:
            if e.source not in meta:
                raise _Unknown
            vals.append(meta[e.source])
        inputs.append(vals if port.variadic else (vals[0] if vals else None))
    return inputs


def _meta_source(ctx, spec, params):
    if params.get("value") is not None or spec.name in ("scalar", "dataset"):
        return spec.run(ctx, [], params)
    shape = tuple(params.get("shape") or ())
    ctx.check_numel(math.prod(shape))
    if math.prod(shape) > _META_ELEMENTS:
        return None
    t = eg.zeros(*shape, dtype=getattr(eg, params.get("dtype") or "float32"))
    if spec.name == "parameter" or params.get("requires_grad"):
        t.requires_grad_()  # an integer dtype fails here, with PyTorch's words
    return t


def validate(doc, limits=DEFAULT):
    """All problems of the document (an empty list when it can run).

    A document that differs from a recent one without problems only in some nodes' params
    (the usual request after an edit) is validated again only where that can change anything:
    those nodes' params and inputs, then the dry run of them and what depends on them, on the
    stand-ins the earlier dry run left (see _Valid).

    A document with modules is checked in its flat form (modules.py), so a problem inside a
    module is at the node inside it, under its flat id (`b/<id>`)."""
    try:
        doc = modules.flatten(doc, limits.max_nodes, limits.max_edges)
    except modules.ModuleProblems as bad:
        return bad.problems
    too_big = size_problems(doc, limits)
    if too_big:
        return too_big  # checking a graph over the limits would itself cost too much
    problems = _revalidate(doc, limits)
    if problems is not None:
        return problems
    problems = structural_problems(doc, limits)
    skip = {p.node for p in problems if p.node} | {
        e.target for e in doc.edges if any(p.edge == e.id for p in problems)
    }
    shapes, meta, order, incoming = _dry_run(doc, limits, frozenset(skip))
    problems += shapes
    if not problems:
        _remember(_Valid(doc, limits, meta, order, incoming))
    return problems


# -- validating again after an edit --------------------------------------------------------------
_VALID = []  # _Valid of recent documents without problems, the latest last
_VALID_KEPT = 8
_VALID_BYTES = 8 * 2**20  # stand-ins kept of one document, at most (else it is not kept)
_VALID_LOCK = threading.Lock()


class _Valid:
    """A document that had no problems, as much of it as validating the same structure with
    other params needs: its snapshot, the limits it was checked under, the topological order,
    each node's incoming edges and consumers, and the stand-ins of its dry run.
    A dry run is deterministic, so a node whose params and ancestors' params are unchanged has
    the same stand-in again: only the edited nodes and their descendants run anew, and they
    fail (or not) exactly as in a dry run of the whole graph."""

    __slots__ = ("snapshot", "limits", "order", "incoming", "meta", "_index")

    def __init__(self, doc, limits, meta, order, incoming):
        self.snapshot, self.limits, self.meta = Snapshot(doc), limits, meta
        self.order, self.incoming = order, incoming
        self._index = None  # made at the first edit (see index)

    def index(self):
        """(each node's position in document order, each node's consumers), shared by the
        documents after this one: what only validating an edit needs."""
        if self._index is None:
            position = {nid: i for i, (nid, _) in enumerate(self.snapshot.nodes)}
            consumers = {nid: [] for nid in position}
            for e in self.snapshot.edges:
                consumers[e["source"]].append(e["target"])
            self._index = (position, consumers)
        return self._index

    def after(self, doc, changed, meta):
        nxt = object.__new__(_Valid)
        nxt.limits, nxt.order, nxt.incoming = self.limits, self.order, self.incoming
        nxt.snapshot, nxt.meta = self.snapshot.with_params(doc, changed), meta
        nxt._index = self.index()
        return nxt


def _remember(valid):
    if sum(array_of(t).nbytes for t in valid.meta.values()) > _VALID_BYTES:
        return
    with _VALID_LOCK:
        _VALID[:] = [v for v in _VALID if v.snapshot.key != valid.snapshot.key]
        _VALID.append(valid)
        del _VALID[:-_VALID_KEPT]


def _revalidate(doc, limits):
    """The problems of `doc` from a recent document of its structure without problems, or None
    when there is none (or where something an edit changed needs the whole validation to
    report it with everything else: a param out of range, an unknown target)."""
    with _VALID_LOCK:
        recent = _VALID[::-1]
    for base in recent:
        if base.limits != limits:
            continue
        changed = base.snapshot.edited(doc)
        if changed is not None:
            break
    else:
        return None
    nodes = doc.nodes
    position, consumers = base.index()
    if doc.target is not None and doc.target not in position:
        return None
    for i in changed:
        n = nodes[i]
        spec = registry.get(n.op)
        connected = {e.targetPort for e in base.incoming[n.id]}
        if _param_problems(n, spec) or _input_problems(n, spec, connected):
            return None
    if not changed:
        base.snapshot.adopt(doc)
        return []
    # the edited nodes and their descendants, in topological order, dry-run anew
    dirty = {nodes[i].id for i in changed}
    stack = list(dirty)
    while stack:
        for target in consumers[stack.pop()]:
            if target not in dirty:
                dirty.add(target)
                stack.append(target)
    meta = {nid: t for nid, t in base.meta.items() if nid not in dirty}
    problems = []
    ctx = _MetaContext(limits)
    with eg.no_grad():
        for nid in base.order:
            if nid in dirty:
                node = nodes[position[nid]]
                _dry_run_node(ctx, node, base.incoming[nid], meta, problems)
    if not problems:
        _remember(base.after(doc, changed, meta))
    return problems


def check(doc, limits=DEFAULT):
    problems = validate(doc, limits)
    if problems:
        raise GraphInvalid(problems)
