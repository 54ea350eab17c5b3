"""Benchmark the graph executor's overhead; prints a markdown table.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/graph.py [--quick]

The graph: 1,000 nodes of 8x8 float32 tensors. Five leaves that require grad (three 8x8, a
1x8 row and an 8x1 column, for broadcasting), then a chain in which every node takes the
previous one, and binary nodes also a random earlier node (so many nodes have two or more
consumers, and every node is on a path to the end), a mix of add/sub/mul/maximum/tanh/sigmoid/
sin/relu/mul-by-scalar, and a final `sum` to a scalar. A sixth leaf, `b` (shape 8), feeds only
the last 5 nodes before the sum: the leaf edited in the cache case.

(a) forward + backward of the whole graph, traced: `backend.graph.run(doc, "backward")` with
    every record (each value, each edge's and node's gradient, each leaf's .grad, the autograd
    view) collected into a list; against the same computation written directly on the engine
    (straight-line Python, the ops in the same order, then `.backward()`). Target: <= 1.3x.
(b) after editing leaf `b`'s value: a forward run with a warm ForwardCache (it starts from
    the cache's last run of this graph: recomputes `b`, the 5 nodes it feeds and the sum, and
    sends the other 993 values as they were) against a full forward run without a cache, both
    traced. Target: <= 0.1x.

Two floor rows show what no tracer on this engine can go below: the direct code keeping each
value it makes, a backward pass whose observer keeps each gradient it hands out, and the
leaves' .grad, summarised in one summary_tables call; and the same without the summaries. For
(b), a row times what the cached run does first, alone: plan_for() recognising the edited
document (comparing its nodes and edges with the last run's snapshot), read right after a full
run, as the cached run reads it.

run() validates the document first (a dry run of the whole graph on zero-filled stand-ins), as
a server does before every run; the rows above pass validated=True and time the executor alone.
Two more rows time validate() itself: of a structure it has not seen (the whole dry run), and
after editing `b` (validate.py remembers the recent documents that had no problems: only `b`
and what depends on it run again on their stand-ins). The last two rows are what a server does
for a forward run: validate, then run, without a cache and with one. Every repeat times each
case in turn (interleaved); the table shows the median over repeats and the best in brackets.
The verdicts compare the bests (the steady figures: a shared machine only ever adds time) with
the targets: "met" only when they meet them. Every case runs on one thread, so `--clock cpu`
(that thread's CPU time) measures the same work with far less of the noise other processes
add to the wall clock of a shared machine.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))

import numpy as np  # noqa: E402

import engine as eg  # noqa: E402
from backend.graph import ForwardCache, edit_nodes, parse, run, validate  # noqa: E402
from backend.graph.running.executor import plan_for  # noqa: E402
from backend.graph.running.summary import summary_tables  # noqa: E402
from engine.autograd.graph import observe_backward  # noqa: E402

# (`validate` is the function)
validation = importlib.import_module("backend.graph.document.validate")

N_NODES = 1000
TRACED_TARGET = 1.3  # the traced run against the same code run directly (issue 36)
SIZE = 8
EDITED_FEEDS = 5  # nodes downstream of the edited leaf (before the final sum)
UNARY = ("tanh", "sigmoid", "sin", "relu", "half")
BINARY = ("add", "sub", "mul", "maximum")
# the leaves that require grad, besides `b`
LEAVES = (("w0", [SIZE, SIZE]), ("w1", [SIZE, SIZE]), ("w2", [SIZE, SIZE]))
LEAVES += (("row", [1, SIZE]), ("col", [SIZE, 1]))


def make_graph(seed=0, b_value=None, keep=False):
    """The graph document and the same computation as straight-line engine Python (with
    `keep`: forward only, each value passed to keep() as it is made)."""
    rng = np.random.default_rng(seed)
    nodes, edges, lines = [], [], []

    def edge(src, dst, port="input"):
        edges.append({"id": f"e{len(edges)}", "source": src, "target": dst, "targetPort": port})

    for k, (nid, shape) in enumerate(LEAVES):
        nodes.append(
            {
                "id": nid,
                "op": "tensor",
                "params": {"shape": shape, "init": "randn", "seed": k, "requires_grad": True},
            }
        )
        lines.append(  # a source's numbers (backend/graph/ops/sources.py draws them so)
            f"{nid} = eg.tensor(np.random.default_rng({k}).standard_normal({tuple(shape)!r}), "
            "dtype=eg.float32, requires_grad=True)"
        )
    b = [0.1 * i for i in range(SIZE)] if b_value is None else b_value
    ids = [n for n, _ in LEAVES]
    prev = "w0"
    n_body = N_NODES - len(LEAVES) - 1 - 1 - EDITED_FEEDS  # leaves, b, the tail, the sum
    for i in range(n_body):
        nid = f"n{i}"
        if rng.random() < 0.5:
            op = UNARY[int(rng.integers(len(UNARY)))]
            if op == "half":
                nodes.append({"id": nid, "op": "mul", "params": {"scalar": 0.5}})
                lines.append(f"{nid} = {prev} * 0.5")
            else:
                nodes.append({"id": nid, "op": op, "params": {}})
                lines.append(f"{nid} = eg.{op}({prev})")
            edge(prev, nid)
        else:
            op = BINARY[int(rng.integers(len(BINARY)))]
            if rng.random() < 0.15:
                other = ids[int(rng.integers(len(LEAVES)))]  # a leaf: broadcasting for row, col
            else:
                other = ids[-1 - int(rng.integers(min(len(ids), 40)))]
            nodes.append({"id": nid, "op": op, "params": {}})
            sym = {"add": "+", "sub": "-", "mul": "*"}.get(op)
            lines.append(
                f"{nid} = {prev} {sym} {other}" if sym else f"{nid} = eg.{op}({prev}, {other})"
            )
            edge(prev, nid)
            edge(other, nid, "other")
        ids.append(nid)
        prev = nid
    # the edited leaf and the few nodes it feeds
    nodes.append({"id": "b", "op": "tensor", "params": {"value": b, "requires_grad": True}})
    lines.append(f"b = eg.tensor({b!r}, requires_grad=True)")
    tail = [("t0", "add", "b"), ("t1", "tanh", None), ("t2", "mul", "b")]
    tail += [("t3", "sigmoid", None), ("t4", "sub", "b")]
    for nid, op, other in tail:
        nodes.append({"id": nid, "op": op, "params": {}})
        edge(prev, nid)
        if other:
            edge(other, nid, "other")
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            lines.append(f"{nid} = {prev} {sym} {other}")
        else:
            lines.append(f"{nid} = eg.{op}({prev})")
        prev = nid
    nodes.append({"id": "loss", "op": "sum", "params": {}})
    edge(prev, "loss")
    lines.append(f"loss = eg.sum({prev})")
    lines.append("loss.backward()")
    lines.append("result = loss")
    doc = parse({"name": "bench", "nodes": nodes, "edges": edges, "target": "loss"})
    assert len(doc.nodes) == N_NODES, len(doc.nodes)
    if keep:  # the floor's forward: each value kept as it is made, no backward
        lines = [x for line in lines[:-2] for x in (line, f"keep({line.split(' = ')[0]})")]
        lines.append("result = loss")
    code = compile("\n".join(lines), "<direct>", "exec")
    return doc, code


def floor(code, summarise=True):
    """What no tracer can go below on this engine and these summaries: the direct code keeping
    every value, a backward pass whose observer keeps every gradient it hands out (each edge's
    and each node's), the leaves' .grad, and one summary_tables call over all of them; no
    records, no mapping to editor nodes or edges, no checks."""
    values, grads = [], []
    scope = {"eg": eg, "np": np, "keep": values.append}
    exec(code, scope)  # noqa: S102 - our own generated straight-line code

    def observe(node, grad_inputs, grad_outputs):
        grads.extend(grad_inputs)
        grads.extend(grad_outputs)

    with observe_backward(observe):
        scope["loss"].backward()
    grads += [scope[name].grad for name, _ in LEAVES] + [scope["b"].grad]
    tensors = values + [g for g in grads if g is not None]
    return summary_tables(tensors) if summarise else tensors


def direct(code):
    scope = {"eg": eg, "np": np}
    exec(code, scope)  # noqa: S102 - our own generated straight-line code
    return scope["result"]


def validate_afresh(doc):
    """validate() of a structure it has seen no document of."""
    validation._VALID.clear()
    assert validate(doc) == []


def server_forward(doc, cache=None):
    """What a server does for a forward run: validate, then run."""
    assert validate(doc) == []
    return traced(doc, "forward", cache)


def traced(doc, mode="backward", cache=None):
    records = []
    res = run(doc, mode, emit=records.append, cache=cache, validated=True)
    assert res.status == "ok", res.error
    return res, records


CLOCK = time.perf_counter  # --clock cpu: time.thread_time (see main)


def timed(fn):
    t0 = CLOCK()
    fn()
    return CLOCK() - t0


def cell(v):
    return f"{statistics.median(v) * 1e3:.1f} ({min(v) * 1e3:.1f})"


def ratio(a, b):
    return f"{statistics.median(a) / statistics.median(b):.2f}x ({min(a) / min(b):.2f}x)"


def verdict(a, b, target):
    """The target on the ratio of bests, and whether it is met."""
    return f"<= {target}x: {'met' if min(a) / min(b) <= target else 'missed'}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="cpu: this thread's CPU time (every case runs on one thread), which other work "
        "on a shared machine disturbs far less than the wall clock",
    )
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    repeats = 5 if args.quick else 21

    doc, code = make_graph()
    _, kept_code = make_graph(keep=True)
    assert validate(doc) == []
    # the same numbers both ways
    res, records = traced(doc)
    ref = direct(code)
    assert np.isfinite(ref.item())
    np.testing.assert_allclose(res.values["loss"].item(), ref.item(), rtol=1e-5)
    n_records = len(records)
    consumers = {}
    for e in doc.edges:
        consumers[e.source] = consumers.get(e.source, 0) + 1
    multi = sum(1 for c in consumers.values() if c >= 2)

    cache, server_cache = ForwardCache(), ForwardCache()
    traced(doc, "forward", cache)  # warm
    server_forward(doc, server_cache)
    tables, _ = floor(kept_code)
    floor_rows = sum(t["rows"] for t in tables)
    cases = ("direct", "traced", "floor", "floor_bare", "validate", "revalidate", "full", "cached")
    cases += ("plan", "s_full", "s_cached", "edit", "s_edit")
    t = {k: [] for k in cases}
    hits_misses = []
    for r in range(repeats):
        edited, _ = make_graph(b_value=[0.01 * (r + 1) * i for i in range(SIZE)])
        t["direct"].append(timed(lambda: direct(code)))
        t["traced"].append(timed(lambda: traced(doc)))
        t["floor"].append(timed(lambda: floor(kept_code)))
        t["floor_bare"].append(timed(lambda: floor(kept_code, summarise=False)))
        t["validate"].append(timed(lambda: validate_afresh(doc)))
        t["full"].append(timed(lambda ed=edited: traced(ed, "forward")))
        # what the cached run below does first: recognise `edited` as the last document with
        # `b` edited (here, another such document, read right after a full run as it is there)
        probe, _ = make_graph(b_value=[0.03 * (r + 1) * i for i in range(SIZE)])
        traced(doc, "forward")
        t["plan"].append(timed(lambda pr=probe: plan_for(pr)))
        h0, m0 = cache.hits, cache.misses
        t["cached"].append(timed(lambda ed=edited: traced(ed, "forward", cache)))
        hits_misses.append((cache.hits - h0, cache.misses - m0))
        # the same edit sent as the edited node alone (a `run` with `edit`, as the page sends
        # it): edit_nodes makes the document from the last one, sharing its other objects
        b_node = edited.node("b").model_dump()
        traced(doc, "forward", cache)
        t["edit"].append(timed(lambda b=b_node: traced(edit_nodes(doc, [b]), "forward", cache)))
        # as a server: each edit validated and run after the last one (whose document the
        # validation remembers), against validating and running it from nothing
        before, _ = make_graph(b_value=[0.02 * (r + 1) * i for i in range(SIZE)])
        server_forward(before, server_cache)
        t["revalidate"].append(timed(lambda ed=edited: validate(ed)))
        server_forward(before, server_cache)
        t["s_cached"].append(timed(lambda ed=edited: server_forward(ed, server_cache)))
        server_forward(before, server_cache)
        t["s_edit"].append(
            timed(lambda ed=before, b=b_node: server_forward(edit_nodes(ed, [b]), server_cache))
        )
        t["s_full"].append(timed(lambda ed=edited: (validate_afresh(ed), traced(ed, "forward"))))

    print("## graph executor benchmark\n")
    print(f"- python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(
        f"- graph: {len(doc.nodes)} nodes, {len(doc.edges)} edges, {SIZE}x{SIZE} float32; "
        f"{multi} nodes feed two or more consumers; a backward run emits {n_records} records"
    )
    h, m = hits_misses[-1]
    print(
        f"- cache case: leaf `b` feeds only {EDITED_FEEDS} of {len(doc.nodes)} nodes; "
        f"each cached run: {h} hits, {m} misses"
    )
    print(f"- {repeats} repeats, interleaved; clock: {args.clock}\n")
    print("| case | ms: median (best) | ratio: of medians (of bests) | target (on the bests) |")
    print("|---|---|---|---|")
    print(f"| forward + backward, direct on the engine | {cell(t['direct'])} | 1 | |")
    print(
        f"| forward + backward, traced (run, all records) | {cell(t['traced'])} | "
        f"{ratio(t['traced'], t['direct'])} of direct | "
        f"{verdict(t['traced'], t['direct'], TRACED_TARGET)} |"
    )
    print(
        f"| floor: the direct code keeping each value and each gradient backward hands out, "
        f"summarised in one call ({floor_rows:,} rows) | {cell(t['floor'])} | "
        f"{ratio(t['floor'], t['direct'])} of direct | |"
    )
    print(
        f"| floor without the summaries | {cell(t['floor_bare'])} | "
        f"{ratio(t['floor_bare'], t['direct'])} of direct | |"
    )
    print(f"| forward, full run after editing `b` (no cache) | {cell(t['full'])} | 1 | |")
    print(
        f"| forward, with a warm ForwardCache after editing `b` | {cell(t['cached'])} | "
        f"{ratio(t['cached'], t['full'])} of full | {verdict(t['cached'], t['full'], 0.1)} |"
    )
    print(
        f"| the same, the edit sent as the node `b` alone (edit_nodes) | {cell(t['edit'])} | "
        f"{ratio(t['edit'], t['full'])} of full | {verdict(t['edit'], t['full'], 0.1)} |"
    )
    print(
        f"| of which: recognising the edited document (plan_for: comparing it with the last "
        f"run's snapshot) | {cell(t['plan'])} | {ratio(t['plan'], t['full'])} of full | |"
    )
    print(
        f"| validate() of a structure not seen before | {cell(t['validate'])} | "
        f"{ratio(t['validate'], t['direct'])} of direct | |"
    )
    print(
        f"| validate() after editing `b` | {cell(t['revalidate'])} | "
        f"{ratio(t['revalidate'], t['validate'])} of the above | |"
    )
    print(f"| as a server: validate + forward, from nothing | {cell(t['s_full'])} | 1 | |")
    print(
        f"| as a server: validate + forward after editing `b`, warm cache | "
        f"{cell(t['s_cached'])} | {ratio(t['s_cached'], t['s_full'])} of the above | |"
    )
    print(
        f"| the same, the edit sent as the node `b` alone (edit_nodes) | {cell(t['s_edit'])} | "
        f"{ratio(t['s_edit'], t['s_full'])} of the above | |"
    )


if __name__ == "__main__":
    main()
