"""Benchmark the server's run path end to end over a real Socket.IO connection.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/server.py [--quick]

The server is `wiregrad serve`'s own code (backend.server.app.serve) in a subprocess on a free
loopback port; the clients are python-socketio over websockets in this process, handling
packets in the order they arrive.

(a) bench/graph.py's 1,000-node graph (8x8 float32, elementwise ops, forward + backward):
    from `run` emitted to `run_finished` received with every one of its trace records, against
    the graph layer's own traced run in this process (`backend.graph.run(doc, "backward",
    emit=records.append)`, which validates first as the server does). Target: <= 1.5x, read
    from the bests (the steady figure on a shared machine) and shown for the medians too.
(b) 50 clients connected at once, each running its own 100-node graph at the same moment:
    each client's time from `run` to its `run_finished` with all records; all must finish ok.
(c) a forward run after editing the leaf `b` of (a)'s graph, end to end as in (a), with the
    client's forward cache warm: the whole graph sent, against the edit sent as the node `b`
    alone (`run` with `edit`, as the page sends it), based on the run just before.

The server runs with its garbage collector settled (backend/server/collector.py); so does this
process, so that the in-process run it is compared with is timed the same way.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests" / "server"))

import requests  # noqa: E402
from _server_helpers import connect, wide_graph  # noqa: E402

from backend.graph import parse, run  # noqa: E402
from backend.graph.running.records import expand_records  # noqa: E402
from backend.server import collector  # noqa: E402


def graph_bench_module():
    spec = importlib.util.spec_from_file_location("bench_graph", _ROOT / "bench" / "graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir):
    port = free_port()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from pathlib import Path;"
        "from backend.server import Settings; from backend.server.app import serve;"
        "serve(Settings(port=int(sys.argv[2]), data_dir=Path(sys.argv[3])))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(_ROOT), str(port), str(data_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(url + "/api/health", timeout=2).ok:
                return proc, url
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("the server did not start")
        time.sleep(0.05)


def end_to_end(client, doc, mode="backward", edit=None):
    """Seconds from emitting `run` (of `doc`, or of `edit` when given) to holding run_finished
    and all its records."""
    t0 = time.perf_counter()
    message = {"graph": doc} if edit is None else {"edit": edit}
    ack = client.call("run", {**message, "mode": mode}, timeout=120)
    run_id = ack["run_id"]
    finished = client.wait_finished(run_id, timeout=120)
    client.wait_for(lambda _: len(client.raw_records(run_id)) >= finished["records"], timeout=30)
    elapsed = time.perf_counter() - t0
    assert finished["status"] == "ok", finished
    # the records, unpacked: how many tables and packs a run sends depends on its timing
    n = len(expand_records(client.raw_records(run_id)))
    with client.cond:  # forget this run's packets: keep the recorder small
        client.received[:] = [p for p in client.received if p[2].get("run_id") != run_id]
    return elapsed, n, finished


def ms(v):
    return f"{statistics.median(v) * 1e3:.1f} ({min(v) * 1e3:.1f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else 11
    n_clients, n_nodes = 50, 100

    doc, _ = graph_bench_module().make_graph()
    doc_dict = doc.model_dump(mode="json")
    collector.settle()

    with tempfile.TemporaryDirectory() as data_dir:
        proc, url = start_server(data_dir)
        try:
            client = connect(url, materialize=False)  # arrays read as views, as the page reads them
            end_to_end(client, doc_dict)  # warm both sides
            run(doc, "backward", emit=[].append)
            local, remote, n_records = [], [], 0
            for _ in range(repeats):  # interleaved
                records = []
                t0 = time.perf_counter()
                res = run(parse(doc_dict), "backward", emit=records.append)
                local.append(time.perf_counter() - t0)
                assert res.status == "ok"
                elapsed, n_records, finished = end_to_end(client, doc_dict)
                assert n_records == len(expand_records(records))
                remote.append(elapsed)
            server_ms = finished["timings"]["server_ms"]

            # (c) forward after an edit of `b`: the whole graph, or the edited node alone
            whole, as_edit = [], []
            k = next(i for i, n in enumerate(doc_dict["nodes"]) if n["id"] == "b")
            last = end_to_end(client, doc_dict, "forward")[2]["run_id"]
            for r in range(repeats):
                for kind in ("whole", "edit"):
                    edited = {**doc_dict, "nodes": list(doc_dict["nodes"])}
                    b = edited["nodes"][k]
                    value = [0.01 * (r + 1) * i * (2 if kind == "edit" else 1) for i in range(8)]
                    edited["nodes"][k] = {**b, "params": {**b["params"], "value": value}}
                    if kind == "whole":
                        elapsed, _, finished = end_to_end(client, edited, "forward")
                    else:
                        change = {"base": last, "nodes": [edited["nodes"][k]]}
                        elapsed, _, finished = end_to_end(client, None, "forward", change)
                    (whole if kind == "whole" else as_edit).append(elapsed)
                    last = finished["run_id"]
            client.client.disconnect()

            # (b) many clients at once
            clients = [connect(url, materialize=False) for _ in range(n_clients)]
            docs = [wide_graph(n_nodes, seed=i) for i in range(n_clients)]
            barrier = threading.Barrier(n_clients)
            times, errors = [None] * n_clients, []

            def work(i):
                try:
                    barrier.wait(timeout=30)
                    times[i] = end_to_end(clients[i], docs[i])[0]
                except Exception as exc:
                    errors.append(repr(exc))

            t0 = time.perf_counter()
            threads = [threading.Thread(target=work, args=(i,)) for i in range(n_clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)
            wall = time.perf_counter() - t0
            for c in clients:
                c.client.disconnect()
        finally:
            proc.terminate()
            proc.wait(10)

    done = [t for t in times if t is not None]
    print("## server benchmark\n")
    print(f"- python {platform.python_version()}, {os.cpu_count()} CPUs; server in a subprocess")
    print(
        f"- (a) bench/graph.py's graph: {len(doc.nodes)} nodes, {len(doc.edges)} edges, 8x8 "
        f"float32, forward + backward, {n_records} records; {repeats} repeats, interleaved"
    )
    print("\n| case | ms: median (best) | ratio of medians (of bests) | target |")
    print("|---|---|---|---|")
    print(f"| graph layer: run() traced into a list, in process | {ms(local)} | 1 | |")
    ratio = statistics.median(remote) / statistics.median(local)
    best_ratio = min(remote) / min(local)
    verdict = "met" if best_ratio <= 1.5 else "missed"
    print(
        f"| server: `run` emitted -> `run_finished` + every record received | {ms(remote)} | "
        f"{ratio:.2f}x ({best_ratio:.2f}x) | <= 1.5x of bests: {verdict} |"
    )
    print(f"| (server's own time for the last run: server_ms) | {server_ms:.1f} | | |")
    print(f"| forward after editing `b`, warm cache: the whole graph sent | {ms(whole)} | 1 | |")
    print(
        f"| the same, the edit sent as the node `b` alone | {ms(as_edit)} | "
        f"{statistics.median(as_edit) / statistics.median(whole):.2f}x | |"
    )
    print(f"\n- (b) {n_clients} clients at once, each its own {n_nodes}-node graph (backward)\n")
    print("| clients | finished ok | median end to end, ms | slowest, ms | all done, ms |")
    print("|---|---|---|---|---|")
    med = f"{statistics.median(done) * 1e3:.0f}" if done else "-"
    slow = f"{max(done) * 1e3:.0f}" if done else "-"
    print(f"| {n_clients} | {len(done)} | {med} | {slow} | {wall * 1e3:.0f} |")
    if errors:
        print(f"\nerrors: {errors[:3]}")


if __name__ == "__main__":
    main()
