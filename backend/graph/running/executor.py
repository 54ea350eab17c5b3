"""Running a graph document: define-by-run, one fresh engine graph per run.

A run pulls values from the graph's sinks (and the backward target), so a branching node (`if`)
evaluates its condition first and only then the branch it picks; nodes that only feed the other
branch never run and are reported as skipped. Every step is a trace record handed to `emit` as
soon as it exists, in compute order:

    {"kind": "summaries", "first": row, "rows": n, ...columns}   (before the records below)
    {"kind": "value",     "node": id, "summary": row}
    {"kind": "skipped",   "node": id, "reason": "..."}
    {"kind": "branch_not_taken", "node": if-node id, "port": "then" | "else", "edge": id}
    {"kind": "edge_grad", "edge": id, "source": id, "target": id, "summary": row}
    {"kind": "node_grad", "node": id, "summary": row}
    {"kind": "leaf_grad", "node": id, "param": None | "weight" | "bias", "summary": row}
    {"kind": "autograd",  "nodes": [...], "edges": [...]}
    {"kind": "error",     "node": id | None, "message": str, "type": str}

This module holds a run's core (which node runs when, how one node runs and what is kept of
it) and the entry points; the parts it is made of each have one job:

- plan.py: what a run needs of a document that no value changes (a Plan, kept across runs)
- forward_paths.py: the forward pass in a fixed order, as tight loops, with or without a cache
- forward_cache.py: the ForwardCache and the last run of each structure through it
- recorder.py: records batched and sent with their summary tables; cancel and the time limit
- backward_watch.py: the gradient on every edge, from one observer of the backward pass
- inplace.py: documents with in-place ops (statement order, versions)
- autograd_view.py: the engine's recorded graph mapped to editor nodes, reused across runs
- errors.py: how a run fails, and how its failures read
"""

import gc
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import engine as eg
from engine.watch import accumulator_of, array_of, version

from ..document import modules
from ..document.problems import GraphInvalid, Problem
from ..document.validate import check
from ..limits import DEFAULT, LimitExceeded
from ..op_context import OpContext, check_numel
from . import backward_watch, forward_paths, inplace
from .autograd_view import _VIEWS, view_of_run  # noqa: F401 (_VIEWS: tests clear it)
from .backward_watch import BackwardWatch, LeafGrads
from .backward_watch import lined_up as _lined_up  # noqa: F401 (the Python version, for tests)
from .errors import Cancelled, NodeError, message, too_many_bytes
from .forward_cache import ForwardCache
from .forward_cache import LastRun as _LastRun  # noqa: F401 (tests build one)
from .plan import plan_for
from .recorder import CACHED, GRAD, PLAIN, VALUE, Recorder
from .records import expand_records

try:  # the watch on the backward pass in C (_observe.c, built by `pip install`; optional)
    from .. import _observe
except ImportError:  # not built: backward_watch's Python versions do the same, slower
    _observe = None

__all__ = [
    "GRAD",
    "Cancelled",
    "ForwardCache",
    "LeafGrads",
    "RunResult",
    "plan_for",
    "run",
    "run_records",
]

# The settings a run reads when it starts (tests change them here): the recorder's batch
# sizes (recorder.py), the longest a computed node waits for a check of cancel and the time
# limit, and the compiled kernels above (None: the Python versions).
FLUSH_FIRST = 1024
FLUSH_RECORDS = 4096
CHECK_SECONDS = 0.001


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
class Teaching:
    """A backward run's teaching options (see `run`)."""

    start_grads: LeafGrads | None = None
    backward_twice: bool = False
    retain_graph: bool = False
    gradient_ones: bool = False


class Leaf(NamedTuple):
    """A tensor that requires grad with no grad_fn: a source's value, or a layer's parameter
    (`param` its name, None for a source)."""

    node: str
    param: str | None
    tensor: object

    @property
    def key(self):
        """Its key among a result's leaf_grads."""
        return self.node if self.param is None else f"{self.node}.{self.param}"


def _add_leaf(leaves, owner, node_id, param, tensor):
    leaves.append(Leaf(node_id, param, tensor))
    if tensor.requires_grad:
        owner[accumulator_of(tensor)] = ("leaf", node_id, param)


class _Context(OpContext):
    """What an op may ask of the run (the catalog's `ctx`). It holds the run's leaf list and
    owner map, not the run, so that no reference cycle keeps a run alive."""

    __slots__ = ("node_id", "device", "limits", "leaves", "owner")

    def __init__(self, device, limits, leaves, owner):
        self.node_id, self.device, self.limits = None, device, limits
        self.leaves, self.owner = leaves, owner

    def add_parameters(self, named):
        for name, p in named:
            _add_leaf(self.leaves, self.owner, self.node_id, name, p)

    def module(self, key, factory):
        """The node's layer (catalog.linear_run): a run makes it anew every time."""
        return factory()


class _Run:
    """One run of a plan: its values, what it records, and the parts that do the work."""

    def __init__(self, plan, doc, mode, target, emit, cancel, limits, cache, *, device="cpu",
                 teaching=Teaching(), no_grad=False):  # fmt: skip
        self.plan = plan
        self.specs, self.incoming, self.outgoing = plan.specs, plan.incoming, plan.outgoing
        self.order, self.steps = plan.order, plan.steps
        self.mode, self.limits, self.device = mode, limits, device
        self.teaching = teaching
        self.no_grad = no_grad  # the forward pass under no_grad (a teaching option)
        # A document with in-place ops runs uncached (see inplace.py).
        self.cache = cache if mode == "forward" and not plan.inplace else None
        self.backward = mode == "backward"
        self.target = target or doc.target
        self.result = RunResult("ok", mode)
        self.values = self.result.values
        self.owner = {}  # engine node -> ("node", id) | ("edge", id) | ("leaf", id, param)
        self.leaves = []  # Leaf
        self.picked = {}  # branching node id -> the port it ran
        self.signatures = {}
        # Engine nodes are claimed for the autograd view only when the view of an earlier run
        # cannot be sent again (see autograd_view.view_of_run); the metas say whether it can.
        self.metas = []
        self.total_bytes = 0
        self.check_seconds = CHECK_SECONDS
        self.recorder = Recorder(emit, cancel, limits, FLUSH_FIRST, FLUSH_RECORDS)
        self.record = self.recorder.record
        self.flush = self.recorder.flush
        self.checkpoint = self.recorder.checkpoint
        self.watch = BackwardWatch(self.recorder, self.result, plan, self.owner, _observe)
        # documents with in-place ops: per node the engine node it made (its value's grad_fn
        # then: a later write gives the tensor another), values as they were before a write
        # changed them (the result's), and each write (node, version counter, version it left)
        self.made, self.shown, self.writes = {}, {}, []
        self.ctx = None  # the ops' _Context, while the forward pass runs
        self.inputs_used = None  # the inputs of the node computed last (see compute)

    def add_leaf(self, node_id, param, tensor):
        _add_leaf(self.leaves, self.owner, node_id, param, tensor)

    # -- forward --------------------------------------------------------------------------------
    def forward(self):
        self.ctx = _Context(self.device, self.limits, self.leaves, self.owner)
        order = self.plan.static_order
        try:
            if self.plan.inplace:
                inplace.forward_statements(self, order)
            elif order is not None and self.cache is not None:
                forward_paths.forward_cached(self, order)
            elif order is not None:
                forward_paths.forward_fresh(self, self.plan.rows)
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

    def _skip_reason(self, nid):
        for e in self.outgoing[nid]:
            if e.target in self.picked and e.targetPort not in ("condition", self.picked[e.target]):
                return f"the branch of '{e.target}' that did not run"
        return "feeds only nodes that did not run"

    def demand(self, root):
        """Compute `root` after everything it needs (iteratively: graphs can be deep). A
        branching node runs its condition, then the branch it picks, then itself."""
        stack = [(root, 0)]
        while stack:
            nid, stage = stack.pop()
            if nid in self.values:
                continue
            spec = self.specs[nid]
            ports = self.incoming[nid]
            if not spec.branches:
                if stage == 0:
                    stack.append((nid, 1))
                    for port in reversed(spec.inputs):
                        for e in reversed(ports.get(port.name, ())):
                            stack.append((e.source, 0))
                else:
                    self.run_node(nid)
            elif stage == 0:
                stack.append((nid, 1))
                stack.append((ports["condition"][0].source, 0))
            elif stage == 1:
                branch = self._pick(nid, self.values[ports["condition"][0].source])
                stack.append((nid, 2))
                stack.append((ports[branch][0].source, 0))
            else:
                self.run_node(nid)

    def _pick(self, nid, cond):
        """The branch a branching node takes on `cond`; the other's edges are recorded as not
        taken."""
        try:
            branch = "then" if bool(cond) else "else"
        except Exception as exc:
            raise NodeError(nid, exc) from exc
        self.picked[nid] = branch
        other = "else" if branch == "then" else "then"
        for e in self.incoming[nid].get(other, ()):
            self.record({"kind": "branch_not_taken", "node": nid, "port": other, "edge": e.id})
        return branch

    def inputs(self, nid, step, use_alias):
        """The node's inputs in port order (variadic ports as lists); with `use_alias`, each
        through an alias of its own (BackwardWatch.alias). A branching node gets None for the
        branch it did not take."""
        values = self.values
        branches = step.spec.branches
        inputs = []
        for port in step.ports:
            if branches and port.name not in ("condition", self.picked[nid]):
                inputs.append(None)
                continue
            if use_alias:
                vals = [self.watch.alias(e, values[e.source]) for e in port.edges]
            else:
                vals = [values[e.source] for e in port.edges]
            inputs.append(vals if port.variadic else (vals[0] if vals else None))
        return inputs

    def signature(self, nid, step):
        sigs = self.signatures
        if step.spec.branches:
            picked = self.picked[nid]
            # the branch that did not run is no part of the value
            parts = [step.key, picked]
            for port in step.ports:
                if port.name in ("condition", picked):
                    parts += [sigs[e.source] for e in port.edges]
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
        if sig is None and cache is not None:
            sig = self.signature(nid, step)
            entry = cache.get(sig)
            if entry is not None:
                out, summary, meta = entry
                self.keep(
                    nid, step, out, meta, False, (CACHED, nid, None if summary else out, entry)
                )
                return
        backward = self.backward
        # one consumer: the node's gradient is that edge's, reported with the edge's
        single = step.one_consumer and nid != self.target
        composite = step.composite
        out = self.compute(nid, step, backward and composite)
        own = False  # whether the observer reports the node's own gradient
        if backward and not composite and out.grad_fn is not None:
            mine = None if single or not out.requires_grad else nid
            if not self.watch.edges(out, self.inputs_used, step, mine):
                out = self.compute(nid, step, True)  # aliases on its edges instead
            else:
                own = mine is not None
        gf, a = out.grad_fn, array_of(out)
        meta = (
            None if step.source else step.key,
            a.shape,
            a.dtype,
            out.requires_grad,
            gf.__class__ if gf is not None else None,
        )
        entry = cache.put(sig, out, meta) if cache is not None else None
        hook = backward and out.requires_grad and not single and not own
        if self.plan.inplace:  # with in-place ops every value says its version
            item = (PLAIN, {"kind": "value", "node": nid, "version": version(out)}, out, None)
        else:
            item = (VALUE, nid, out, entry)
        self.keep(nid, step, out, meta, hook, item)

    def keep(self, nid, step, out, meta, hook, item):
        """The per-node bookkeeping of a value: the run's byte limit, the value, a source's
        leaf, its meta (for the autograd view), a gradient hook where no engine node reports
        its gradient (`hook`), and its record (`item`, queued). forward_paths' loops do the
        same, written out."""
        self.total_bytes += array_of(out).nbytes
        if self.total_bytes > self.limits.max_total_bytes:
            raise too_many_bytes(self.limits.max_total_bytes)
        self.values[nid] = out
        if step.source and out.grad_fn is None and out.requires_grad:
            self.add_leaf(nid, None, out)
        self.metas.append(meta)
        if hook:
            out.register_hook(self.watch.node_hook(nid))
        self.recorder.queue(item)

    def compute(self, nid, step, use_alias):
        """The node's op on its inputs (kept as `inputs_used`); a failure is the node's."""
        inputs = self.inputs_used = self.inputs(nid, step, use_alias)
        ctx = self.ctx
        ctx.node_id = nid
        try:
            out = step.spec.run(ctx, inputs, step.params)
            if not isinstance(out, eg.Tensor):
                raise TypeError(f"{step.spec.name} gave no tensor")
            check_numel(out.numel(), self.limits)
        except Cancelled:
            raise
        except Exception as exc:  # LimitExceeded included: it belongs to this node too
            raise NodeError(nid, exc) from exc
        return out


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
    doc = modules.flat_or_invalid(doc, limits)  # records name nodes inside modules `b/<id>`
    if not validated:
        check(doc, limits)
    if target is not None and all(n.id != target for n in doc.nodes):
        raise GraphInvalid([Problem(f"the target '{target}' is not a node of the graph")])
    records = []
    if no_grad:
        cache = None
    teaching = Teaching(start_grads, backward_twice, retain_graph, gradient_ones)
    with _gc_paused():
        r = _Run(plan_for(doc), doc, mode, target, emit or records.append, cancel, limits, cache,
                 device=device, teaching=teaching, no_grad=no_grad)  # fmt: skip
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
    fifth of a run's time on big graphs. A run makes no reference cycles (see recorder.py), so
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
                res.target = backward_watch.pick_target(r)
                out = r.values[res.target]
                if r.target is None and r.steps[res.target].one_consumer and out.requires_grad:
                    # picked only now: the forward pass left its gradient to its one
                    # consumer's edge, which is not on the way back from it
                    out.register_hook(r.watch.node_hook(res.target))
                graph = view_of_run(r, res.target)
                backward_watch.run_backward(r, res.target, inplace.version_error)
                res.timings["backward_ms"] = (time.perf_counter() - t1) * 1e3
            else:
                graph = view_of_run(r, None)
            r.record(graph)
    except Cancelled:
        res.status = "cancelled"
    except NodeError as exc:
        res.status = "error"
        res.error = {
            "kind": "error",
            "node": exc.node,
            "message": message(exc.exc),
            "type": type(exc.exc).__name__,
        }
        if exc.extra:
            res.error.update(exc.extra)
        r.record(res.error)
    except LimitExceeded as exc:
        res.status = "error"
        res.error = {"kind": "error", "node": None, "message": str(exc), "type": "LimitExceeded"}
        r.record(res.error)


def run_records(doc, mode="forward", target=None, **kwargs):
    """(RunResult, records): a run with its records collected in a list, each with its summary
    written out (records.expand_records)."""
    records = []
    res = run(doc, mode, target, records.append, **kwargs)
    return res, expand_records(records)
