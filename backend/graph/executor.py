"""Running a graph document: define-by-run, one fresh engine graph per run.

A run pulls values from the graph's sinks (and the backward target), so an `if` node evaluates
its condition first and only then the branch it picks; nodes that only feed the other branch
never run and are reported as skipped. Every step is a trace record handed to `emit` as soon as
it exists, in compute order:

    {"kind": "summaries", "first": row, "rows": n, ...columns}   (before the records below)
    {"kind": "value",     "node": id, "summary": row}
    {"kind": "skipped",   "node": id, "reason": "..."}
    {"kind": "branch_not_taken", "node": if-node id, "port": "then" | "else", "edge": id}
    {"kind": "edge_grad", "edge": id, "source": id, "target": id, "summary": row}
    {"kind": "node_grad", "node": id, "summary": row}
    {"kind": "leaf_grad", "node": id, "param": None | "weight" | "bias", "summary": row}
    {"kind": "autograd",  "nodes": [...], "edges": [...]}
    {"kind": "error",     "node": id | None, "message": str, "type": str}

Edge gradients come from the engine's backward pass itself, not recomputed: the run watches
each consumer's engine node, and the pass's observer (engine.autograd.graph.observe_backward,
called after each node as a post-hook on it would be) sees, for each input, exactly what the
node sends back along that edge. An op that is several engine ops (a composite: cross_entropy,
linear, `if`) instead gets an `alias` node on each input edge, watched the same way. A node
with no engine node of its own to watch (a leaf, a composite's output) gets a tensor hook.
Where a node feeds two consumers, its two edge gradients sum to its gradient.

Summaries are made in batches, as tables (see summary.py): records wait in a short buffer and
go to `emit` together, each batch's tables first: whenever 10 ms have passed, when a batch is
full (64 records at first, each batch twice the last up to 4,096: the first records go out
soon, the many that follow in a few large batches, whose summaries cost little more than small
ones), and at the end. A record's summary is a row of a table; summary.expand_records writes
them out.

What a run needs of a document that does not depend on values (the index, the compute order,
resolved params, each node's inputs) is a _Plan, kept for the document's next runs: a document
that comes back with only some params changed reuses it and re-resolves just those nodes.
"""

import gc
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, field
from operator import attrgetter

import engine as eg
from engine.autograd.graph import AccumulateGrad, accumulator_of, observe_backward
from engine.ops.shape import alias

from .autograd_view import autograd_record
from .index import GraphIndex
from .limits import DEFAULT, LimitExceeded
from .summary import expand_records, summary_tables, table_of_row, take_rows
from .validate import GraphInvalid, Problem, check, resolved_params

FLUSH_FIRST = 64
FLUSH_RECORDS = 4096
FLUSH_SECONDS = 0.01
CHECK_EVERY = 32  # cache hits between checks for cancel and the time limit
CHECK_EVERY_OBSERVED = 8  # the same for watched nodes in a backward pass


class Cancelled(Exception):
    pass


@dataclass
class RunResult:
    status: str  # "ok" | "error" | "cancelled"
    mode: str
    target: str | None = None
    error: dict | None = None
    timings: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)  # node id -> tensor
    node_grads: dict = field(default_factory=dict)  # node id -> tensor
    edge_grads: dict = field(default_factory=dict)  # edge id -> tensor
    leaf_grads: dict = field(default_factory=dict)  # node id or "node.param" -> tensor
    skipped: list = field(default_factory=list)
    grads: "LeafGrads | None" = None  # after a backward pass: what accumulate_grad starts from


@dataclass(frozen=True)
class LeafGrads:
    """The leaves' .grad after a backward run, for a later run to start from (accumulate_grad:
    PyTorch without zero_grad). `signature` is the graph's structure and each leaf's key, shape
    and dtype: a run of another graph, or with other leaves, starts fresh instead."""

    signature: tuple
    grads: dict  # node id or "node.param" -> tensor (copied before a run adds to it)


class ForwardCache:
    """Values of earlier forward runs by signature (the node's id, op and params and its inputs'
    signatures, hashed to 64 bits), so that editing one leaf recomputes only what depends on
    it. An entry keeps the value and, once made, its summary: an unchanged node costs a lookup.
    """

    def __init__(self, max_entries=20000):
        self.max_entries = max_entries
        self._store = OrderedDict()
        self._lock = threading.Lock()
        # peek(sig): the entry for `sig` or None, neither counted nor marked as used: a run
        # looks up many entries this way and then `touch`es its hits together, under one lock.
        # A plain read of the store (the GIL makes it atomic): a method around it costs as much
        # again as the read.
        self.peek = self._store.get
        self.hits = self.misses = 0

    def touch(self, sigs, misses=0):
        """Mark the entries of `sigs` as used (the newest, last evicted) and count them as hits,
        and `misses` more misses; entries evicted since they were peeked are skipped."""
        with self._lock:
            move = self._store.move_to_end
            for sig in sigs:
                if sig in self._store:
                    move(sig)
            self.hits += len(sigs)
            self.misses += misses

    def get(self, sig):
        """The entry [tensor, (summary table, row) or None, meta] for `sig`, or None."""
        with self._lock:
            entry = self._store.get(sig)
            if entry is not None:
                self._store.move_to_end(sig)
                self.hits += 1
            else:
                self.misses += 1
            return entry

    def put(self, sig, tensor, meta=None):
        entry = [tensor, None, meta]
        with self._lock:
            self._store[sig] = entry
            self._store.move_to_end(sig)
            while len(self._store) > self.max_entries:
                self._store.popitem(last=False)
        return entry


class _Step:
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
    )

    def __init__(self, index, nid):
        spec, params = index.specs[nid], index.params[nid]
        incoming = index.incoming[nid]
        self.spec, self.params = spec, params
        self.composite = spec.extra.get("composite", False)
        self.source = spec.source
        # per port: (its edges, variadic), and each edge's position among the op's arguments
        # (what the engine node's next_functions and post-hook grad_inputs follow)
        self.ports, self.srcs, positions, parts, pos = [], [], [], [], 0
        for port in spec.inputs:
            edges = tuple(incoming.get(port.name, ()))
            self.ports.append((edges, port.variadic))
            parts.append((port.name, len(edges)))
            for e in edges:
                self.srcs.append(e.source)
                positions.append((e, pos))
                if port.variadic:
                    pos += 1
            if not port.variadic:
                pos += 1
        self.variadic = any(variadic for _, variadic in self.ports)
        self.run = spec.run
        # each port's source when every port has one edge or none (_forward_fresh)
        simple = not self.variadic and spec.name != "if"
        simple = simple and all(len(edges) <= 1 for edges, _ in self.ports)
        self.port_srcs = (
            tuple(edges[0].source if edges else None for edges, _ in self.ports) if simple else None
        )
        self.one_consumer = len(index.outgoing[nid]) == 1
        # what the backward observer needs of each edge in (see _watched_edge)
        self.watched = tuple(_watched_edge(index, e, pos) for e, pos in positions)
        node = index.nodes[nid]
        # Python's tuple hash: 64 bits, in-memory only (the cache never leaves the process)
        self.key = hash((nid, node.op, repr(sorted(params.items())), tuple(parts)))


def _watched_edge(index, edge, pos):
    """What the backward observer needs of an edge it watches: the gradient's position among
    the consumer's inputs, the edge, and whether it is its source's only consumer (then the
    edge's gradient is the source's too: reported with it, no hook needed)."""
    return (pos, edge.id, edge.source, edge.target, len(index.outgoing[edge.source]) == 1)


def _static_order(index):
    """The order `_Run.demand` computes nodes in, for a document without `if` nodes (whose
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


class _Plan(GraphIndex):
    """Everything a run needs of a document that no value changes: the index, resolved params,
    each node's step and, without `if` nodes, the compute order. Shared by concurrent runs, so
    never changed once made: a document with other params gets a copy (see `edited`)."""

    def __init__(self, doc, key):
        super().__init__(doc)
        self.key = key
        self.raw = {n.id: deepcopy(n.params) for n in doc.nodes}  # to notice edits, even nested
        self.steps = {nid: _Step(self, nid) for nid in self.order}
        has_if = any(spec.name == "if" for spec in self.specs.values())
        self.static_order = None if has_if else _static_order(self)

    def edited(self, doc, changed):
        """A copy for `doc`, whose nodes `changed` have other params than this plan's."""
        plan = object.__new__(_Plan)
        plan.__dict__.update(self.__dict__)
        plan.doc = doc
        plan.nodes = {n.id: n for n in doc.nodes}
        plan.params, plan.raw, plan.steps = dict(self.params), dict(self.raw), dict(self.steps)
        for n in changed:
            plan.params[n.id] = resolved_params(self.specs[n.id], n.params)
            plan.raw[n.id] = deepcopy(n.params)
            plan.steps[n.id] = _Step(plan, n.id)
        return plan


_PLANS = OrderedDict()  # structure hash -> the latest _Plan of that structure
_PLANS_KEPT = 8
_PLANS_LOCK = threading.Lock()


_NODE_KEY = attrgetter("id", "op")  # what a plan's structure is made of, read in C
_EDGE_KEY = attrgetter("id", "source", "sourcePort", "target", "targetPort")


def plan_for(doc):
    """The plan of `doc`: from the plans of recent runs when a document of the same structure
    (node ids and ops, edges) ran, with the params of the nodes that differ resolved anew."""
    # the structure hashed to 64 bits once, as the cache's signatures are: a key of thousands
    # of tuples would be hashed and compared element by element at every lookup
    key = hash((tuple(map(_NODE_KEY, doc.nodes)), tuple(map(_EDGE_KEY, doc.edges))))
    with _PLANS_LOCK:
        plan = _PLANS.get(key)
        if plan is not None:
            _PLANS.move_to_end(key)
    if plan is None:
        plan = _Plan(doc, key)
    else:
        raw = plan.raw
        changed = [n for n in doc.nodes if n.params != raw[n.id]]
        if changed:
            plan = plan.edited(doc, changed)
        elif plan.doc is not doc:
            plan = plan.edited(doc, ())
    with _PLANS_LOCK:
        _PLANS[key] = plan
        while len(_PLANS) > _PLANS_KEPT:
            _PLANS.popitem(last=False)
    return plan


class _Context:
    """What an op may ask of the run (the catalog's `ctx`). It holds the run's leaf list and
    owner map, not the run, so that no reference cycle keeps a run alive."""

    __slots__ = ("node_id", "device", "limits", "leaves", "owner")

    def __init__(self, device, limits, leaves, owner):
        self.node_id, self.device, self.limits = None, device, limits
        self.leaves, self.owner = leaves, owner

    def check_numel(self, n):
        _check_numel(n, self.limits)

    def add_parameters(self, named):
        for name, p in named:
            _add_leaf(self.leaves, self.owner, self.node_id, name, p)

    def module(self, key, factory):
        """The node's layer (catalog.linear_run): a run makes it anew every time."""
        return factory()


def _check_numel(n, limits):
    if n > limits.max_elements:
        raise LimitExceeded(
            f"a tensor of {n:,} elements is over the limit of "
            f"{limits.max_elements:,} elements per tensor"
        )


def _add_leaf(leaves, owner, node_id, param, tensor):
    leaves.append((node_id, param, tensor))
    if tensor.requires_grad:
        owner[accumulator_of(tensor)] = ("leaf", node_id, param)


class _Recorder:
    """A run's outgoing records and its clock: batching, summaries, cancel and time limit.

    Hooks on the engine's tensors and the backward observer hold this object, never the run
    itself: the run holds the values, the values their grad_fns, the grad_fns the hooks, so a
    hook holding the run would make every run a reference cycle that only the garbage
    collector could free."""

    def __init__(self, emit, cancel, limits):
        self.emit, self.cancel, self.limits = emit, cancel, limits
        self.started = self.last_flush = time.perf_counter()
        self.preview = limits.preview_elements
        # waiting for flush(): (record, tensor to summarise or None, cache entry or None); a
        # cache entry without a tensor has the summary already: entry[1] = (its table, row).
        # Always this one list: hot loops keep its `append` (self.add).
        self.pending = []
        self.add = self.pending.append
        self.rows = 0  # summary table rows sent so far
        self.batch = FLUSH_FIRST
        self.quiet = False  # a second backward pass: node and edge gradients are the first's

    def record(self, rec, tensor=None, entry=None):
        """Queue a record; `tensor` gets summarised at the flush, or the cache `entry` of a hit
        says where its summary is. (Hot loops `add` the tuple themselves and leave sending to
        the checkpoint they call between nodes.)"""
        self.pending.append((rec, tensor, entry))
        if len(self.pending) >= self.batch:
            self.flush()

    def flush(self):
        """Send the waiting records, after the tables of their summaries (summary.py): fresh
        tensors' rows, and rows of earlier tables for cache hits, which keep where their
        summary is. Rows are numbered across the run, from 0."""
        pending = self.pending.copy()
        self.pending.clear()
        self.last_flush = time.perf_counter()
        self.batch = min(2 * self.batch, FLUSH_RECORDS)
        emit = self.emit
        fresh, refs = [], {}  # tensors to summarise; id(earlier table) -> (table, rows, records)
        for rec, t, entry in pending:
            if t is not None:
                fresh.append(t)
            elif entry is not None:  # a cache hit summarised before: a row of an earlier table
                table, k = entry[1]
                ref = refs.get(id(table))
                if ref is None:
                    ref = refs[id(table)] = (table, [], [])
                ref[1].append(k)
                ref[2].append(rec)
        tables, where = summary_tables(fresh, self.preview) if fresh else ((), ())
        base = self.rows  # the fresh tables' rows follow on from the run's last row
        for table in tables:
            self._send_table(table)
        for table, rows, recs in refs.values():
            first = self._send_table(take_rows(table, rows))
            for j, rec in enumerate(recs):
                rec["summary"] = first + j
        where = iter(where)
        for rec, t, entry in pending:
            if t is not None:
                row = next(where)
                rec["summary"] = base + row
                if entry is not None:  # the cache keeps where its summary is
                    entry[1] = table_of_row(tables, row)
            emit(rec)

    def _send_table(self, table):
        first = table["first"] = self.rows
        self.rows += table["rows"]
        self.emit(table)
        return first

    def checkpoint(self):
        """Between nodes (and in backward hooks): honour cancel and the time limit, and send
        the waiting records when a batch is full or they have waited FLUSH_SECONDS, so a slow
        node does not hold back the ones before it."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        now = time.perf_counter()
        if now - self.started > self.limits.max_seconds:
            raise LimitExceeded(
                f"the run took longer than {self.limits.max_seconds:g} s, the limit for one run"
            )
        pending = self.pending
        if pending and (len(pending) >= self.batch or now - self.last_flush >= FLUSH_SECONDS):
            self.flush()


def _needs_grad(t):
    return t.grad_fn is not None or t._requires_grad


class _Run:
    def __init__(self, plan, mode, target, emit, cancel, limits, cache):
        self.plan = plan
        self.nodes, self.specs, self.params = plan.nodes, plan.specs, plan.params
        self.incoming, self.outgoing, self.order = plan.incoming, plan.outgoing, plan.order
        self.steps = plan.steps
        self.mode, self.limits = mode, limits
        self.cache = cache if mode == "forward" else None
        self.backward = mode == "backward"
        self.target = target or plan.doc.target
        self.result = RunResult("ok", mode)
        self.values = self.result.values
        self.owner = {}  # engine node -> ("node", id) | ("edge", id) | ("leaf", id, param)
        self.leaves = []  # (node id, param name or None, tensor)
        self.picked = {}  # if-node id -> the port it ran
        self.single_consumer = set()  # nodes whose gradient their one edge's record reports
        self.watch = {}  # engine node -> (its watched edges: _watched_edge, editor node, nr)
        self.signatures = {}
        # Engine nodes are claimed for the autograd view only when the view of an earlier run
        # cannot be sent again (see _autograd_view); the metas say whether it can.
        self.metas = []
        self.total_bytes = 0
        self.recorder = _Recorder(emit, cancel, limits)
        self.record = self.recorder.record
        self.flush = self.recorder.flush
        self.checkpoint = self.recorder.checkpoint
        self.device = "cpu"
        self.teaching = (None, False, False)  # run_backward's start_grads, twice, retain_graph

    def check_numel(self, n, node_id):
        _check_numel(n, self.limits)

    def add_leaf(self, node_id, param, tensor):
        _add_leaf(self.leaves, self.owner, node_id, param, tensor)

    # -- forward --------------------------------------------------------------------------------
    def forward(self):
        self.ctx = _Context(self.device, self.limits, self.leaves, self.owner)
        try:
            if self.plan.static_order is not None and self.cache is not None:
                self._forward_cached(self.plan.static_order)
            elif self.plan.static_order is not None:
                self._forward_fresh(self.plan.static_order)
            else:
                wanted = [nid for nid in self.order if not self.outgoing[nid]]
                if self.target and self.target not in wanted:
                    wanted.append(self.target)
                for nid in wanted:
                    self.demand(nid)
        finally:
            self.ctx = None
        values = self.values
        for nid in self.order:
            if nid not in values:
                reason = self._skip_reason(nid)
                self.result.skipped.append(nid)
                self.record({"kind": "skipped", "node": nid, "reason": reason})

    def _skip_reason(self, nid):
        for e in self.outgoing[nid]:
            if e.target in self.picked and e.targetPort not in ("condition", self.picked[e.target]):
                return f"the branch of '{e.target}' that did not run"
        return "feeds only nodes that did not run"

    def _forward_cached(self, order):
        """A forward run through the cache in a fixed order: what run_node does, with a hit
        (the usual node after an edit) cut down to a hash, a lookup and its record, since a
        node the page sees again unchanged should cost next to nothing. Misses take run_node.
        Cancel and the time limit are checked every CHECK_EVERY hits (a hit takes about a
        microsecond) and at every miss."""
        cache, steps, sigs, values = self.cache, self.steps, self.signatures, self.values
        rec, max_bytes, metas = self.recorder, self.limits.max_total_bytes, self.metas
        peek, sig_of = cache.peek, sigs.__getitem__
        hits, misses, since_check, total = [], 0, 0, self.total_bytes
        add = rec.add
        try:
            for nid in order:
                step = steps[nid]
                sig = sigs[nid] = hash((step.key, *map(sig_of, step.srcs)))
                entry = peek(sig)
                if entry is None:
                    misses += 1
                    self.total_bytes = total
                    self.run_node(nid, sig)
                    total = self.total_bytes
                    continue
                hits.append(sig)
                out, summary, meta = entry
                total += out._data.nbytes
                if total > max_bytes:
                    raise LimitExceeded(_bytes_message(max_bytes))
                values[nid] = out
                if step.source and out._requires_grad and out.grad_fn is None:
                    self.add_leaf(nid, None, out)
                metas.append(meta)
                # summarised by an earlier run: the entry says where; else summarise it now
                record = {"kind": "value", "node": nid, "cached": True}
                add((record, None if summary else out, entry))
                since_check += 1
                if since_check >= CHECK_EVERY:
                    since_check = 0
                    self.checkpoint()
        finally:
            self.total_bytes = total
            cache.touch(hits, misses)

    def _forward_fresh(self, order):
        """A run without a cache in a fixed order (every backward run): what run_node does,
        in one loop, for the usual node (each input port one edge or none, and in a backward
        run no composite); other nodes take run_node. A graph is mostly small ops, where each
        method call and attribute lookup per node costs a good part of the op itself."""
        steps, values, metas, get = self.steps, self.values, self.metas, self.values.get
        add, checkpoint, ctx = self.recorder.add, self.checkpoint, self.ctx
        backward, target, single_consumer = self.backward, self.target, self.single_consumer
        max_elements, max_bytes = self.limits.max_elements, self.limits.max_total_bytes
        Tensor = eg.Tensor
        for nid in order:
            step = steps[nid]
            srcs = step.port_srcs
            if srcs is None or (backward and step.composite):
                self.run_node(nid)
                continue
            checkpoint()
            inputs = list(map(get, srcs))
            ctx.node_id = nid
            try:
                out = step.run(ctx, inputs, step.params)
                if out.__class__ is not Tensor and not isinstance(out, Tensor):
                    raise TypeError(f"{step.spec.name} gave no tensor")
                if out._data.size > max_elements:
                    _check_numel(out._data.size, self.limits)
            except Cancelled:
                raise
            except Exception as exc:  # LimitExceeded included: it belongs to this node too
                raise _NodeError(nid, exc) from exc
            gf, requires_grad = out.grad_fn, out._requires_grad
            own = False  # whether the observer reports this node's gradient
            single = step.one_consumer and nid != target
            if backward and gf is not None:
                own = not single and requires_grad
                if not self._watch_edges(out, inputs, step, nid if own else None):
                    out = self._compute(nid, step, True)  # aliases: see _watch_edges
                    gf, own = out.grad_fn, False
            a = out._data
            self.total_bytes += a.nbytes
            if self.total_bytes > max_bytes:
                raise LimitExceeded(_bytes_message(max_bytes))
            values[nid] = out
            metas.append(
                (
                    None if step.source else step.key,
                    a.shape,
                    a.dtype,
                    requires_grad,
                    gf.__class__ if gf is not None else None,
                )
            )
            if step.source and requires_grad and gf is None:
                self.add_leaf(nid, None, out)
            if backward and requires_grad:
                if single:
                    single_consumer.add(nid)
                elif not own:
                    out.register_hook(self._node_hook(nid))
            add(({"kind": "value", "node": nid}, out, None))

    def demand(self, root):
        """Compute `root` after everything it needs (iteratively: graphs can be deep)."""
        stack = [(root, 0)]
        while stack:
            nid, stage = stack.pop()
            if nid in self.values:
                continue
            spec = self.specs[nid]
            ports = self.incoming[nid]
            if spec.name == "if":
                if stage == 0:
                    stack.append((nid, 1))
                    stack.append((ports["condition"][0].source, 0))
                elif stage == 1:
                    cond = self.values[ports["condition"][0].source]
                    try:
                        branch = "then" if bool(cond) else "else"
                    except Exception as exc:
                        raise _NodeError(nid, exc) from exc
                    self.picked[nid] = branch
                    other = "else" if branch == "then" else "then"
                    for e in ports.get(other, ()):
                        self.record(
                            {
                                "kind": "branch_not_taken",
                                "node": nid,
                                "port": other,
                                "edge": e.id,
                            }
                        )
                    stack.append((nid, 2))
                    stack.append((ports[branch][0].source, 0))
                else:
                    self.run_node(nid)
                continue
            if stage == 0:
                stack.append((nid, 1))
                for port in reversed(spec.inputs):
                    for e in reversed(ports.get(port.name, ())):
                        stack.append((e.source, 0))
            else:
                self.run_node(nid)

    def _inputs(self, nid, step, use_alias):
        """The node's inputs in port order (variadic ports as lists)."""
        values = self.values
        if step.spec.name == "if":
            return self._if_inputs(nid, step, use_alias)
        inputs = []
        for edges, variadic in step.ports:
            if use_alias:
                vals = [self._alias(e) for e in edges]
            else:
                vals = [values[e.source] for e in edges]
            inputs.append(vals if variadic else (vals[0] if vals else None))
        return inputs

    def _if_inputs(self, nid, step, use_alias):
        inputs = []
        for port, (edges, _) in zip(step.spec.inputs, step.ports):
            if port.name not in ("condition", self.picked[nid]):
                inputs.append(None)
                continue
            vals = [self._alias(e) if use_alias else self.values[e.source] for e in edges]
            inputs.append(vals[0] if vals else None)
        return inputs

    def _alias(self, edge):
        t = self.values[edge.source]
        if not t.requires_grad:
            return t
        a = alias(t)  # this edge's own node: it sends back the gradient of the edge
        self.owner[a.grad_fn] = ("edge", edge.id)
        self.watch[a.grad_fn] = ((_watched_edge(self.plan, edge, 0),), None, 0)
        return a

    def _observer(self):
        """What the backward pass calls after each engine node (engine's observe_backward):
        for a node in `watch`, the gradient it sends along each of its editor edges and, for
        the editor node whose own engine node it is, the gradient that reached it (output `nr`
        of grad_outputs, what a tensor hook on it would see), in that order. One call per
        engine node, where a post-hook registered on each node cost as much as the op."""
        # closes over the recorder and the result's dicts only (see _Recorder)
        rec, watched_node = self.recorder, self.watch.get
        add, checkpoint = rec.add, rec.checkpoint
        edge_grads, node_grads = self.result.edge_grads, self.result.node_grads

        since_check = 0

        def observe(node, grad_inputs, grad_outputs):
            nonlocal since_check
            watched = watched_node(node)
            if watched is None:
                return
            since_check += 1
            if since_check >= CHECK_EVERY_OBSERVED:  # a node's backward takes microseconds
                since_check = 0
                checkpoint()
            if rec.quiet:
                return
            edges, nid, nr = watched
            if nid is not None:
                g = grad_outputs[nr]
                if g is not None:
                    node_grads[nid] = g
                    add(({"kind": "node_grad", "node": nid}, g, None))
            for pos, eid, source, target, single in edges:
                g = grad_inputs[pos]
                if g is not None:
                    edge_grads[eid] = g
                    add(
                        (
                            {"kind": "edge_grad", "edge": eid, "source": source, "target": target},
                            g,
                            None,
                        )
                    )
                    if single:  # the source's one consumer: its gradient is this one
                        node_grads[source] = g
                        add(({"kind": "node_grad", "node": source}, g, None))

        return observe

    def _watch_edges(self, out, inputs, step, nid):
        """Watch the op's own node for its edges' gradients (and, for `nid`, its own); False
        when its next_functions do not line up with the inputs (then the caller falls back
        to aliases). Edge k's input is the k-th input given; without variadic ports (lists),
        that is inputs[position]: no flattening, which costs more than the op itself here."""
        node = out.grad_fn
        nf = node.next_functions
        flat = None
        if step.variadic:
            flat = [x for v in inputs for x in (v if isinstance(v, list) else [v]) if x is not None]
        mine = step.watched  # all of them, unless an input needs no gradient
        for k, w in enumerate(step.watched):
            pos = w[0]
            t = inputs[pos] if flat is None else flat[k]
            want = t.grad_fn
            if want is None and t._requires_grad:
                want = accumulator_of(t)
            if pos >= len(nf) or nf[pos][0] is not want:
                return False
            if want is None:
                mine = None
        if mine is None:  # some inputs need no gradient: watch the others' edges only
            if flat is None:
                mine = tuple(w for w in step.watched if _needs_grad(inputs[w[0]]))
            else:
                mine = tuple(w for w, t in zip(step.watched, flat) if _needs_grad(t))
        if mine or nid is not None:
            self.watch[node] = (mine, nid, out._output_nr)
        return True

    def _node_hook(self, nid):
        rec, node_grads = self.recorder, self.result.node_grads  # not self: see _Recorder

        def hook(grad):
            rec.checkpoint()
            if rec.quiet:
                return
            node_grads[nid] = grad
            rec.add(({"kind": "node_grad", "node": nid}, grad, None))

        return hook

    def signature(self, nid, step):
        sigs = self.signatures
        if step.spec.name == "if":
            picked = self.picked[nid]
            # the branch that did not run is no part of the value
            parts = [step.key, picked]
            for port, (edges, _) in zip(step.spec.inputs, step.ports):
                if port.name in ("condition", picked):
                    parts += [sigs[e.source] for e in edges]
            sig = hash(tuple(parts))
        else:
            sig = hash((step.key, *[sigs[s] for s in step.srcs]))
        sigs[nid] = sig
        return sig

    def run_node(self, nid, sig=None):
        """Compute node `nid` (or take it from the cache) and record its value. `sig` is its
        signature when the caller has looked it up in the cache already (a miss)."""
        self.checkpoint()
        step = self.steps[nid]
        cache = self.cache
        if sig is not None:
            entry = None
        elif cache is not None:
            sig = self.signature(nid, step)
            entry = cache.get(sig)
        else:
            entry = None
        cached = entry is not None
        backward = self.backward
        # one consumer: the node's gradient is that edge's, reported with the edge's
        single = step.one_consumer and nid != self.target
        if cached:
            out = entry[0]
        else:
            composite = step.composite
            out = self._compute(nid, step, backward and composite)
            hooked = False
            if backward and not composite and out.grad_fn is not None:
                inputs = self._last_inputs
                own = None if single or not out.requires_grad else nid
                hooked = self._watch_edges(out, inputs, step, own)
                if not hooked:
                    out = self._compute(nid, step, True)
                elif own is not None:
                    hooked = "node"
            gf = out.grad_fn
            meta = (
                None if step.source else step.key,
                out._data.shape,
                out._data.dtype,
                out._requires_grad,
                gf.__class__ if gf is not None else None,
            )
            if cache is not None:
                entry = cache.put(sig, out, meta)
        self.total_bytes += out._data.nbytes
        if self.total_bytes > self.limits.max_total_bytes:
            raise LimitExceeded(_bytes_message(self.limits.max_total_bytes))
        self.values[nid] = out
        if step.source and out._requires_grad and out.grad_fn is None:
            self.add_leaf(nid, None, out)
        self.metas.append(entry[2] if cached else meta)
        if backward and out._requires_grad:
            if single:
                self.single_consumer.add(nid)
            elif hooked != "node":
                out.register_hook(self._node_hook(nid))
        if cached:
            self.record(
                {"kind": "value", "node": nid, "cached": True},
                None if entry[1] is not None else out,
                entry,
            )
        else:
            self.record({"kind": "value", "node": nid}, out, entry)

    def _compute(self, nid, step, use_alias):
        inputs = self._last_inputs = self._inputs(nid, step, use_alias)
        ctx = self.ctx
        ctx.node_id = nid
        try:
            out = step.spec.run(ctx, inputs, step.params)
            if not isinstance(out, eg.Tensor):
                raise TypeError(f"{step.spec.name} gave no tensor")
            _check_numel(out.numel(), self.limits)
        except Cancelled:
            raise
        except Exception as exc:  # LimitExceeded included: it belongs to this node too
            raise _NodeError(nid, exc) from exc
        return out

    def _claim(self, nid, out):
        """Mark the engine nodes this editor node created, for the autograd view."""
        stack = [out.grad_fn] if out.grad_fn is not None else []
        while stack:
            n = stack.pop()
            if n in self.owner:
                continue
            self.owner[n] = ("node", nid)
            stack.extend(
                f
                for f, _ in n.next_functions
                if f is not None and f not in self.owner and not isinstance(f, AccumulateGrad)
            )

    # -- backward ---------------------------------------------------------------------------------
    def pick_target(self):
        if self.target is not None:
            if self.target not in self.values:
                raise _NodeError(
                    self.target,
                    RuntimeError(
                        "the backward target did not run (it is on a branch that was not taken)"
                    ),
                )
            return self.target
        for nid in reversed(self.order):
            t = self.values.get(nid)
            if t is not None and t.numel() == 1 and t.requires_grad:
                return nid
        raise _NodeError(
            None,
            RuntimeError(
                "backward needs a scalar target: no node gives a one-element tensor that requires "
                "grad"
            ),
        )

    def run_backward(self, target, start_grads=None, backward_twice=False, retain_graph=False):
        """Backward from `target` into the leaves' .grad, which start from `start_grads` when
        they are this graph's; `backward_twice` calls backward again, as a teaching run: the
        second pass fails with PyTorch's error unless the first retained the graph, and else
        adds the same gradients into .grad once more."""
        out = self.values[target]
        leaves = [(nid, p, t) for nid, p, t in self.leaves if t.requires_grad]
        keys = [nid if p is None else f"{nid}.{p}" for nid, p, _ in leaves]
        signature = (
            self.plan.key,
            tuple((k, tuple(t.shape), str(t.dtype)) for k, (_, _, t) in zip(keys, leaves)),
        )
        if start_grads is not None and start_grads.signature == signature:
            for key, (_, _, t) in zip(keys, leaves):
                if start_grads.grads.get(key) is not None:
                    t.grad = start_grads.grads[key].clone()  # backward adds into it in place
        for second in (False, True) if backward_twice else (False,):
            if second:
                self.flush()  # the first pass's records, summarised before .grad changes
                self.recorder.quiet = True
            try:
                with observe_backward(self._observer()):
                    out.backward(retain_graph=retain_graph and not second)
            except (Cancelled, LimitExceeded):
                raise
            except Exception as exc:
                raise _NodeError(target, exc) from exc
            grads = self.result.leaf_grads
            for key, (nid, param, t) in zip(keys, leaves):
                if t.grad is not None:
                    grads[key] = t.grad
                    self.record({"kind": "leaf_grad", "node": nid, "param": param}, t.grad)
            self.result.grads = LeafGrads(signature, dict(grads))


class _NodeError(Exception):
    def __init__(self, node, exc):
        self.node, self.exc = node, exc


def run(
    doc,
    mode="forward",
    target=None,
    emit=None,
    *,
    cancel=None,
    limits=DEFAULT,
    cache=None,
    validated=False,
    device="cpu",
    start_grads=None,
    backward_twice=False,
    retain_graph=False,
):
    """Run `doc` forward (values) or backward (values, then gradients from the scalar `target`,
    by default the document's, else the last scalar node). Records go to `emit` as they are
    made; the RunResult keeps the tensors for full-value requests. Sources are made on
    `device` ("cpu" or "cuda"); every op follows its inputs there.

    Teaching options of a backward run: `start_grads` (an earlier run's `RunResult.grads`) makes
    the leaves' .grad start from that run's when it ran the same graph, so backward adds to it
    (accumulate_grad); `backward_twice` calls backward a second time, which fails with
    PyTorch's error unless `retain_graph`, and else doubles the leaves' .grad."""
    if mode not in ("forward", "backward"):
        raise ValueError(f"mode must be 'forward' or 'backward', not {mode!r}")
    if not validated:
        check(doc, limits)
    if target is not None and all(n.id != target for n in doc.nodes):
        raise GraphInvalid([Problem(f"the target '{target}' is not a node of the graph")])
    records = []
    with _gc_paused():
        r = _Run(plan_for(doc), mode, target, emit or records.append, cancel, limits, cache)
        r.device = device
        r.teaching = (start_grads, backward_twice, retain_graph)
        res = r.result
        t0 = time.perf_counter()
        _execute(r, res, t0)
        r.flush()
        # what only the run held (its watch list, metas, signatures, ...) goes now, while the
        # collector is still paused: else its first pass would scan all of it for nothing
        del r
    res.timings["total_ms"] = (time.perf_counter() - t0) * 1e3
    if emit is None:
        res.records = expand_records(records)
    return res


_gc_lock = threading.Lock()
_gc_runs = 0  # runs in progress, in any thread, while the collector is paused for them
_gc_resume = False  # whether the pause turned the collector off (the caller may have already)


@contextmanager
def _gc_paused():
    """Pause Python's automatic garbage collection while a run is in progress. A run allocates
    tens of thousands of small containers (records, summaries, the engine graph), all alive
    until it ends, and the collector would rescan them again and again as they pile up: a
    fifth of a run's time on big graphs. A run makes no reference cycles (see _Recorder), so
    nothing is left for the collector to free; the pause ends with the last run in progress,
    in whichever thread, and only when a run started it."""
    global _gc_runs, _gc_resume
    with _gc_lock:
        if _gc_runs == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_runs += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_runs -= 1
            if _gc_runs == 0 and _gc_resume:
                gc.enable()


def _execute(r, res, t0):
    """Forward, then backward when asked; every failure becomes the run's error record."""
    try:
        with eg.enable_grad():
            r.forward()
            t1 = time.perf_counter()
            res.timings["forward_ms"] = (t1 - t0) * 1e3
            if r.backward:
                res.target = r.pick_target()
                if res.target in r.single_consumer:  # its one consumer is not on the way back
                    r.single_consumer.discard(res.target)
                    r.values[res.target].register_hook(r._node_hook(res.target))
                graph = _autograd_view(r, res.target)
                r.run_backward(res.target, *r.teaching)
                res.timings["backward_ms"] = (time.perf_counter() - t1) * 1e3
            else:
                graph = _autograd_view(r, None)
            r.record(graph)
    except Cancelled:
        res.status = "cancelled"
    except _NodeError as exc:
        res.status = "error"
        res.error = {
            "kind": "error",
            "node": exc.node,
            "message": _message(exc.exc),
            "type": type(exc.exc).__name__,
        }
        r.record(res.error)
    except LimitExceeded as exc:
        res.status = "error"
        res.error = {"kind": "error", "node": None, "message": str(exc), "type": "LimitExceeded"}
        r.record(res.error)


_VIEWS = OrderedDict()  # (plan key, target) -> (metas key, view) of the latest such run
_VIEWS_KEPT = 16
_VIEWS_LOCK = threading.Lock()


def _autograd_view(r, target):
    """The autograd view of a run: behind `target` (backward) or every value (forward). Runs of
    a document usually record engine graphs of one shape (a leaf's values edited: every op the
    same, on tensors of the same shapes), and then their views are the same: the last one is
    sent again, without claiming engine nodes or walking the graph. Whether it can be is in
    the metas: per node, its params (not a source's: they only make values) and its value's
    shape, dtype, requires_grad and grad_fn type, with the branches `if` nodes took."""
    slot = (r.plan.key, target)
    key = (tuple(r.picked.items()), tuple(r.metas))
    with _VIEWS_LOCK:
        last = _VIEWS.get(slot)
    if last is not None and last[0] == key:
        return dict(last[1])
    for nid, out in r.values.items():  # claims in compute order: each node gets its own
        r._claim(nid, out)
    if target is not None:
        graph = autograd_record(r.values[target], r.owner)
    else:
        graph = autograd_record(None, r.owner, roots=list(r.values.values()))
    with _VIEWS_LOCK:
        _VIEWS[slot] = (key, graph)
        _VIEWS.move_to_end(slot)
        while len(_VIEWS) > _VIEWS_KEPT:
            _VIEWS.popitem(last=False)
    return dict(graph)


def _bytes_message(limit):
    return f"the run's values take more than {_size(limit)}, the limit for one run"


def _size(n):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,} bytes"


def _message(exc):
    text = str(exc)
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        text = str(exc.args[0])
    return text or type(exc).__name__


def run_records(doc, mode="forward", target=None, **kwargs):
    """(RunResult, records): a run with its records collected in a list, each with its summary
    written out (summary.expand_records)."""
    records = []
    res = run(doc, mode, target, records.append, **kwargs)
    return res, expand_records(records)
