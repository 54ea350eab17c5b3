"""Runs over Socket.IO: each client's runs are its own, each in a thread of its own.

A run's records go out as `trace` packets: collected as the executor emits them and sent when
50 ms have passed or a packet is full, and once more at the end, so a 1,000-node run is a few
dozen packets rather than thousands. A new `run` from a client cancels its run in progress;
a disconnect cancels all of them. The last few runs' tensors stay for `tensor` requests, and
their graphs for runs sent as an edit of one (only the edited nodes travel, and only they are
read again: see graph/document/snapshot.py)."""

import ctypes
import threading
import time
import uuid
from collections import OrderedDict

from engine.watch import array_of

from ..graph import ForwardCache, GraphInvalid
from ..graph import run as run_graph
from ..graph.running.records import count as record_count
from .events import read_edit, read_graph
from .tensor_pages import tensor_reply


class _Trace:
    """Records waiting to be sent for one run. They go out every `flush_seconds`, and at once
    when they stand for `flush_rows` nodes or edges: a big graph's forward values then travel
    (and the page reads them) while its backward pass computes, not all behind its end."""

    def __init__(self, send, run_id, flush_seconds, max_records, flush_rows):
        self.send, self.run_id = send, run_id
        self.flush_seconds, self.max_records = flush_seconds, max_records
        self.flush_rows, self.rows = flush_rows, 0
        self.records = []
        self.lock = threading.Lock()  # guards `records`
        self.sending = threading.Lock()  # one packet at a time, so packets keep their order
        self.last = time.perf_counter()
        self.count = 0

    def add(self, record):
        with self.lock:
            self.records.append(record)
            self.count += 1
            self.rows += record.get("rows") or record_count(record)
            due = (
                len(self.records) >= self.max_records
                or self.rows >= self.flush_rows
                or time.perf_counter() - self.last >= self.flush_seconds
            )
        if due:
            self.flush()

    def flush(self):
        with self.sending:
            with self.lock:
                records, self.records = self.records, []
                self.rows = 0
                self.last = time.perf_counter()
            if records:
                self.send("trace", {"run_id": self.run_id, "records": records})


def _size(n):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,} bytes"


def kept_bytes(result):
    """What a finished run's tensors hold in memory (values and gradients; a tensor kept under
    two keys counted once)."""
    seen, total = set(), 0
    for table in (result.values, result.node_grads, result.edge_grads, result.leaf_grads):
        for t in table.values():
            if id(t) not in seen:
                seen.add(id(t))
                total += array_of(t).nbytes
    return total


class Client:
    """One connected browser: its run in progress, its recent runs, its forward cache."""

    def __init__(self, sid, settings):
        self.sid = sid
        self.settings = settings
        self.active = None  # (run_id, cancel Event)
        # held while one of this client's runs or trainings computes: a run that a new one
        # cancelled finishes its node before the new one starts, so quick re-runs of big
        # graphs never compute side by side (each would hold its values meanwhile)
        self.computing = threading.Lock()
        self.finished = OrderedDict()  # run_id -> (RunResult, its bytes)
        self.dropped = OrderedDict()  # run_id -> why it is no longer kept (the latest few)
        # run_id -> the graph of each of its latest runs, for runs sent as an edit of one
        self.documents = OrderedDict()
        self.cache = ForwardCache()
        self.grads = None  # the leaves' .grad after its last backward run, for accumulate_grad
        self.lock = threading.Lock()

    def cancel_active(self):
        with self.lock:
            if self.active is not None:
                self.active[1].set()

    def remember(self, run_id, result, order):
        """Keep `result` for `tensor` requests; the oldest kept runs go first, past
        `max_runs_kept` runs or `max_kept_bytes` of tensors (the newest is always kept).
        `order` is the server-wide count of finished runs (RunManager's), which says which
        of all clients' kept runs is oldest."""
        size = kept_bytes(result)
        budget = self.settings.max_kept_bytes
        with self.lock:
            self.finished[run_id] = (result, size, order)
            total = sum(kept[1] for kept in self.finished.values())
            while len(self.finished) > 1 and (
                len(self.finished) > self.settings.max_runs_kept or total > budget
            ):
                old, (_, n, _) = self.finished.popitem(last=False)
                total -= n
                self._dropped(
                    old,
                    f"run {old} is no longer kept: this client keeps its last "
                    f"{self.settings.max_runs_kept} runs, at most {_size(budget)} of tensors "
                    "together, and drops the oldest first; run the graph again",
                )

    def drop(self, run_id, why):
        """Forget a kept run for the server's budget (RunManager.keep_within_budget)."""
        with self.lock:
            if self.finished.pop(run_id, None) is not None:
                self._dropped(run_id, why)

    def _dropped(self, run_id, why):
        self.dropped[run_id] = why
        while len(self.dropped) > 64:
            self.dropped.popitem(last=False)


def _big_blocks_go_back_to_the_system():
    """glibc raises its mmap threshold each time a big block is freed, after which tensors of
    megabytes come from per-thread heaps that keep their memory once freed: every run thread
    would then hold on to the most its runs ever used. A fixed threshold (which turns that
    off) keeps big tensors in mmap'd blocks, returned to the system when freed."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1024 * 1024)  # M_MMAP_THRESHOLD: blocks of 1 MiB and more
    except (OSError, AttributeError):  # not glibc: its allocator has its own ways
        pass


class RunManager:
    def __init__(self, socketio, settings):
        _big_blocks_go_back_to_the_system()
        self.socketio = socketio
        self.settings = settings
        self.clients = {}
        self.lock = threading.Lock()
        self.finished_count = 0  # runs finished on this server: the order of kept runs
        # mirror(sid, event, payload), called after each packet sent to a client (from the
        # run's thread): rooms.py's RoomManager.mirror copies an owner's packets to its room
        self.mirror = None
        # for_client(sid, payload): a packet as its client reads it (client_version.py: JSON
        # numbers for a client that announced no wire); set by the app
        self.for_client = lambda sid, payload: payload

    def client(self, sid):
        with self.lock:
            c = self.clients.get(sid)
            if c is None:
                c = self.clients[sid] = Client(sid, self.settings)
            return c

    def keep_within_budget(self, newest_client, newest_run):
        """Drop the oldest kept runs of all clients, whoever they are, until the runs kept
        on the whole server hold at most `max_kept_bytes_total` (each client's own budget
        alone lets thirty clients hold thirty gigabytes). The run just finished stays."""
        budget = self.settings.max_kept_bytes_total
        with self.lock:
            clients = list(self.clients.values())
        kept = []  # (order, bytes, client, run_id)
        for c in clients:
            with c.lock:
                kept += [(k[2], k[1], c, rid) for rid, k in c.finished.items()]
        total = sum(k[1] for k in kept)
        if total <= budget:
            return
        why = (
            "run {} is no longer kept: the server keeps at most {} of tensors for all its "
            "clients together, and drops the oldest first; run the graph again"
        )
        for _, size, c, rid in sorted(kept, key=lambda k: k[0]):
            if total <= budget:
                break
            if c is newest_client and rid == newest_run:
                continue
            c.drop(rid, why.format(rid, _size(budget)))
            total -= size

    def disconnect(self, sid):
        with self.lock:
            c = self.clients.pop(sid, None)
        if c is not None:
            c.cancel_active()

    # -- run ---------------------------------------------------------------------------------
    def start(self, sid, request):
        """Validate and start a run; the ack: {"run_id"} or {"error", "node_errors"}."""
        client = self.client(sid)
        limits = self.settings.limits
        if request.edit is None:
            graph, err = read_graph(request.graph, limits, request.target)
        else:
            edit = request.edit
            with client.lock:
                base = client.documents.get(edit.base)
            if base is None:
                return {
                    "error": f"no graph of run {edit.base} to edit (the graphs of this client's "
                    f"last {self.settings.max_runs_kept} runs are kept); send the whole graph",
                    "code": "unknown_base",
                }
            graph, err = read_edit(base, edit.nodes, limits, request.target)
        if err:
            return err
        client.cancel_active()
        run_id = uuid.uuid4().hex[:12]
        cancel = threading.Event()
        with client.lock:
            client.active = (run_id, cancel)
            client.documents[run_id] = graph.doc  # what the next edit applies to
            while len(client.documents) > self.settings.max_runs_kept:
                client.documents.popitem(last=False)
        # the flat form validation checked runs: a document with modules is unpacked once
        self.socketio.start_background_task(self._run, client, run_id, cancel, graph.flat, request)
        return {"run_id": run_id}

    def _run(self, client, run_id, cancel, doc, request):
        sid = client.sid

        def send(event, data):
            self.socketio.emit(event, self.for_client(sid, data), to=sid)
            if self.mirror is not None:
                self.mirror(sid, event, data)

        settings = self.settings
        trace = _Trace(
            send,
            run_id,
            settings.flush_seconds,
            settings.max_records_per_packet,
            settings.flush_rows,
        )
        send(
            "run_started",
            {
                "run_id": run_id,
                "mode": request.mode,
                "target": request.target,
                "nodes": len(doc.nodes),
            },
        )
        done = threading.Event()

        def ticker():  # records waiting while a long op runs still go out every 50 ms
            while not done.wait(self.settings.flush_seconds):
                trace.flush()

        tick = threading.Thread(target=ticker, daemon=True)
        tick.start()

        def stop_ticker():
            done.set()
            tick.join()
            trace.flush()

        t0 = time.perf_counter()
        try:
            with client.computing:  # the run this one cancelled stops first (Client.computing)
                result = self._compute(client, cancel, doc, request, trace.add)
        except GraphInvalid as exc:  # raced with nothing: validation ran just before
            stop_ticker()
            send(
                "run_finished",
                {"run_id": run_id, "status": "error", "error": str(exc), "timings": {}},
            )
            return
        except Exception as exc:  # a bug of ours: report it and keep serving
            stop_ticker()
            send(
                "run_finished",
                {
                    "run_id": run_id,
                    "status": "error",
                    "error": f"internal error: {type(exc).__name__}: {exc}",
                    "timings": {},
                },
            )
            return
        stop_ticker()
        with self.lock:
            self.finished_count += 1
            order = self.finished_count
        client.remember(run_id, result, order)
        self.keep_within_budget(client, run_id)
        if result.grads is not None:  # backward reached the leaves (even if a second pass failed)
            client.grads = result.grads
        with client.lock:
            if client.active and client.active[0] == run_id:
                client.active = None
        timings = dict(result.timings)
        timings["server_ms"] = (time.perf_counter() - t0) * 1e3
        finished = {
            "run_id": run_id,
            "status": result.status,
            "timings": timings,
            "records": trace.count,
            "target": result.target,
        }
        if result.error:
            finished["error"] = result.error
        send("run_finished", finished)

    def _compute(self, client, cancel, doc, request, emit):
        options = request.options
        cache = client.cache if options.use_cache else None
        return run_graph(
            doc,
            request.mode,
            request.target,
            emit,
            cancel=cancel,
            limits=self.settings.limits,
            cache=cache,
            validated=True,
            device=self.settings.device,
            start_grads=client.grads if options.accumulate_grad else None,
            backward_twice=options.backward_twice,
            retain_graph=options.retain_graph,
            gradient_ones=options.gradient_ones,
            no_grad=options.no_grad,
        )

    def cancel(self, sid, run_id):
        client = self.client(sid)
        with client.lock:
            active = client.active
        if active is None or active[0] != run_id:
            return {"error": f"no run {run_id} in progress"}
        active[1].set()
        return {"ok": True}

    # -- tensor ------------------------------------------------------------------------------
    def tensor(self, sid, request):
        client = self.client(sid)
        with client.lock:
            kept = client.finished.get(request.run_id)
            dropped = client.dropped.get(request.run_id)
        if kept is None:
            if dropped is not None:
                return {"error": dropped, "code": "run_dropped"}
            return {
                "error": f"no finished run {request.run_id} of this client (the last "
                f"{self.settings.max_runs_kept} are kept)"
            }
        result = kept[0]
        if (request.node is None) == (request.edge is None):
            return {"error": "give either node or edge"}
        if request.edge is not None:
            if request.kind != "grad":
                return {"error": "an edge carries its producer's value; ask for the node"}
            t = result.edge_grads.get(request.edge)
            where = f"edge {request.edge}"
        elif request.kind == "value":
            t = result.values.get(request.node)
            where = f"node {request.node}"
        elif request.param is not None:
            t = result.leaf_grads.get(f"{request.node}.{request.param}")
            where = f"{request.param} of node {request.node}"
        else:
            t = result.node_grads.get(request.node)
            if t is None:
                t = result.leaf_grads.get(request.node)
            where = f"node {request.node}"
        if t is None:
            return {"error": f"the run has no {request.kind} for {where}"}
        s = self.settings
        return tensor_reply(t, request, where, s.max_tensor_page, s.max_message_bytes)
