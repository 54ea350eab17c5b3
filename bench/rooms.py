"""Benchmark rooms: how far behind the owner a room's followers receive its runs' packets.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/rooms.py [--quick]

The server is `wiregrad serve`'s own code (backend.server.app.serve) in a subprocess on a free
loopback port (bench/server.py's start_server). The owner is a python-socketio client over a
websocket in this process (as tests/server/_server_helpers.py connects); the followers (30 by
default) are the same kind of client, spread over a few worker processes so that decoding 30
copies of every packet in one Python process does not stand in for the server's delay. The
owner creates a room, the followers join it, then the owner runs a graph again and again
(a 200-node graph of 8x8 tensors, forward + backward: ~700 records per run, in a few trace
packets; or the mlp-mse template). For every packet (each `run_started`, `trace`,
`run_finished`): the delay between the owner receiving it and each follower receiving it
(time.monotonic, one clock for every process on Linux); per packet, the slowest follower's.
Target: the slowest follower at most 100 ms behind the owner. Prints, never asserts.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing as mp
import os
import platform
import re
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests" / "server"))

from _server_helpers import connect, wide_graph  # noqa: E402

from backend.server import fastjson  # noqa: E402

EVENTS = ("run_started", "trace", "run_finished")


def server_bench_module():
    spec = importlib.util.spec_from_file_location("bench_server", _ROOT / "bench" / "server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _HeadOnlyJSON:
    """JSON for the followers' packets that reads a run packet's event and run_id only (the
    server writes `["trace",{"run_id":"...",...`) and anything else (acks) in full."""

    head = re.compile(r'^\["(run_started|trace|run_finished)",\{"run_id":"([^"]*)"')

    @staticmethod
    def dumps(obj, **kwargs):
        return fastjson.dumps(obj, **kwargs)

    @classmethod
    def loads(cls, s, **kwargs):
        m = cls.head.match(s[:80]) if isinstance(s, str) else None
        if m:
            return [m.group(1), {"run_id": m.group(2)}]
        return fastjson.loads(s, **kwargs)


def follower_worker(url, code, n, decode, pipe):
    """Connect `n` followers, join the room, record (time, event, run_id) of every run packet;
    on ("stop", last_run_id) wait for that run's end everywhere and send the arrivals back."""
    import threading

    import socketio

    arrivals = [[] for _ in range(n)]
    done = threading.Condition()
    clients = []
    try:
        for i in range(n):
            rec = connect(url, record=False)
            if not decode:
                socketio.packet.Packet.json = _HeadOnlyJSON  # (connect sets it, for all)

            def on(data, event, i=i):
                with done:
                    arrivals[i].append((time.monotonic(), event, data.get("run_id")))
                    done.notify_all()

            for event in EVENTS:
                rec.client.on(event, lambda data, event=event, on=on: on(data, event))
            ack = rec.call("room_join", {"code": code}, timeout=30)
            assert "error" not in ack, ack
            clients.append(rec)
        pipe.send("ready")
        _, last = pipe.recv()

        def finished(i):
            return any(ev == "run_finished" and r == last for _, ev, r in arrivals[i])

        with done:
            done.wait_for(lambda: all(finished(i) for i in range(n)), timeout=120)
        pipe.send(arrivals)
    except Exception as exc:  # tell the parent rather than leave it waiting
        pipe.send(f"error: {exc!r}")
    finally:
        for rec in clients:
            rec.client.disconnect()


def packet_keys(arrivals):
    """{(event, run_id, k): time}: the k-th packet of that event for that run."""
    seen, keyed = {}, {}
    for t, event, run_id in arrivals:
        k = seen.get((event, run_id), 0)
        seen[(event, run_id)] = k + 1
        keyed[(event, run_id, k)] = t
    return keyed


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--followers", type=int, default=30)
    ap.add_argument("--procs", type=int, default=3, help="processes the followers are spread on")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument(
        "--interval",
        type=float,
        default=1.0,
        help="seconds from one run's start to the next's (0: back to back)",
    )
    ap.add_argument("--graph", choices=["wide200", "mlp-mse"], default="wide200")
    ap.add_argument(
        "--decode",
        action="store_true",
        help="followers decode every packet in full (30 decodes share this machine's CPUs)",
    )
    ap.add_argument("--quick", action="store_true", help="10 runs")
    args = ap.parse_args(argv)
    runs = 10 if args.quick else args.runs
    if args.graph == "wide200":
        doc = wide_graph(200)
    else:
        from backend.graph.templates import load_template

        doc = load_template("mlp-mse").model_dump(mode="json")

    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as data_dir:
        proc, url = server_bench_module().start_server(data_dir)
        workers = []
        try:
            owner = connect(url)
            code = owner.call("room_create", {"graph": doc})["code"]
            shares = [args.followers // args.procs] * args.procs
            for i in range(args.followers % args.procs):
                shares[i] += 1
            for n in shares:
                here, there = ctx.Pipe()
                p = ctx.Process(
                    target=follower_worker, args=(url, code, n, args.decode, there), daemon=True
                )
                p.start()
                workers.append((p, here))
            for _, pipe in workers:
                if not pipe.poll(120) or (msg := pipe.recv()) != "ready":
                    raise RuntimeError(f"a follower process did not join: {msg!r}")
            owner.run_to_end(doc, "backward")  # warm up
            run_ids, records = [], 0
            t0 = time.perf_counter()
            for i in range(runs):
                time.sleep(max(0.0, t0 + i * args.interval - time.perf_counter()))
                run_id, finished, recs = owner.run_to_end(doc, "backward", timeout=60)
                assert finished["status"] == "ok", finished
                run_ids.append(run_id)
                records = len(recs)
            wall = time.perf_counter() - t0
            followers = []
            for _, pipe in workers:
                pipe.send(("stop", run_ids[-1]))
            for p, pipe in workers:
                if not pipe.poll(180):
                    raise RuntimeError("a follower process did not answer")
                got = pipe.recv()
                if isinstance(got, str):
                    raise RuntimeError(got)
                followers.extend(got)
                p.join(30)
            owner.client.disconnect()
        finally:
            for p, _ in workers:
                if p.is_alive():
                    p.kill()
            proc.terminate()
            proc.wait(10)

    measured = set(run_ids)
    owner_times = packet_keys(
        (t, ev, d["run_id"]) for t, ev, d in owner.received if d.get("run_id") in measured
    )
    follower_times = [packet_keys(a) for a in followers]
    slowest, every, missing = [], [], 0
    for key, t_owner in owner_times.items():
        lags = []
        for times in follower_times:
            t = times.get(key)
            if t is None:
                missing += 1
            else:
                lags.append(t - t_owner)
        if lags:
            slowest.append(max(lags))
            every.extend(lags)
    packets = len(owner_times)

    def row(name, v):
        return (
            f"| {name} | {statistics.median(v) * 1e3:.1f} | {pct(v, 95) * 1e3:.1f} | "
            f"{max(v) * 1e3:.1f} |"
        )

    print("## rooms benchmark\n")
    print("- command: " + shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"- python {platform.python_version()}, {os.cpu_count()} CPUs; server in a subprocess")
    print(
        f"- graph: {args.graph}, {len(doc['nodes'])} nodes, backward; {runs} runs one after "
        f"another, one started every {args.interval:g} s ({wall:.1f} s); {records} records and "
        f"{packets // runs} packets per run"
    )
    print(
        f"- {args.followers} followers in {args.procs} processes + the owner; "
        f"{packets} packets x {args.followers} followers; missing: {missing}; followers "
        + ("decode every packet" if args.decode else "read each run packet's event and run_id")
    )
    print("\n| lag behind the owner, ms | median | p95 | max |")
    print("|---|---|---|---|")
    print(row("slowest follower, per packet", slowest))
    print(row("every follower, every packet", every))
    verdict = (
        "met" if max(slowest) <= 0.1 else ("met at p95" if pct(slowest, 95) <= 0.1 else "missed")
    )
    print(f"\ntarget: slowest follower <= 100 ms behind: {verdict}")


if __name__ == "__main__":
    main()
