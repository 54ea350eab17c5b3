"""Running a graph document: define-by-run, one fresh engine graph per run.

A run pulls values from the graph's sinks (and the backward target), so an `if` node evaluates
its condition first and only then the branch it picks; nodes that only feed the other branch
never run and are reported as skipped. Every step is a trace record handed to `emit` as soon as
it exists, in compute order:

    {"kind": "value",     "node": id, "summary": {...}}
    {"kind": "skipped",   "node": id, "reason": "..."}
    {"kind": "branch_not_taken", "node": if-node id, "port": "then" | "else", "edge": id}
    {"kind": "edge_grad", "edge": id, "source": id, "target": id, "summary": {...}}
    {"kind": "node_grad", "node": id, "summary": {...}}
    {"kind": "leaf_grad", "node": id, "param": None | "weight" | "bias", "summary": {...}}
    {"kind": "autograd",  "nodes": [...], "edges": [...]}
    {"kind": "error",     "node": id | None, "message": str, "type": str}

Edge gradients come from the engine's node hooks, not recomputed: a post-hook on the
consumer's node sees, for each input, exactly what it sends back along that edge. An op that is
several engine ops (a composite: cross_entropy, linear, `if`) instead gets an `alias` node on
each input edge, hooked the same way. Where a node feeds two consumers, its two edge gradients
sum to its gradient.

Summaries are made in batches (see summary.summarize_many): records wait in a short buffer and
go to `emit` together: at most 64 at a time, whenever 10 ms have passed, and at the end.
"""

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import engine as eg
from engine.autograd.graph import AccumulateGrad, accumulator_of, edge_of
from engine.ops.shape import alias

from .autograd_view import autograd_record
from .index import GraphIndex
from .limits import DEFAULT, LimitExceeded
from .summary import summarize_many
from .validate import GraphInvalid, Problem, check

FLUSH_RECORDS = 64
FLUSH_SECONDS = 0.01


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


class ForwardCache:
    """Values of earlier forward runs by signature (the node's id, op and params and its inputs'
    signatures, hashed to 64 bits), so that editing one leaf recomputes only what depends on
    it. An entry keeps the value and, once made, its summary: an unchanged node costs a lookup."""

    def __init__(self, max_entries=20000):
        self.max_entries = max_entries
        self._store = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, sig):
        """The entry [tensor, summary or None] for `sig`, or None."""
        with self._lock:
            entry = self._store.get(sig)
            if entry is not None:
                self._store.move_to_end(sig)
                self.hits += 1
            else:
                self.misses += 1
            return entry

    def put(self, sig, tensor):
        entry = [tensor, None]
        with self._lock:
            self._store[sig] = entry
            self._store.move_to_end(sig)
            while len(self._store) > self.max_entries:
                self._store.popitem(last=False)
        return entry


class _Context:
    """What an op may ask of the run (the catalog's `ctx`)."""

    def __init__(self, run, node_id):
        self.run, self.node_id = run, node_id
        self.device = run.device

    def check_numel(self, n):
        self.run.check_numel(n, self.node_id)

    def add_parameters(self, named):
        for name, p in named:
            self.run.add_leaf(self.node_id, name, p)


class _Recorder:
    """A run's outgoing records and its clock: batching, summaries, cancel and time limit.

    Hooks on the engine's nodes hold this object, never the run itself: the run holds the
    values, the values their grad_fns, the grad_fns the hooks, so a hook holding the run would
    make every run a reference cycle that only the garbage collector could free."""

    def __init__(self, emit, cancel, limits):
        self.emit, self.cancel, self.limits = emit, cancel, limits
        self.started = self.last_flush = time.perf_counter()
        self.preview = limits.preview_elements
        self.pending = []  # (record, tensor to summarise, cache entry), waiting for flush()

    def record(self, rec, tensor=None, entry=None):
        """Queue a record; `tensor` gets summarised at the flush (or its cache `entry` already
        holds the summary)."""
        self.pending.append((rec, tensor, entry))
        if (
            len(self.pending) >= FLUSH_RECORDS
            or time.perf_counter() - self.last_flush >= FLUSH_SECONDS
        ):
            self.flush()

    def flush(self):
        pending, self.pending = self.pending, []
        self.last_flush = time.perf_counter()
        tensors = [t for _, t, e in pending if t is not None and (e is None or e[1] is None)]
        summaries = iter(summarize_many(tensors, self.preview)) if tensors else None
        for rec, t, entry in pending:
            if t is not None:
                if entry is not None and entry[1] is not None:
                    rec["summary"] = entry[1]
                else:
                    rec["summary"] = next(summaries)
                    if entry is not None:
                        entry[1] = rec["summary"]
            self.emit(rec)

    def checkpoint(self):
        """Between nodes (and in backward hooks): honour cancel and the time limit, and send
        records that have waited, so a slow node does not hold back the ones before it."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        now = time.perf_counter()
        if now - self.started > self.limits.max_seconds:
            raise LimitExceeded(
                f"the run took longer than {self.limits.max_seconds:g} s, the limit for one run"
            )
        if self.pending and now - self.last_flush >= FLUSH_SECONDS:
            self.flush()


class _Run(GraphIndex):
    def __init__(self, doc, mode, target, emit, cancel, limits, cache):
        super().__init__(doc)
        self.mode, self.limits = mode, limits
        self.cache = cache if mode == "forward" else None
        self.backward = mode == "backward"
        self.target = target or doc.target
        self.result = RunResult("ok", mode)
        self.values = self.result.values
        self.owner = {}  # engine node -> ("node", id) | ("edge", id) | ("leaf", id, param)
        self.leaves = []  # (node id, param name or None, tensor)
        self.picked = {}  # if-node id -> the port it ran
        self.single_consumer = set()  # nodes whose gradient their one edge hook reports
        self.signatures = {}
        self.total_bytes = 0
        self.recorder = _Recorder(emit, cancel, limits)
        self.record = self.recorder.record
        self.flush = self.recorder.flush
        self.checkpoint = self.recorder.checkpoint

    def check_numel(self, n, node_id):
        if n > self.limits.max_elements:
            raise LimitExceeded(
                f"a tensor of {n:,} elements is over the limit of "
                f"{self.limits.max_elements:,} elements per tensor"
            )

    def add_leaf(self, node_id, param, tensor):
        self.leaves.append((node_id, param, tensor))
        if tensor.requires_grad:
            self.owner[accumulator_of(tensor)] = ("leaf", node_id, param)

    # -- forward --------------------------------------------------------------------------------
    def forward(self):
        wanted = [nid for nid in self.order if not self.outgoing[nid]]
        if self.target and self.target not in wanted:
            wanted.append(self.target)
        for nid in wanted:
            self.demand(nid)
        for nid in self.order:
            if nid not in self.values:
                reason = self._skip_reason(nid)
                self.result.skipped.append(nid)
                self.record({"kind": "skipped", "node": nid, "reason": reason})

    def _skip_reason(self, nid):
        for e in self.outgoing[nid]:
            if e.target in self.picked and e.targetPort not in ("condition", self.picked[e.target]):
                return f"the branch of '{e.target}' that did not run"
        return "feeds only nodes that did not run"

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
                    for e in ports[other]:
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
                    for e in reversed(ports.get(port.name, [])):
                        stack.append((e.source, 0))
            else:
                self.run_node(nid)

    def _inputs(self, nid, spec, use_alias):
        """The node's inputs in port order (variadic ports as lists), and for each edge the
        position of its input among the op's arguments (what its engine node's
        next_functions and post-hook grad_inputs follow)."""
        inputs, positions, pos = [], [], 0
        for port in spec.inputs:
            edges = self.incoming[nid].get(port.name, [])
            if spec.name == "if" and port.name not in ("condition", self.picked[nid]):
                inputs.append(None)
                pos += 1
                continue
            vals = []
            for e in edges:
                vals.append(self._alias(e) if use_alias else self.values[e.source])
                positions.append((e, pos))
                if port.variadic:
                    pos += 1
            if not port.variadic:
                pos += 1
            inputs.append(vals if port.variadic else (vals[0] if vals else None))
        return inputs, positions

    def _alias(self, edge):
        t = self.values[edge.source]
        if not t.requires_grad:
            return t
        a = alias(t)  # this edge's own node: its hook sees the gradient sent along the edge
        self.owner[a.grad_fn] = ("edge", edge.id)
        a.grad_fn.register_hook(self._edge_hook([(edge, 0)]))
        return a

    def _edge_hook(self, positions):
        # closes over the recorder and the result's dicts only (see _Recorder)
        rec = self.recorder
        edge_grads, node_grads = self.result.edge_grads, self.result.node_grads
        single = self.single_consumer

        def hook(grad_inputs, grad_outputs):
            rec.checkpoint()
            for edge, pos in positions:
                g = grad_inputs[pos]
                if g is not None:
                    edge_grads[edge.id] = g
                    rec.record(
                        {
                            "kind": "edge_grad",
                            "edge": edge.id,
                            "source": edge.source,
                            "target": edge.target,
                        },
                        g,
                    )
                    if edge.source in single:
                        node_grads[edge.source] = g
                        rec.record({"kind": "node_grad", "node": edge.source}, g)

        return hook

    def _hook_edges(self, out, inputs, positions, spec):
        """Hook the op's own node for its edges' gradients; False when its next_functions do
        not line up with the inputs (then the caller falls back to aliases)."""
        node = out.grad_fn
        flat = [x for v in inputs for x in (v if isinstance(v, list) else [v])]
        nf = node.next_functions
        mine = []
        for (edge, pos), t in zip(positions, (x for x in flat if x is not None)):
            want = edge_of(t)[0]
            if pos >= len(nf) or nf[pos][0] is not want:
                return False
            if want is not None:
                mine.append((edge, pos))
        if mine:
            node.register_hook(self._edge_hook(mine))
        return True

    def _node_hook(self, nid):
        rec, node_grads = self.recorder, self.result.node_grads  # not self: see _Recorder

        def hook(grad):
            rec.checkpoint()
            node_grads[nid] = grad
            rec.record({"kind": "node_grad", "node": nid}, grad)

        return hook

    def signature(self, nid):
        node, spec = self.nodes[nid], self.specs[nid]
        parts = [nid, node.op, repr(sorted(self.params[nid].items()))]
        for port in spec.inputs:
            if spec.name == "if" and port.name not in ("condition", self.picked[nid]):
                continue  # the branch that did not run is no part of the value
            parts += [port.name] + [
                self.signatures[e.source] for e in self.incoming[nid].get(port.name, [])
            ]
        # Python's tuple hash: 64 bits, in-memory only (the cache never leaves the process)
        sig = hash(tuple(parts))
        self.signatures[nid] = sig
        return sig

    def run_node(self, nid):
        self.checkpoint()
        spec, params = self.specs[nid], self.params[nid]
        sig = self.signature(nid) if self.cache is not None else None
        entry = self.cache.get(sig) if sig is not None else None
        cached = entry is not None
        if cached:
            out = entry[0]
        else:
            composite = spec.extra.get("composite", False)
            out = self._compute(nid, spec, params, self.backward and composite)
            if self.backward and not composite and out.grad_fn is not None:
                inputs, positions = self._last_inputs
                if not self._hook_edges(out, inputs, positions, spec):
                    out = self._compute(nid, spec, params, True)
            if sig is not None:
                entry = self.cache.put(sig, out)
        self.total_bytes += out.numel() * out.element_size()
        if self.total_bytes > self.limits.max_total_bytes:
            raise LimitExceeded(
                f"the run's values take more than {_size(self.limits.max_total_bytes)}, the "
                "limit for one run"
            )
        self.values[nid] = out
        if spec.source and out.requires_grad and out.grad_fn is None:
            self.add_leaf(nid, None, out)
        self._claim(nid, out)
        if self.backward and out.requires_grad:
            if len(self.outgoing[nid]) == 1 and nid != self.target:
                # one consumer: the node's gradient is that edge's, reported by the edge hook
                self.single_consumer.add(nid)
            else:
                out.register_hook(self._node_hook(nid))
        record = {"kind": "value", "node": nid}
        if cached:
            record["cached"] = True
        self.record(record, out, entry)

    def _compute(self, nid, spec, params, use_alias):
        inputs, positions = self._inputs(nid, spec, use_alias)
        self._last_inputs = (inputs, positions)
        try:
            out = spec.run(_Context(self, nid), inputs, params)
            if not isinstance(out, eg.Tensor):
                raise TypeError(f"{spec.name} gave no tensor")
            self.check_numel(out.numel(), nid)
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

    def run_backward(self, target):
        out = self.values[target]
        try:
            out.backward()
        except (Cancelled, LimitExceeded):
            raise
        except Exception as exc:
            raise _NodeError(target, exc) from exc
        for nid, param, t in self.leaves:
            if t.requires_grad and t.grad is not None:
                key = nid if param is None else f"{nid}.{param}"
                self.result.leaf_grads[key] = t.grad
                self.record({"kind": "leaf_grad", "node": nid, "param": param}, t.grad)


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
):
    """Run `doc` forward (values) or backward (values, then gradients from the scalar `target`,
    by default the document's, else the last scalar node). Records go to `emit` as they are
    made; the RunResult keeps the tensors for full-value requests. Sources are made on
    `device` ("cpu" or "cuda"); every op follows its inputs there."""
    if mode not in ("forward", "backward"):
        raise ValueError(f"mode must be 'forward' or 'backward', not {mode!r}")
    if not validated:
        check(doc, limits)
    if target is not None and all(n.id != target for n in doc.nodes):
        raise GraphInvalid([Problem(f"the target '{target}' is not a node of the graph")])
    records = []
    r = _Run(doc, mode, target, emit or records.append, cancel, limits, cache)
    r.device = device
    res = r.result
    t0 = time.perf_counter()
    _execute(r, res, t0)
    r.flush()
    res.timings["total_ms"] = (time.perf_counter() - t0) * 1e3
    if emit is None:
        res.records = records
    return res


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
                graph = autograd_record(r.values[res.target], r.owner)
                r.run_backward(res.target)
                res.timings["backward_ms"] = (time.perf_counter() - t1) * 1e3
            else:
                graph = autograd_record(None, r.owner, roots=list(r.values.values()))
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
    """(RunResult, records): a run with its records collected in a list."""
    records = []
    res = run(doc, mode, target, records.append, **kwargs)
    return res, records
