"""Benchmark a graph made of module instances against its unpacked twin; prints a markdown table.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/modules.py [--quick]

The graph: 10 instances of one module in a chain, each a 20-node block (a 16x16 weight and a
bias per layer, matmul, add, tanh, a residual add, ...), 200 nodes inside modules in all, plus
a source and a final sum. The twin is the same graph written out flat, as a version-1 document
whose node ids are the flat paths with `/` replaced by `__`: what "unpack" on every instance
leaves. Each row is what a server does for a request, timed side by side (interleaved
repeats, median and best): parse the JSON, validate, run backward with every record traced.
Target (issue 22): the module graph within 1.2x of its twin.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.graph import parse, run  # noqa: E402
from backend.graph.document.modules import flatten  # noqa: E402
from backend.graph.limits import DEFAULT  # noqa: E402
from backend.server.events import checked  # noqa: E402

WIDTH = 16
LAYERS = 4  # per block: 4 x (weight, bias, matmul, add, tanh) = 20 nodes with the ports


def block():
    nodes = [{"id": "x", "op": "module_input"}]
    edges = []
    prev = "x"
    for k in range(LAYERS):
        w, b, m, a, t = (f"{c}{k}" for c in "wbmat")
        nodes += [
            {
                "id": w,
                "op": "parameter",
                "params": {"shape": [WIDTH, WIDTH], "init": "randn", "seed": k},
            },
            {
                "id": b,
                "op": "parameter",
                "params": {"shape": [WIDTH], "init": "randn", "seed": 50 + k},
            },
            {"id": m, "op": "matmul"},
            {"id": a, "op": "add"},
            {"id": t, "op": "tanh"},
        ]
        edges += [
            {"id": f"{prev}-{m}", "source": prev, "target": m, "targetPort": "input"},
            {"id": f"{w}-{m}", "source": w, "target": m, "targetPort": "other"},
            {"id": f"{m}-{a}", "source": m, "target": a, "targetPort": "input"},
            {"id": f"{b}-{a}", "source": b, "target": a, "targetPort": "other"},
            {"id": f"{a}-{t}", "source": a, "target": t, "targetPort": "input"},
        ]
        prev = t
    nodes.append({"id": "y", "op": "module_output"})
    edges.append({"id": f"{prev}-y", "source": prev, "target": "y", "targetPort": "input"})
    return {"name": "Block", "nodes": nodes, "edges": edges, "inputs": ["x"], "outputs": ["y"]}


def module_doc(instances):
    nodes = [{"id": "in", "op": "tensor", "params": {"shape": [8, WIDTH], "init": "randn"}}]
    edges, prev, port = [], "in", "out"
    for i in range(instances):
        nid = f"b{i}"
        nodes.append({"id": nid, "op": "module", "params": {"module": "Block", "seed": 100 * i}})
        edges.append(
            {"id": f"e{i}", "source": prev, "sourcePort": port, "target": nid, "targetPort": "x"}
        )
        prev, port = nid, "y"
    nodes.append({"id": "s", "op": "sum"})
    edges.append(
        {"id": "e_s", "source": prev, "sourcePort": port, "target": "s", "targetPort": "input"}
    )
    return {"version": 2, "modules": [block()], "nodes": nodes, "edges": edges, "target": "s"}


def twin_doc(text):
    """The module document written out flat: what unpacking every instance gives."""
    flat = flatten(parse(text)).model_dump(mode="json")
    for n in flat["nodes"]:
        n["id"] = n["id"].replace("/", "__")
    for e in flat["edges"]:
        for k in ("id", "source", "target"):
            e[k] = e[k].replace("/", "__")
    flat["target"] = "s"
    return json.dumps(flat)


def request(text):
    """What the server does for a `run` message (backend/server/events.py, runs.py): parse,
    unpack the modules once, validate the flat form, run it."""
    graph, err = checked(parse(text), DEFAULT)
    assert err is None, err
    records = []
    res = run(graph.flat, "backward", "s", records.append, validated=True)
    assert res.status == "ok", res.error
    return len(records)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--instances", type=int, default=10)
    args = ap.parse_args()
    repeats = 5 if args.quick else 25
    mod = json.dumps(module_doc(args.instances))
    twin = twin_doc(mod)
    n_mod, n_twin = request(mod), request(twin)  # warm up; both trace the same records
    assert n_mod == n_twin, (n_mod, n_twin)
    times = {"modules": [], "twin": []}
    for _ in range(repeats):
        for name, text in (("modules", mod), ("twin", twin)):
            t0 = time.perf_counter()
            request(text)
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    best = {k: min(v) * 1e3 for k, v in times.items()}
    nodes = len(json.loads(twin)["nodes"])
    print(f"{args.instances} instances, {nodes} nodes flat; {n_mod} records a run;")
    print(f"python {platform.python_version()}, {repeats} repeats, interleaved\n")
    print("| request: parse + validate + traced backward | ms, median (best) | ratio of twin |")
    print("|---|---|---|")
    print(f"| unpacked twin (version 1, flat) | {med['twin']:.1f} ({best['twin']:.1f}) | 1.00x |")
    ratio, rbest = med["modules"] / med["twin"], best["modules"] / best["twin"]
    print(
        f"| {args.instances} module instances (version 2) | {med['modules']:.1f} "
        f"({best['modules']:.1f}) | {ratio:.2f}x ({rbest:.2f}x) |"
    )


if __name__ == "__main__":
    main()
