"""Values of earlier forward runs, kept for the next ones: the ForwardCache (by signature) and,
per structure, the last run through it (LastRun), so that after an edit a run touches only
the nodes that depend on it (forward_paths.py walks both)."""

import threading
from collections import OrderedDict, deque
from typing import NamedTuple

import numpy as np

LAST_RUNS_KEPT = 4  # structures whose last forward run a ForwardCache keeps (see LastRun)


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
        self._last = OrderedDict()  # plan key -> LastRun: the latest run of each structure

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


class SentRows(NamedTuple):
    """Where a run that started from the last one sent the unchanged nodes' summary rows
    (Recorder.send_cached): the tables it sent, the nodes' positions in the compute order,
    and per node the index of its table among them and its row there."""

    tables: list
    clean: np.ndarray
    table_of: np.ndarray
    row_of: np.ndarray


class LastRun:
    """What a ForwardCache keeps of the latest forward run of a structure, so that the next
    one, after an edit, touches only the nodes that depend on it (forward_paths.forward_from):
    per node its signature, value and cache entry, and, per position in the compute order, its
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
        sent the others again as it had them (`sent`, a SentRows). Those rows are taken from
        the tables that run sent, so a last run keeps a few tables (one per shape and dtype,
        and its dirty nodes'), however many edits came before."""
        nxt = LastRun(keys, sigs, values, entries, metas, leaves, total)
        tables, clean, new_t, new_r = sent.tables, sent.clean, sent.table_of, sent.row_of
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
