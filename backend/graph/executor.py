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
full (1,024 records at first, each batch twice the last up to 4,096), and at the end. The clock
is what sends the first records soon (a server batches its packets every 50 ms anyway); the
sizes only keep batches large, since a batch costs a few numpy calls per table whatever its
size (with batches of 64 at first, the bench graph's run made six batches, and took 5% longer).
A record's summary is a row of a table. Values and gradients are queued as (code, key, tensor)
tuples and go out packed, one `values` or `grads` record per run of them (docs/protocol.md,
"Packed records"); records.expand_records writes all of it out one by one.

A forward run through a ForwardCache starts from the cache's last run of the same structure
(_LastRun): it recomputes (or looks up) only the nodes whose params changed and what depends on
them, and sends every other value as the last run had it, in one packed record.

What a run needs of a document that does not depend on values (the index, the compute order,
resolved params, each node's inputs) is a _Plan, kept for the document's next runs: a document
that comes back with only some params changed reuses it and re-resolves just those nodes.
"""

import gc
import threading
import time
from collections import OrderedDict, deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby

import numpy as np

import engine as eg
from engine.autograd.graph import AccumulateGrad, accumulator_of, observe_backward
from engine.ops.shape import alias

from .autograd_view import autograd_record
from .index import GraphIndex
from .limits import DEFAULT, LimitExceeded
from .records import expand_records
from .snapshot import Snapshot
from .summary import gather_rows, summary_tables, table_of_row, take_rows
from .validate import GraphInvalid, Problem, check, resolved_params

try:  # the watch on the backward pass in C (_observe.c, built by `pip install`; optional)
    from . import _observe
except ImportError:  # not built: _lined_up and _Run._observer's closure do the same, slower
    _observe = None

FLUSH_FIRST = 1024
FLUSH_RECORDS = 4096
FLUSH_SECONDS = 0.01
CHECK_EVERY = 32  # cache hits between checks for cancel and the time limit
CHECK_EVERY_OBSERVED = 8  # the same for watched nodes in a backward pass
CHECK_SECONDS = 0.001  # the same for computed nodes: at most this long between checks
LAST_RUNS_KEPT = 4  # structures whose last forward run a ForwardCache keeps (see _LastRun)
# a forward run after an edit starts from the last run when at most this share of its nodes
# depend on the edit; else it looks every node up, which then costs about as much
LAST_RUN_DIRTY_SHARE = 0.5


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
        self._last = OrderedDict()  # plan key -> _LastRun: the latest run of each structure

    def last_run(self, plan):
        """The latest forward run of `plan`'s structure through this cache, or None."""
        with self._lock:
            last = self._last.get(plan.key)
            if last is not None and not last.resolve():
                del self._last[plan.key]  # it never sent its summaries: of no use
                return None
            return last

    def remember(self, plan, last):
        with self._lock:
            self._last[plan.key] = last
            self._last.move_to_end(plan.key)
            while len(self._last) > LAST_RUNS_KEPT:
                self._last.popitem(last=False)

    def touch(self, sigs, misses=0):
        """Mark the entries of `sigs` as used (the newest, last evicted) and count them as hits,
        and `misses` more misses; entries evicted since they were peeked are skipped."""
        with self._lock:
            store = self._store
            try:
                deque(map(store.move_to_end, sigs), 0)  # in C
            except KeyError:  # (rare) some were evicted: again, without those
                deque(map(store.move_to_end, filter(store.__contains__, sigs)), 0)
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


class _LastRun:
    """What a ForwardCache keeps of the latest forward run of a structure, so that the next
    one, after an edit, touches only the nodes that depend on it (`_Run._forward_from`): per
    node its signature, value and cache entry, and, per position in the compute order, its
    step key, its meta and where its summary is (a table and a row) as numpy arrays, so that
    the unchanged nodes' rows are picked for all of them at once.

    A run's summaries are made when its records are sent, after the run has made this; the
    nodes it summarised (`unresolved`, their positions and cache entries) are looked up at the
    next use, and if one never was (a run that stopped first), this is of no use."""

    __slots__ = ("keys", "sigs", "values", "entries", "metas", "leaves", "total")
    __slots__ += ("tables", "table_ids", "loc_t", "loc_r", "unresolved")

    def __init__(self, keys, sigs, values, entries, metas, leaves, total):
        self.keys, self.sigs, self.values, self.entries = keys, sigs, values, entries
        self.metas, self.leaves, self.total = metas, leaves, total
        self.tables, self.table_ids = [], {}
        n = len(keys)
        self.loc_t, self.loc_r = np.zeros(n, np.intp), np.zeros(n, np.intp)
        self.unresolved = []

    def after(self, keys, sigs, values, entries, metas, leaves, total, dirty, sent):
        """The next run's, which recomputed (or looked up) the nodes at positions `dirty` and
        sent the others again as it had them (`sent`: the tables, the nodes' positions, and
        per node its table among them and its row there, from _Recorder.send_cached). Those
        rows are taken from the tables that run sent, so a last run keeps a few tables (one
        per shape and dtype, and its dirty nodes'), however many edits came before."""
        nxt = _LastRun(keys, sigs, values, entries, metas, leaves, total)
        tables, clean, new_t, new_r = sent
        nxt.tables = tables  # the list send_cached made for this run (resolve() adds to it)
        nxt.table_ids = {id(table): t for t, table in enumerate(tables)}
        nxt.loc_t[clean], nxt.loc_r[clean] = new_t, new_r
        nxt.unresolved = [(p, entries[nid]) for p, nid in dirty]
        return nxt

    def resolve(self):
        """Where the summaries of the nodes the run summarised went; False if one never did.
        (Under the cache's lock.)"""
        for p, entry in self.unresolved:
            loc = entry[1]
            if loc is None:
                return False
            table, row = loc
            t = self.table_ids.get(id(table))
            if t is None:
                t = self.table_ids[id(table)] = len(self.tables)
                self.tables.append(table)
            self.loc_t[p], self.loc_r[p] = t, row
        self.unresolved = []
        return True


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
        "row",
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
        # (with in-place ops every node gets its own gradient hook: an edge into a write may
        # not be watchable, see _Run._write_node)
        self.one_consumer = len(index.outgoing[nid]) == 1 and not index.inplace
        # what the backward observer needs of each edge in (see _watched_edge)
        self.watched = tuple(_watched_edge(index, e, pos) for e, pos in positions)
        node = index.nodes[nid]
        # Python's tuple hash: 64 bits, in-memory only (the cache never leaves the process)
        self.key = hash((nid, node.op, repr(sorted(params.items())), tuple(parts)))
        # what _forward_fresh reads of the node, in one tuple: unpacking it costs less than
        # reading each attribute per node
        self.row = (nid, self.run, params, self.port_srcs, self.composite, self.source)
        self.row += (None if self.source else self.key, self.one_consumer, self.watched)


def _watched_edge(index, edge, pos):
    """What the backward observer needs of an edge it watches: the gradient's position among
    the consumer's inputs, the edge's id, its item in a `grads` pack ([edge, source, target]),
    its source, and whether it is its source's only consumer (then the edge's gradient is the
    source's too: reported with it, no hook needed)."""
    item = (edge.id, edge.source, edge.target)
    single = len(index.outgoing[edge.source]) == 1 and not index.inplace
    return (pos, edge.id, item, edge.source, single)


def _lined_up(next_functions, inputs, watched, flat, accumulator_of):
    """The watched edges (_watched_edge) whose gradients an op's engine node sends back, or
    None when its next_functions do not line up with the op's inputs (then the run gives it
    an alias per edge instead). Edge k's input is flat[k] or, where flat is None (no variadic
    ports, whose inputs are lists), inputs[its position]: no flattening, which costs more than
    a small op. Edges whose input needs no gradient are left out. _observe.lined_up does the
    same in C (see _lined_up_fn)."""
    partial = False
    for k, w in enumerate(watched):
        pos = w[0]
        t = inputs[pos] if flat is None else flat[k]
        want = t.grad_fn
        if want is None:
            if t._requires_grad:
                want = accumulator_of(t)
            else:
                partial = True
        if pos >= len(next_functions) or next_functions[pos][0] is not want:
            return None
    if not partial:
        return watched
    if flat is None:
        return tuple(w for w in watched if _needs_grad(inputs[w[0]]))
    return tuple(w for w, t in zip(watched, flat) if _needs_grad(t))


def _lined_up_fn():
    """_lined_up, in C where _observe.c is built."""
    return _lined_up if _observe is None else _observe.lined_up


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

    def __init__(self, doc):
        super().__init__(doc)
        # what the document was (see plan_for); its `key`, the structure hashed, is what a
        # run's autograd view, its leaves' grads and the cache's last run are kept under
        self.snapshot = Snapshot(doc)
        self.key = self.snapshot.key
        self.steps = {nid: _Step(self, nid) for nid in self.order}
        has_if = any(spec.name == "if" for spec in self.specs.values())
        self.static_order = None if has_if else _static_order(self)
        if self.inplace:  # statement order (validation refuses `if` beside in-place ops)
            self.static_order = list(self.order)
        if self.static_order is not None:  # for runs that start from the last one
            order = self.static_order
            self.positions = {nid: p for p, nid in enumerate(order)}
            self.order_ids = np.array(order, dtype=object)
            self.step_keys = np.fromiter((self.steps[n].key for n in order), np.int64, len(order))
            self.rows = [self.steps[n].row for n in order]

    def edited(self, doc, changed):
        """A copy for `doc`, whose nodes at `changed` (indices in document order) have other
        params than this plan's. Its `nodes` and `doc` stay this plan's but for those nodes:
        what a run reads of a node is its op and params, the same in both."""
        plan = object.__new__(_Plan)
        plan.__dict__.update(self.__dict__)
        plan.nodes, plan.params, plan.steps = dict(self.nodes), dict(self.params), dict(self.steps)
        plan.snapshot = self.snapshot.with_params(doc, changed)
        for i in changed:
            n = doc.nodes[i]
            plan.nodes[n.id] = n
            plan.params[n.id] = resolved_params(self.specs[n.id], n.params)
            plan.steps[n.id] = _Step(plan, n.id)
        if self.static_order is not None and changed:
            plan.step_keys, plan.rows = self.step_keys.copy(), list(self.rows)
            for i in changed:
                nid = doc.nodes[i].id
                plan.step_keys[self.positions[nid]] = plan.steps[nid].key
                plan.rows[self.positions[nid]] = plan.steps[nid].row
        return plan


_PLANS = []  # the plans of recent runs, the latest last: at most one per structure
_PLANS_KEPT = 8
_PLANS_LOCK = threading.Lock()


def plan_for(doc):
    """The plan of `doc`: a recent run's plan when its document had the same structure (node
    ids and ops, edges), with the params of the nodes that differ resolved anew.

    Documents arrive freshly parsed, so nothing of them is hashed yet, or made by edit_nodes
    from an earlier one: either way they are compared with the recent plans' snapshots
    (snapshot.py), the second kind only where it does not share the snapshot's objects."""
    with _PLANS_LOCK:
        recent = _PLANS[::-1]
    plan = changed = None
    for old in recent:
        changed = old.snapshot.edited(doc)
        if changed is not None:
            plan = old
            break
    if plan is None:
        plan = _Plan(doc)
    elif changed:
        plan = plan.edited(doc, changed)
    else:
        plan.snapshot.adopt(doc)
    with _PLANS_LOCK:
        for k, old in enumerate(_PLANS):
            if old.key == plan.key:
                del _PLANS[k]
                break
        _PLANS.append(plan)
        del _PLANS[:-_PLANS_KEPT]
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


# What a queued record is (the first of its tuple: code, key, tensor, cache entry). Values
# and gradients, the bulk of a run, are queued as a code and a key and go out packed, a list
# of keys with a list of summary rows per run of one kind (docs/protocol.md, "Packed
# records"): a dict per record, and writing each one's row into it, cost as much again as
# summarising its tensor.
VALUE = 0  # key: node id, of a value computed now       -> {"kind": "values", "nodes": ...}
CACHED = 1  # key: node id, of a value from the cache     -> the same, with "cached": true
GRAD = 2  # key: node id (its gradient) or an edge's [id, source, target] -> {"kind": "grads"}
PLAIN = 3  # key: the record itself (a dict), sent as it is, its summary row written in


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
        # waiting for flush(): (code, key, tensor to summarise or None, cache entry or None);
        # a cache entry without a tensor has the summary already: entry[1] = (its table, row).
        # Always this one list: hot loops keep its `append` (self.add).
        self.pending = []
        self.add = self.pending.append
        self.rows = 0  # summary table rows sent so far
        self.batch = FLUSH_FIRST
        self.quiet = False  # a second backward pass: node and edge gradients are the first's

    def record(self, rec, tensor=None, entry=None):
        """Queue a record (a dict) as it is; `tensor` gets summarised at the flush, or the
        cache `entry` of a hit says where its summary is."""
        self.queue((PLAIN, rec, tensor, entry))

    def queue(self, item):
        """Queue a (code, key, tensor, entry) item, and send the batch once it is full. (Hot
        loops `add` items themselves and leave sending to the checkpoint they call.)"""
        self.pending.append(item)
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
        if not pending:
            return
        codes, keys, tensors, entries = zip(*pending)
        base = self.rows  # the fresh tables' rows follow on from the run's last row
        # each item's row (None for an item without a tensor to summarise)
        tables, rows = summary_tables(tensors, self.preview, base)
        for table in tables:
            self._send_table(table)
        if entries.count(None) < len(entries):
            rows = self._rows_of_each(tensors, entries, rows, tables, base)
        self._emit_packed(codes, keys, rows)

    def _rows_of_each(self, tensors, entries, rows, tables, base):
        """The items' summary rows, where some items are cache hits summarised by an earlier
        run (their rows are sent again, as tables of those rows) or make cache entries (which
        then keep where their summary is)."""
        rows, refs = list(rows), {}  # id(earlier table) -> (table, its rows, the items' indices)
        for i, (t, entry) in enumerate(zip(tensors, entries)):
            if entry is None:
                continue
            if t is not None:
                entry[1] = table_of_row(tables, rows[i] - base)
            else:
                table, k = entry[1]
                ref = refs.get(id(table))
                if ref is None:
                    ref = refs[id(table)] = (table, [], [])
                ref[1].append(k)
                ref[2].append(i)  # its row: filled in below
        for table, ks, items in refs.values():
            first = self._send_table(take_rows(table, ks))
            for j, i in enumerate(items):
                rows[i] = first + j
        return rows

    def _emit_packed(self, codes, keys, rows):
        """Emit the items in order: each run of values or gradients as one packed record, each
        plain record as it is."""
        emit = self.emit
        spans, a = [], 0
        for code, run in groupby(codes):  # runs of one code, counted in C
            b = a + len(list(run))
            spans.append((code, a, b))
            a = b
        for code, a, b in spans:
            if code == PLAIN:
                for rec, row in zip(keys[a:b], rows[a:b]):
                    if row is not None:
                        rec["summary"] = row
                    emit(rec)
            elif code == GRAD:
                emit({"kind": "grads", "items": list(keys[a:b]), "summary": rows[a:b]})
            elif code == VALUE:
                emit({"kind": "values", "nodes": list(keys[a:b]), "summary": rows[a:b]})
            else:
                emit(
                    {
                        "kind": "values",
                        "nodes": list(keys[a:b]),
                        "summary": rows[a:b],
                        "cached": True,
                    }
                )

    def send_cached(self, nodes, tables, loc_t, loc_r):
        """Send the values of `nodes`, unchanged since the last run, as one packed record: the
        summary of node i is row loc_r[i] of tables[loc_t[i]], sent again as one table per
        shape and dtype. Returns where each node's row is now, for the next run to take it
        from: (the tables sent, per node the index of its table among them, its row there)."""
        n = len(nodes)
        if not n:
            return [], np.zeros(0, np.intp), np.zeros(0, np.intp)
        self.flush()  # whatever came before goes first
        rows = np.empty(n, np.int64)
        new_t, new_r = np.empty(n, np.intp), np.empty(n, np.intp)
        groups = {}  # (shape, dtype) -> [(source table, the nodes whose row it has)]
        for t in np.flatnonzero(np.bincount(loc_t, minlength=len(tables))).tolist():
            table = tables[t]
            key = (tuple(table["shape"]), table["dtype"])
            groups.setdefault(key, []).append((table, np.flatnonzero(loc_t == t)))
        sent = []
        for parts in groups.values():
            table = gather_rows([(source, loc_r[sel]) for source, sel in parts])
            first = self._send_table(table)
            sel = np.concatenate([sel for _, sel in parts]) if len(parts) > 1 else parts[0][1]
            rows[sel] = np.arange(first, first + sel.size)
            new_t[sel] = len(sent)
            new_r[sel] = np.arange(sel.size)
            sent.append(table)
        self.emit({"kind": "values", "nodes": nodes, "summary": rows.tolist(), "cached": True})
        return sent, new_t, new_r

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
    def __init__(self, plan, doc, mode, target, emit, cancel, limits, cache):
        self.plan = plan
        self.nodes, self.specs, self.params = plan.nodes, plan.specs, plan.params
        self.incoming, self.outgoing, self.order = plan.incoming, plan.outgoing, plan.order
        self.steps = plan.steps
        self.mode, self.limits = mode, limits
        # A document with in-place ops runs uncached: a cached value may be a tensor a write
        # of this run changes (its cache entry would then hold the new value under the old
        # signature), and its order is the statements', not the one the cache replays.
        self.cache = cache if mode == "forward" and not plan.inplace else None
        self.backward = mode == "backward"
        self.target = target or doc.target
        self.result = RunResult("ok", mode)
        self.values = self.result.values
        self.owner = {}  # engine node -> ("node", id) | ("edge", id) | ("leaf", id, param)
        self.leaves = []  # (node id, param name or None, tensor)
        self.picked = {}  # if-node id -> the port it ran
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
        # run_backward's start_grads, backward_twice, retain_graph, gradient_ones
        self.teaching = (None, False, False, False)
        self.no_grad = False  # the forward pass under no_grad (a teaching option)
        # documents with in-place ops (_forward_statements): per node the engine node it made
        # (its value's grad_fn then: a later write gives the tensor another), values as they
        # were before a write changed them (the result's), and each write (node, the memory's
        # version counter, the version it left)
        self.made, self.shown, self.writes = {}, {}, []

    def check_numel(self, n, node_id):
        _check_numel(n, self.limits)

    def add_leaf(self, node_id, param, tensor):
        _add_leaf(self.leaves, self.owner, node_id, param, tensor)

    # -- forward --------------------------------------------------------------------------------
    def forward(self):
        self.ctx = _Context(self.device, self.limits, self.leaves, self.owner)
        try:
            if self.plan.inplace:
                self._forward_statements(self.plan.static_order)
            elif self.plan.static_order is not None and self.cache is not None:
                self._forward_cached(self.plan.static_order)
            elif self.plan.static_order is not None:
                self._forward_fresh(self.plan.rows)
            else:
                wanted = [nid for nid in self.order if not self.outgoing[nid]]
                if self.target and self.target not in wanted:
                    wanted.append(self.target)
                for nid in wanted:
                    self.demand(nid)
        finally:
            self.ctx = None
        values = self.values
        for nid in self.order if len(values) < len(self.order) else ():
            if nid not in values:
                reason = self._skip_reason(nid)
                self.result.skipped.append(nid)
                self.record({"kind": "skipped", "node": nid, "reason": reason})

    # -- documents with in-place ops ----------------------------------------------------------
    def _forward_statements(self, order):
        """Every node in statement order (the plan's order: document order, each node after
        its inputs), as the exported script runs its lines: a reader before a write sees the
        old value, one after it the new. Uncached (see __init__)."""
        for nid in order:
            step = self.steps[nid]
            if step.spec.extra.get("writes"):
                self._write_node(nid, step)
            else:
                self.run_node(nid)
            self.made[nid] = self.values[nid].grad_fn

    def _write_node(self, nid, step):
        """An in-place node: its output is its input, one version later. What was queued is
        summarised first, and every value in the memory it writes is kept as it was, so that
        each node shows the value it had when it ran. Its edges' gradients are watched where
        its engine node takes the inputs as they were before the write (a write through a
        view is a CopySlices behind the view's new grad_fn: those edges get no edge_grad)."""
        self.checkpoint()
        self.flush()  # summaries of the values before the write
        inputs = self._inputs(nid, step, False)
        written = inputs[0]
        vc = written._vc
        for other, t in self.values.items():
            if other not in self.shown and (t is written or (vc is not None and t._vc is vc)):
                with eg.no_grad():
                    self.shown[other] = t.clone()
        before = [_grad_edge(t) for t in inputs]
        out = self._compute(nid, step, False)
        if self.backward and out._requires_grad:
            gf = out.grad_fn
            if gf is not None:
                nf = gf.next_functions
                mine = tuple(
                    w
                    for w in step.watched
                    if before[w[0]] is not None and w[0] < len(nf) and nf[w[0]][0] is before[w[0]]
                )
                if mine:
                    self.watch[gf] = (mine, None, out._output_nr)
            out.register_hook(self._node_hook(nid))
        self.values[nid] = out
        self.writes.append((nid, out._vc, out._version))
        self.recorder.queue(
            (PLAIN, {"kind": "value", "node": nid, "version": out._version}, out, None)
        )

    def _version_error(self, target, exc):
        """The "modified by an inplace operation" error of a backward pass, at the node whose
        saved value was overwritten (the engine node that failed: the newest one still holding
        a saved tensor whose version moved), naming the write that moved it."""
        root = self.values[target].grad_fn
        stale, seen, stack = None, set(), [root]
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            saved = node._saved
            for i, t in enumerate(saved or ()):
                want = 0 if node._versions is None else node._versions[i]
                have = 0 if t._vc is None else t._vc[0]
                if have != want and (stale is None or node._seq > stale[0]._seq):
                    stale = (node, t, want, have)
            stack.extend(f for f, _ in node.next_functions)
        if stale is None:
            return _NodeError(target, exc)
        node, t, want, have = stale
        who = self.owner.get(node)
        saved_by = who[1] if who is not None and who[0] == "node" else None
        by = next(
            (w for w, vc, v in self.writes if vc is not None and vc is t._vc and v > want), None
        )
        err = _NodeError(saved_by or target, exc)
        err.extra = {
            "saved_by": saved_by,
            "saved_op": type(node).__name__,
            "overwritten_by": by,
            "expected_version": want,
            "version": have,
        }
        return err

    def _skip_reason(self, nid):
        for e in self.outgoing[nid]:
            if e.target in self.picked and e.targetPort not in ("condition", self.picked[e.target]):
                return f"the branch of '{e.target}' that did not run"
        return "feeds only nodes that did not run"

    def _forward_cached(self, order):
        """A forward run through the cache in a fixed order. After an edit, from the cache's
        last run of this structure: only the nodes that depend on the edit are looked at
        (_forward_from); else each node is looked up (_look_up_each). Either way the cache
        then keeps this run as the last one."""
        plan, cache = self.plan, self.cache
        last = cache.last_run(plan)
        dirty = self._dirty_since(last) if last is not None else None
        if dirty is not None:
            entries, sent = self._forward_from(last, dirty)
            nxt = last.after(plan.step_keys, self.signatures, self.values, entries, self.metas,
                             self.leaves, self.total_bytes, dirty, sent)  # fmt: skip
        else:
            entries = self._look_up_each(order)
            nxt = _LastRun(plan.step_keys, self.signatures, self.values, entries, self.metas,
                           self.leaves, self.total_bytes)  # fmt: skip
            nxt.unresolved = list(enumerate(entries.values()))  # (in compute order)
        if None not in entries.values():  # else an entry was evicted as soon as it was made
            # copies: the result's dicts are the caller's
            nxt.sigs, nxt.values = dict(nxt.sigs), dict(nxt.values)
            nxt.leaves = list(nxt.leaves)
            cache.remember(plan, nxt)

    def _dirty_since(self, last):
        """The nodes (position, id) whose step differs from the last run's (their params were
        edited) and the nodes that depend on them, in compute order; None when that is more
        than LAST_RUN_DIRTY_SHARE of the graph."""
        plan = self.plan
        order, outgoing = plan.static_order, self.outgoing
        if len(last.keys) != len(order):
            return None
        dirty = {order[p] for p in np.flatnonzero(plan.step_keys != last.keys).tolist()}
        stack = list(dirty)
        while stack:
            for e in outgoing[stack.pop()]:
                if e.target not in dirty:
                    dirty.add(e.target)
                    stack.append(e.target)
        if len(dirty) > LAST_RUN_DIRTY_SHARE * len(order):
            return None
        positions = plan.positions
        return sorted((positions[nid], nid) for nid in dirty)

    def _forward_from(self, last, dirty):
        """A forward run that starts from the last run of this structure: its values, its
        signatures and its summaries' rows (sent again as one packed record, before anything
        else, as ComfyUI reports its cached nodes) for every node that does not depend on the
        edit; then the `dirty` ones in compute order, each looked up in the cache or computed.
        Returns each node's cache entry, and where the others' rows were sent (for
        _LastRun.after)."""
        plan, cache, rec = self.plan, self.cache, self.recorder
        max_bytes = self.limits.max_total_bytes
        values, sigs = self.values, self.signatures
        values.update(last.values)  # in compute order; the dirty ones are replaced in place
        sigs.update(last.sigs)
        entries = dict(last.entries)
        dirty_ids = {nid for _, nid in dirty}
        total = last.total - sum(last.values[nid]._data.nbytes for nid in dirty_ids)
        if total > max_bytes:
            raise LimitExceeded(_bytes_message(max_bytes))
        for nid, param, t in last.leaves:
            if nid not in dirty_ids:
                self.add_leaf(nid, param, t)
        clean = np.ones(len(last.keys), bool)
        clean[[p for p, _ in dirty]] = False
        clean = np.flatnonzero(clean)
        clean_ids = plan.order_ids[clean].tolist()
        cache.touch(list(map(last.sigs.__getitem__, clean_ids)))  # hits, all of them
        tables, new_t, new_r = rec.send_cached(
            clean_ids, last.tables, last.loc_t[clean], last.loc_r[clean]
        )
        self.checkpoint()
        # the dirty nodes, looked up or computed; their metas replace the last run's
        metas, self.metas = list(last.metas), []
        self.total_bytes = total
        entries.update(self._look_up_each([nid for _, nid in dirty]))
        for (p, _), meta in zip(dirty, self.metas):
            metas[p] = meta
        self.metas = metas
        return entries, (tables, clean, new_t, new_r)

    def _look_up_each(self, order):
        """The nodes of `order` (in compute order) through the cache: what run_node does,
        with a hit cut down to a hash, a lookup and its record, since a node the page sees
        again unchanged should cost next to nothing. Misses take run_node. Cancel and the
        time limit are checked every CHECK_EVERY hits (a hit takes about a microsecond) and
        at every miss. Returns each node's cache entry."""
        cache, steps, sigs, values = self.cache, self.steps, self.signatures, self.values
        rec, max_bytes, metas = self.recorder, self.limits.max_total_bytes, self.metas
        peek, sig_of = cache.peek, sigs.__getitem__
        hits, misses, since_check, total = [], 0, 0, self.total_bytes
        add, entries = rec.add, {}
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
                    entries[nid] = peek(sig)
                    continue
                hits.append(sig)
                entries[nid] = entry
                out, summary, meta = entry
                total += out._data.nbytes
                if total > max_bytes:
                    raise LimitExceeded(_bytes_message(max_bytes))
                values[nid] = out
                if step.source and out._requires_grad and out.grad_fn is None:
                    self.add_leaf(nid, None, out)
                metas.append(meta)
                # summarised by an earlier run: the entry says where; else summarise it now
                add((CACHED, nid, None if summary else out, entry))
                since_check += 1
                if since_check >= CHECK_EVERY:
                    since_check = 0
                    self.checkpoint()
        finally:
            self.total_bytes = total
            cache.touch(hits, misses)
        return entries

    def _forward_fresh(self, rows):
        """A run without a cache in a fixed order (every backward run): what run_node does,
        in one loop, for the usual node (each input port one edge or none, and in a backward
        run no composite); other nodes take run_node. A graph is mostly small ops, where each
        method call and attribute lookup per node costs a good part of the op itself: the
        loop reads each node's plan as one tuple (_Step.row) and checks its engine node's
        edges with _lined_up itself (as _watch_edges does)."""
        values, metas, get = self.values, self.metas, self.values.get
        add, checkpoint, ctx, watch = self.recorder.add, self.checkpoint, self.ctx, self.watch
        backward, target = self.backward, self.target
        max_elements, max_bytes = self.limits.max_elements, self.limits.max_total_bytes
        Tensor, clock, next_check, lined_up = eg.Tensor, time.perf_counter, 0.0, _lined_up_fn()
        for nid, run, params, srcs, composite, source, key, one_consumer, watched in rows:
            if srcs is None or (backward and composite):
                self.run_node(nid)
                continue
            if clock() >= next_check:  # a checkpoint per node cost a tenth of a small op
                checkpoint()
                next_check = clock() + CHECK_SECONDS
            inputs = list(map(get, srcs))
            ctx.node_id = nid
            try:
                out = run(ctx, inputs, params)
                if out.__class__ is not Tensor and not isinstance(out, Tensor):
                    raise TypeError(f"{self.specs[nid].name} gave no tensor")
                if out._data.size > max_elements:
                    _check_numel(out._data.size, self.limits)
            except Cancelled:
                raise
            except Exception as exc:  # LimitExceeded included: it belongs to this node too
                raise _NodeError(nid, exc) from exc
            gf, requires_grad = out.grad_fn, out._requires_grad
            if backward:
                # one consumer: the node's gradient is that edge's, reported with the edge's
                single = one_consumer and nid != target
                own = False  # whether the observer reports this node's gradient
                if gf is not None:
                    own = not single and requires_grad
                    mine = lined_up(gf.next_functions, inputs, watched, None, accumulator_of)
                    if mine is None:  # aliases: see _watch_edges
                        out = self._compute(nid, self.steps[nid], True)
                        gf, own = out.grad_fn, False
                    elif mine or own:
                        watch[gf] = (mine, nid if own else None, out._output_nr)
                if requires_grad and not single and not own:
                    out.register_hook(self._node_hook(nid))
            a = out._data
            self.total_bytes += a.nbytes
            if self.total_bytes > max_bytes:
                raise LimitExceeded(_bytes_message(max_bytes))
            values[nid] = out
            gf_class = None if gf is None else gf.__class__
            metas.append((key, a.shape, a.dtype, requires_grad, gf_class))
            if source and requires_grad and gf is None:
                self.add_leaf(nid, None, out)
            add((VALUE, nid, out, None))

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
        engine node, where a post-hook registered on each node cost as much as the op.

        The C observer (_observe.c) does exactly what the closure below does, several times
        faster. A quiet pass (rec.quiet, set before this is called) records nothing."""
        # holds the recorder and the result's dicts only (see _Recorder)
        rec, edge_grads, node_grads = self.recorder, self.result.edge_grads, self.result.node_grads
        if _observe is not None:
            every, quiet = CHECK_EVERY_OBSERVED, rec.quiet
            return _observe.Observer(
                self.watch, rec.pending, GRAD, rec.checkpoint, every, node_grads, edge_grads, quiet
            )
        watched_node, add, checkpoint = self.watch.get, rec.add, rec.checkpoint

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
                    add((GRAD, nid, g, None))
            for pos, eid, item, source, single in edges:
                g = grad_inputs[pos]
                if g is not None:
                    edge_grads[eid] = g
                    add((GRAD, item, g, None))
                    if single:  # the source's one consumer: its gradient is this one
                        node_grads[source] = g
                        add((GRAD, source, g, None))

        return observe

    def _watch_edges(self, out, inputs, step, nid):
        """Watch the op's own node for its edges' gradients (and, for `nid`, its own); False
        when its next_functions do not line up with the inputs (then the caller falls back
        to aliases)."""
        node = out.grad_fn
        flat = None
        if step.variadic:
            flat = [x for v in inputs for x in (v if isinstance(v, list) else [v]) if x is not None]
        mine = _lined_up_fn()(node.next_functions, inputs, step.watched, flat, accumulator_of)
        if mine is None:
            return False
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
            rec.add((GRAD, nid, grad, None))

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
        if backward and out._requires_grad and not single and hooked != "node":
            out.register_hook(self._node_hook(nid))
        if cached:
            self.recorder.queue((CACHED, nid, None if entry[1] is not None else out, entry))
        elif self.plan.inplace:  # with in-place ops every value says its version
            self.recorder.queue(
                (PLAIN, {"kind": "value", "node": nid, "version": out._version}, out, None)
            )
        else:
            self.recorder.queue((VALUE, nid, out, entry))

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
        self._claim_from(nid, out.grad_fn)

    def _claim_from(self, nid, fn):
        stack = [fn] if fn is not None else []
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

    def run_backward(
        self,
        target,
        start_grads=None,
        backward_twice=False,
        retain_graph=False,
        gradient_ones=False,
    ):
        """Backward from `target` into the leaves' .grad, which start from `start_grads` when
        they are this graph's; `backward_twice` calls backward again, as a teaching run: the
        second pass fails with PyTorch's error unless the first retained the graph, and else
        adds the same gradients into .grad once more. `gradient_ones` starts the pass from
        ones of the target's shape, backward(gradient=torch.ones_like(target)): how a target
        that is not one number can be run backward at all (without it, PyTorch's error)."""
        out = self.values[target]
        gradient = eg.ones_like(out) if gradient_ones else None
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
                    out.backward(gradient, retain_graph=retain_graph and not second)
            except (Cancelled, LimitExceeded):
                raise
            except Exception as exc:
                if self.plan.inplace and str(exc).startswith(_MODIFIED):
                    raise self._version_error(target, exc) from exc
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
        self.extra = None  # fields the error record adds (a version error's, _version_error)


_MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"


def _grad_edge(t):
    """The engine node a tensor's gradient goes to now (its grad_fn, or its AccumulateGrad),
    None for a tensor or number without one."""
    if not isinstance(t, eg.Tensor):
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    return accumulator_of(t) if t._requires_grad else None


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
    gradient_ones=False,
    no_grad=False,
):
    """Run `doc` forward (values) or backward (values, then gradients from the scalar `target`,
    by default the document's, else the last scalar node). Records go to `emit` as they are
    made; the RunResult keeps the tensors for full-value requests. Sources are made on
    `device` ("cpu" or "cuda"); every op follows its inputs there.

    Teaching options of a backward run: `start_grads` (an earlier run's `RunResult.grads`) makes
    the leaves' .grad start from that run's when it ran the same graph, so backward adds to it
    (accumulate_grad); `backward_twice` calls backward a second time, which fails with
    PyTorch's error unless `retain_graph`, and else doubles the leaves' .grad; `gradient_ones`
    starts backward from ones of the target's shape (backward(gradient=torch.ones_like(t))),
    which lets a target of more than one element run backward, as if it had been summed.
    `no_grad` runs the forward pass under torch.no_grad(): the same values, but no graph
    recorded, so a backward run then fails at its target with PyTorch's error (such a run
    never uses the cache, whose values carry their graph)."""
    if mode not in ("forward", "backward"):
        raise ValueError(f"mode must be 'forward' or 'backward', not {mode!r}")
    if not validated:
        check(doc, limits)
    if target is not None and all(n.id != target for n in doc.nodes):
        raise GraphInvalid([Problem(f"the target '{target}' is not a node of the graph")])
    records = []
    if no_grad:
        cache = None
    with _gc_paused():
        r = _Run(plan_for(doc), doc, mode, target, emit or records.append, cancel, limits, cache)
        r.device = device
        r.teaching = (start_grads, backward_twice, retain_graph, gradient_ones)
        r.no_grad = no_grad
        res = r.result
        t0 = time.perf_counter()
        _execute(r, res, t0)
        r.flush()
        res.values.update(r.shown)  # each value as its node made it, before later writes
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
        with eg.no_grad() if r.no_grad else eg.enable_grad():
            r.forward()
        t1 = time.perf_counter()
        res.timings["forward_ms"] = (t1 - t0) * 1e3
        with eg.enable_grad():
            if r.backward:
                res.target = r.pick_target()
                out = r.values[res.target]
                if r.target is None and r.steps[res.target].one_consumer and out._requires_grad:
                    # picked only now: the forward pass left its gradient to its one
                    # consumer's edge, which is not on the way back from it
                    out.register_hook(r._node_hook(res.target))
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
        if exc.extra:
            res.error.update(exc.extra)
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
    if r.plan.inplace:  # claimed from the engine node each node made when it ran
        for nid, fn in r.made.items():
            r._claim_from(nid, fn)
        roots = [r.values[target]] if target is not None else list(r.values.values())
        return autograd_record(None, r.owner, roots=roots)
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
    written out (records.expand_records)."""
    records = []
    res = run(doc, mode, target, records.append, **kwargs)
    return res, expand_records(records)
