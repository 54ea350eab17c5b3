"""A run's outgoing records and its clock: batching, summary tables, cancel and the time limit.

Summaries are made in batches, as tables (see summary.py): records wait in a short buffer and
go to `emit` together, each batch's tables first: whenever 10 ms have passed, when a batch is
full (1,024 records at first, each batch twice the last up to 4,096), and at the end. The clock
is what sends the first records soon (a server batches its packets every 50 ms anyway); the
sizes only keep batches large, since a batch costs a few numpy calls per table whatever its
size (with batches of 64 at first, the bench graph's run made six batches, and took 5% longer).
A record's summary is a row of a table. Values and gradients are queued as (code, key, tensor,
cache entry) tuples and go out packed, one `values` or `grads` record per run of them
(docs/protocol.md, "Packed records"); records.expand_records writes all of it out one by one.
"""

import time
from itertools import groupby

import numpy as np

from ..limits import LimitExceeded
from .errors import Cancelled
from .summary import gather_rows, summary_tables, table_of_row, take_rows

FLUSH_FIRST = 1024  # records in the first batch (the executor passes its own setting in)
FLUSH_RECORDS = 4096  # the largest batch
FLUSH_SECONDS = 0.01  # the longest a record waits while the run goes on

# What a queued record is (the first of its tuple: code, key, tensor, cache entry). Values
# and gradients, the bulk of a run, are queued as a code and a key and go out packed, a list
# of keys with a list of summary rows per run of one kind (docs/protocol.md, "Packed
# records"): a dict per record, and writing each one's row into it, cost as much again as
# summarising its tensor.
VALUE = 0  # key: node id, of a value computed now       -> {"kind": "values", "nodes": ...}
CACHED = 1  # key: node id, of a value from the cache     -> the same, with "cached": true
GRAD = 2  # key: node id (its gradient) or an edge's [id, source, target] -> {"kind": "grads"}
PLAIN = 3  # key: the record itself (a dict), sent as it is, its summary row written in


class Recorder:
    """A run's outgoing records and its clock: batching, summaries, cancel and time limit.
    `first` and `most` are the sizes of the first batch and of the largest.

    Hooks on the engine's tensors and the backward observer hold this object, never the run
    itself: the run holds the values, the values their grad_fns, the grad_fns the hooks, so a
    hook holding the run would make every run a reference cycle that only the garbage
    collector could free."""

    def __init__(self, emit, cancel, limits, first=FLUSH_FIRST, most=FLUSH_RECORDS):
        self.emit, self.cancel, self.limits = emit, cancel, limits
        self.most = most
        self.started = self.last_flush = time.perf_counter()
        self.preview = limits.preview_elements
        # waiting for flush(): (code, key, tensor to summarise or None, cache entry or None);
        # a cache entry without a tensor has the summary already: entry[1] = (its table, row).
        # Always this one list: hot loops keep its `append` (self.add).
        self.pending = []
        self.add = self.pending.append
        self.rows = 0  # summary table rows sent so far
        self.batch = first
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
        self.batch = min(2 * self.batch, self.most)
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
