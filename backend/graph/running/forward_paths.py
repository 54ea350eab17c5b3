"""The forward pass in a fixed order (a plan with a static order), as tight loops: through a
ForwardCache (from its last run of the structure, or each node looked up) and without one.

Each loop does, per node, what executor._Run.run_node and its `keep` do (the per-node
bookkeeping: the byte limit, values, metas, leaves, gradient watch, the record), written out
in the loop itself: a graph is mostly small ops, where a method call per node costs a good
part of the op itself (and most of a cache hit). A node the loop cannot take goes to run_node.

A forward run through a ForwardCache starts from the cache's last run of the same structure
(forward_cache.LastRun): it recomputes (or looks up) only the nodes whose params changed and
what depends on them, and sends every other value as the last run had it, in one packed
record."""

import time

import numpy as np

import engine as eg
from engine.watch import accumulator_of, array_of, requires_grad_of

from ..op_context import check_numel
from .backward_watch import watch_entry
from .errors import Cancelled, NodeError, too_many_bytes
from .forward_cache import LastRun, SentRows
from .recorder import CACHED, VALUE

CHECK_EVERY = 32  # cache hits between checks for cancel and the time limit
# a forward run after an edit starts from the last run when at most this share of its nodes
# depend on the edit; else it looks every node up, which then costs about as much
LAST_RUN_DIRTY_SHARE = 0.5


def forward_cached(r, order):
    """A forward run through the cache in a fixed order. After an edit, from the cache's last
    run of this structure: only the nodes that depend on the edit are looked at
    (forward_from); else each node is looked up (look_up_each). Either way the cache then
    keeps this run as the last one."""
    plan, cache = r.plan, r.cache
    last = cache.last_run(plan)
    dirty = dirty_since(r, last) if last is not None else None
    if dirty is not None:
        entries, sent = forward_from(r, last, dirty)
        nxt = last.after(plan.step_keys, r.signatures, r.values, entries, r.metas,
                         r.leaves, r.total_bytes, dirty, sent)  # fmt: skip
    else:
        entries = look_up_each(r, order)
        nxt = LastRun(plan.step_keys, r.signatures, r.values, entries, r.metas,
                      r.leaves, r.total_bytes)  # fmt: skip
        nxt.unresolved = list(enumerate(entries.values()))  # (in compute order)
    if None not in entries.values():  # else an entry was evicted as soon as it was made
        # copies: the result's dicts are the caller's
        nxt.sigs, nxt.values = dict(nxt.sigs), dict(nxt.values)
        nxt.leaves = list(nxt.leaves)
        cache.remember(plan, nxt)


def dirty_since(r, last):
    """The nodes (position, id) whose step differs from the last run's (their params were
    edited) and the nodes that depend on them, in compute order; None when that is more than
    LAST_RUN_DIRTY_SHARE of the graph."""
    plan = r.plan
    order, outgoing = plan.static_order, plan.outgoing
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


def forward_from(r, last, dirty):
    """A forward run that starts from the last run of this structure: its values, its
    signatures and its summaries' rows (sent again as one packed record, before anything else,
    as ComfyUI reports its cached nodes) for every node that does not depend on the edit; then
    the `dirty` ones in compute order, each looked up in the cache or computed. Returns each
    node's cache entry, and where the others' rows were sent (SentRows, for LastRun.after)."""
    plan, cache, rec = r.plan, r.cache, r.recorder
    max_bytes = r.limits.max_total_bytes
    values, sigs = r.values, r.signatures
    values.update(last.values)  # in compute order; the dirty ones are replaced in place
    sigs.update(last.sigs)
    entries = dict(last.entries)
    dirty_ids = {nid for _, nid in dirty}
    total = last.total - sum(array_of(last.values[nid]).nbytes for nid in dirty_ids)
    if total > max_bytes:
        raise too_many_bytes(max_bytes)
    for nid, param, t in last.leaves:
        if nid not in dirty_ids:
            r.add_leaf(nid, param, t)
    clean = np.ones(len(last.keys), bool)
    clean[[p for p, _ in dirty]] = False
    clean = np.flatnonzero(clean)
    clean_ids = plan.order_ids[clean].tolist()
    cache.touch(list(map(last.sigs.__getitem__, clean_ids)))  # hits, all of them
    tables, new_t, new_r = rec.send_cached(
        clean_ids, last.tables, last.loc_t[clean], last.loc_r[clean]
    )
    r.checkpoint()
    # the dirty nodes, looked up or computed; their metas replace the last run's
    metas, r.metas = list(last.metas), []
    r.total_bytes = total
    entries.update(look_up_each(r, [nid for _, nid in dirty]))
    for (p, _), meta in zip(dirty, r.metas):
        metas[p] = meta
    r.metas = metas
    return entries, SentRows(tables, clean, new_t, new_r)


def look_up_each(r, order):
    """The nodes of `order` (in compute order) through the cache: what run_node does, with a
    hit cut down to a hash, a lookup and its record, since a node the page sees again
    unchanged should cost next to nothing. Misses take run_node. Cancel and the time limit
    are checked every CHECK_EVERY hits (a hit takes about a microsecond) and at every miss.
    Returns each node's cache entry."""
    cache, steps, sigs, values = r.cache, r.steps, r.signatures, r.values
    rec, max_bytes, metas = r.recorder, r.limits.max_total_bytes, r.metas
    peek, sig_of, data_of = cache.peek, sigs.__getitem__, array_of
    hits, misses, since_check, total = [], 0, 0, r.total_bytes
    add, entries = rec.add, {}
    try:
        for nid in order:
            step = steps[nid]
            sig = sigs[nid] = hash((step.key, *map(sig_of, step.srcs)))
            entry = peek(sig)
            if entry is None:
                misses += 1
                r.total_bytes = total
                r.run_node(nid, sig)
                total = r.total_bytes
                entries[nid] = peek(sig)
                continue
            hits.append(sig)
            entries[nid] = entry
            out, summary, meta = entry
            # the per-node bookkeeping (executor._Run.keep), written out
            total += data_of(out).nbytes
            if total > max_bytes:
                raise too_many_bytes(max_bytes)
            values[nid] = out
            if step.source and out.grad_fn is None and out.requires_grad:
                r.add_leaf(nid, None, out)
            metas.append(meta)
            # summarised by an earlier run: the entry says where; else summarise it now
            add((CACHED, nid, None if summary else out, entry))
            since_check += 1
            if since_check >= CHECK_EVERY:
                since_check = 0
                r.checkpoint()
    finally:
        r.total_bytes = total
        cache.touch(hits, misses)
    return entries


def forward_fresh(r, rows):
    """A run without a cache in a fixed order (every backward run): what run_node does, in one
    loop, for the usual node (each input port one edge or none, and in a backward run no
    composite); other nodes take run_node. The loop reads each node's plan as one tuple
    (plan.Step.row) and checks its engine node's edges with lined_up itself (as
    BackwardWatch.edges does). With the compiled kernels (_observe.Forward) the loop runs in
    C, handing back here each node it leaves to Python; else the Python loop below."""
    forward = getattr(r.watch.kernels, "Forward", None)  # (None: not built, or built before it)
    limits = r.limits
    if forward is None or not (_fits(limits.max_elements) and _fits(limits.max_total_bytes)):
        _forward_fresh_python(r, rows)
        return
    watch = r.watch
    loop = forward(
        r.values, r.metas, r.recorder.pending, r.ctx, watch.watch, watch.node_hook, r.add_leaf,
        r.target, r.backward, limits.max_elements, limits.max_total_bytes, check_numel, limits,
        time.perf_counter, r.checkpoint, r.check_seconds, accumulator_of, eg.Tensor, VALUE,
    )  # fmt: skip
    i, n, total = 0, len(rows), r.total_bytes
    while i < n:
        try:
            i, why, total, out = loop(rows, i, total)
        except Cancelled:
            raise
        except Exception as exc:
            if loop.failed is None:  # not the node's op: a checkpoint's limit, say
                raise
            raise NodeError(loop.failed, exc) from exc
        if why == _DONE:
            break
        nid = rows[i][0]
        r.total_bytes = total
        if why == _SLOW:
            r.run_node(nid)
        elif why == _ALIASED:
            _keep_aliased(r, rows[i], requires_grad_of(out))
        elif why == _NO_TENSOR:
            try:
                raise TypeError(f"{r.specs[nid].name} gave no tensor")
            except TypeError as exc:
                raise NodeError(nid, exc) from exc
        else:  # _TOO_MANY
            raise too_many_bytes(limits.max_total_bytes)
        total = r.total_bytes
        i += 1
    r.total_bytes = total


# why _observe.Forward stopped at a row (see its call)
_DONE, _SLOW, _ALIASED, _NO_TENSOR, _TOO_MANY = range(5)


def _fits(n):
    """Whether a limit fits the C loop's 64-bit counts."""
    return isinstance(n, int) and -(2**62) < n < 2**62


def _keep_aliased(r, row, requires_grad):
    """A node whose engine node does not take its inputs as they are (lined_up gave None):
    computed again with an alias on each input edge (see BackwardWatch.edges), then kept as
    the loops keep a value. `requires_grad`: the first result's."""
    nid, _, _, _, _, source, key, one_consumer, _ = row
    out = r.compute(nid, r.steps[nid], True)
    a, gf = array_of(out), out.grad_fn
    single = one_consumer and nid != r.target
    if requires_grad and not single:
        out.register_hook(r.watch.node_hook(nid))
    r.total_bytes += a.nbytes
    if r.total_bytes > r.limits.max_total_bytes:
        raise too_many_bytes(r.limits.max_total_bytes)
    r.values[nid] = out
    gf_class = None if gf is None else gf.__class__
    r.metas.append((key, a.shape, a.dtype, requires_grad, gf_class))
    if source and requires_grad and gf is None:
        r.add_leaf(nid, None, out)
    r.recorder.add((VALUE, nid, out, None))


def _forward_fresh_python(r, rows):
    """forward_fresh's loop where _observe is not built."""
    values, metas, get = r.values, r.metas, r.values.get
    add, checkpoint, ctx, watch = r.recorder.add, r.checkpoint, r.ctx, r.watch.watch
    node_hook, backward, target = r.watch.node_hook, r.backward, r.target
    max_elements, max_bytes = r.limits.max_elements, r.limits.max_total_bytes
    Tensor, clock, next_check, lined_up = eg.Tensor, time.perf_counter, 0.0, r.watch.lined_up
    check_seconds, data_of, needs = r.check_seconds, array_of, requires_grad_of
    for row in rows:
        nid, run, params, srcs, composite, source, key, one_consumer, watched = row
        if srcs is None or (backward and composite):
            r.run_node(nid)
            continue
        if clock() >= next_check:  # a checkpoint per node cost a tenth of a small op
            checkpoint()
            next_check = clock() + check_seconds
        inputs = list(map(get, srcs))
        ctx.node_id = nid
        try:
            out = run(ctx, inputs, params)
            if out.__class__ is not Tensor and not isinstance(out, Tensor):
                raise TypeError(f"{r.specs[nid].name} gave no tensor")
            a = data_of(out)
            if a.size > max_elements:
                check_numel(a.size, r.limits)
        except Cancelled:
            raise
        except Exception as exc:  # LimitExceeded included: it belongs to this node too
            raise NodeError(nid, exc) from exc
        gf, requires_grad = out.grad_fn, needs(out)
        if backward:
            # one consumer: the node's gradient is that edge's, reported with the edge's
            single = one_consumer and nid != target
            own = False  # whether the observer reports this node's gradient
            if gf is not None:
                own = not single and requires_grad
                mine = lined_up(gf.next_functions, inputs, watched, None, accumulator_of)
                if mine is None:  # aliases: see BackwardWatch.edges
                    _keep_aliased(r, row, requires_grad)
                    continue
                if mine or own:
                    watch[gf] = watch_entry(mine, nid if own else None, out.output_nr)
            if requires_grad and not single and not own:
                out.register_hook(node_hook(nid))
        # the per-node bookkeeping (executor._Run.keep), written out
        r.total_bytes += a.nbytes
        if r.total_bytes > max_bytes:
            raise too_many_bytes(max_bytes)
        values[nid] = out
        gf_class = None if gf is None else gf.__class__
        metas.append((key, a.shape, a.dtype, requires_grad, gf_class))
        if source and requires_grad and gf is None:
            r.add_leaf(nid, None, out)
        add((VALUE, nid, out, None))
