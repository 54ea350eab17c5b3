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
(time.monotonic, one clock for every process on Linux); per packet, the slowest follower's;
and per follower, its own lag over every packet (p50, p95, max), so that one slow follower (a
crowded client process, a far server) shows as itself rather than in the packets' maximum.
Target: the slowest follower at most 150 ms behind the owner at p95. Prints, never asserts.

`--servers 3` measures a second set-up beside the first: three `wiregrad serve` processes
sharing a redis-server (Debian's, on a free port) through `--message-queue`, the owner on the
first and the follower processes on the others, as behind a proxy with sticky sessions:

    .venv/bin/python bench/rooms.py --followers 300 --procs 6 --servers 3

Where the machine has two CPUs or more, the servers (and Redis) are pinned to the first half
of them and the owner's and followers' client processes to the rest (`--no-pin` to share
them all): the followers' Python clients then cannot take the servers' CPU, and the lag is the
servers' own. Beside the lag, the servers' CPU time over the measured runs (all processes,
/proc), per packet delivered to a follower, says what each delivery costs them.

The followers are websockets read by hand (RawFollower; `--decode`: python-socketio clients)
and note a packet when its frame arrives; the owner is a python-socketio client and notes it
once decoded, a millisecond or two later for this graph's trace packets. So a lag is short by
about that much, and a small room's median can read below zero.
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


def split_cpus(pin):
    """(the servers' CPUs, the clients' CPUs), or (None, None) when not pinned."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not pin or len(cpus) < 2:
        return None, None
    half = (len(cpus) + 1) // 2
    return set(cpus[:half]), set(cpus[half:])


def pin(pid, cpus):
    if cpus:
        os.sched_setaffinity(pid, cpus)


def cpu_seconds(pids):
    """User + system CPU time of processes `pids` so far (Linux /proc), all their threads."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


class RawFollower:
    """A follower as light as a client can be: Engine.IO and Socket.IO over one websocket by
    hand (as the page's socket.io-client speaks them), a thread that reads each frame and
    notes the time, event and run_id of a run packet from the frame's head, nothing decoded.
    On this 2-core machine 300 followers share one or two CPUs; a student's page has its own,
    so what the bench's followers cost must not stand in for the servers' delay."""

    head = re.compile(r'^4(?:2|51-)\["(run_started|trace|run_finished)",\{"run_id":"([^"]*)"')

    def __init__(self, url, on_packet):
        import websocket

        self.ws = websocket.create_connection(
            url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket",
            origin=url,
            skip_utf8_validation=True,
            timeout=60,
        )
        if not self.ws.recv().startswith("0"):  # Engine.IO's open packet
            raise RuntimeError("no Engine.IO open packet")
        self.ws.send('40{"wire":2}')  # the wire it reads (client_version.py)
        if not self.ws.recv().startswith("40"):
            raise RuntimeError("no Socket.IO connect")
        self.on_packet = on_packet

    def join(self, code):
        self.ws.send("421" + fastjson.dumps(["room_join", {"code": code}]))
        while True:
            frame = self.ws.recv()
            if isinstance(frame, str) and frame.startswith(("431", "461-1")):
                if '"error"' in frame[:200]:
                    raise RuntimeError(frame[:200])
                if frame.startswith("461-1"):
                    self.ws.recv()  # (a binary ack's attachment)
                return

    def read(self):
        """Read until the connection closes (a thread of its own)."""
        import websocket

        ws, head, on_packet = self.ws, self.head, self.on_packet
        try:
            while True:
                frame = ws.recv()
                if not isinstance(frame, str):
                    continue  # a binary attachment: its event was noted with its header
                if frame == "2":
                    ws.send("3")  # the server's ping
                elif m := head.match(frame[:80]):
                    on_packet(m.group(1), m.group(2))
        except (websocket.WebSocketException, OSError):
            pass

    def close(self):
        # (not a closing handshake: its reply would go to the reading thread, and close()
        # would wait for it until the socket's timeout)
        self.ws.abort()
        self.ws.shutdown()


def follower_worker(url, code, n, decode, pipe, cpus=None):
    """Connect `n` followers, join the room, record (time, event, run_id) of every run packet;
    on ("stop", last_run_id) wait for that run's end everywhere and send the arrivals back.
    `decode`: python-socketio clients that decode every packet, else RawFollowers."""
    import threading

    pin(0, cpus)
    arrivals = [[] for _ in range(n)]
    done = threading.Condition()
    closers = []
    try:
        for i in range(n):

            def on(event, run_id, i=i):
                t = time.monotonic()
                with done:
                    arrivals[i].append((t, event, run_id))
                    done.notify_all()

            closers.append((_socketio_follower if decode else _raw_follower)(url, code, on))
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
        for close in closers:
            close()


def _raw_follower(url, code, on):
    """A RawFollower in the room, read on a thread of its own: its close."""
    import threading

    f = RawFollower(url, on)
    f.join(code)
    threading.Thread(target=f.read, daemon=True).start()
    return f.close


def _socketio_follower(url, code, on):
    """A python-socketio client in the room, decoding every packet: its close."""
    rec = connect(url, record=False)
    for event in EVENTS:
        rec.client.on(event, lambda data, event=event: on(event, data.get("run_id")))
    ack = rec.call("room_join", {"code": code}, timeout=30)
    assert "error" not in ack, ack
    return rec.client.disconnect


def packet_keys(arrivals):
    """{(event, run_id, k): time}: the k-th packet of that event for that run."""
    seen, keyed = {}, {}
    for t, event, run_id in arrivals:
        k = seen.get((event, run_id), 0)
        seen[(event, run_id)] = k + 1
        keyed[(event, run_id, k)] = t
    return keyed


def per_follower(owner_times, follower_times, where):
    """One row per follower: its client process and server (indexes), the packets it got and
    missed, and its lag behind the owner over them in seconds (p50, p95, max)."""
    rows = []
    for i, (times, (proc, server)) in enumerate(zip(follower_times, where, strict=True)):
        lags = [times[k] - t for k, t in owner_times.items() if k in times]
        rows.append(
            {
                "follower": i + 1,
                "proc": proc + 1,
                "server": server + 1,
                "packets": len(lags),
                "missing": len(owner_times) - len(lags),
                "p50": pct(lags, 50) if lags else float("nan"),
                "p95": pct(lags, 95) if lags else float("nan"),
                "max": max(lags, default=float("nan")),
            }
        )
    return rows


def print_per_follower(name, rows, shown=40):
    """The per-follower table, slowest p95 first; past `shown` followers, the 10 slowest and
    the 5 fastest, with the spread of their p95s."""
    rows = sorted(rows, key=lambda r: -r["p95"])
    p95s = [r["p95"] for r in rows]
    print(
        f"\n### {name}: lag of each follower behind the owner, ms (slowest p95 first)\n\n"
        f"p95 across followers: fastest {min(p95s) * 1e3:.1f}, median "
        f"{statistics.median(p95s) * 1e3:.1f}, slowest {max(p95s) * 1e3:.1f}\n"
    )
    print("| follower | client process | server | packets | missing | p50 | p95 | max |")
    print("|---|---|---|---|---|---|---|---|")
    picked = rows if len(rows) <= shown else rows[:10] + [None] + rows[-5:]
    for r in picked:
        if r is None:
            print(f"| ({len(rows) - 15} more) | | | | | | | |")
            continue
        print(
            f"| {r['follower']} | {r['proc']} | {r['server']} | {r['packets']} | {r['missing']} "
            f"| {r['p50'] * 1e3:.1f} | {r['p95'] * 1e3:.1f} | {r['max'] * 1e3:.1f} |"
        )


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def start_servers(n, data_dir, stack):
    """`n` `wiregrad serve` processes on one redis-server (Debian's, on a free loopback port)
    sharing `data_dir`: (their URLs, the pids of Redis and of them). `stack` is an ExitStack
    that stops them all."""
    import shutil
    import subprocess

    import redis
    import requests

    bench_server = server_bench_module()
    redis_port = bench_server.free_port()
    exe = shutil.which("redis-server")
    if exe is None:
        raise SystemExit("redis-server is missing: ./scripts/install-redis.sh")
    cmd = [exe, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
    rproc = subprocess.Popen([*cmd, "no"], stdout=subprocess.DEVNULL, cwd=data_dir)
    stack.callback(lambda: (rproc.terminate(), rproc.wait(10)))
    pids = [rproc.pid]
    queue = f"redis://127.0.0.1:{redis_port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            redis.Redis.from_url(queue).ping()
            break
        except redis.RedisError:
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    urls = []
    for _ in range(n):
        port = bench_server.free_port()
        cmd = [sys.executable, "-m", "backend.cli", "serve", "--port", str(port)]
        cmd += ["--data-dir", data_dir, "--message-queue", queue]
        proc = subprocess.Popen(
            cmd, cwd=_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        stack.callback(lambda proc=proc: (proc.terminate(), proc.wait(10)))
        urls.append(f"http://127.0.0.1:{port}")
        pids.append(proc.pid)
    for url in urls:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(url + "/api/health", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not start")
            time.sleep(0.05)
    return urls, pids


def measure(urls, doc, args, runs, server_pids):
    """The owner on urls[0], the followers' worker processes spread over `urls`: per packet,
    the slowest follower's lag, every follower's lags, missing packets, and the run shape."""
    ctx = mp.get_context("spawn")
    workers = []
    server_cpus, client_cpus = args.cpus
    for pid in server_pids:
        pin(pid, server_cpus)
    pin(0, client_cpus)  # the owner's client
    try:
        owner = connect(urls[0])
        code = owner.call("room_create", {"graph": doc})["code"]
        shares = [args.followers // args.procs] * args.procs
        for i in range(args.followers % args.procs):
            shares[i] += 1
        follower_urls = []
        for i, n in enumerate(shares):
            here, there = ctx.Pipe()
            url = urls[i % len(urls)] if len(urls) == 1 else urls[(i + 1) % len(urls)]
            follower_urls.append(url)
            p = ctx.Process(
                target=follower_worker,
                args=(url, code, n, args.decode, there, client_cpus),
                daemon=True,
            )
            p.start()
            workers.append((p, here))
        for _, pipe in workers:
            if not pipe.poll(180) or (msg := pipe.recv()) != "ready":
                raise RuntimeError(f"a follower process did not join: {msg!r}")
        owner.run_to_end(doc, "backward")  # warm up
        run_ids, records, computing = [], 0, 0.0
        cpu0 = cpu_seconds(server_pids)
        t0 = time.perf_counter()
        for i in range(runs):
            time.sleep(max(0.0, t0 + i * args.interval - time.perf_counter()))
            run_id, finished, recs = owner.run_to_end(doc, "backward", timeout=60)
            assert finished["status"] == "ok", finished
            run_ids.append(run_id)
            records = len(recs)
            computing += finished["timings"]["server_ms"] / 1e3
        wall = time.perf_counter() - t0
        for _, pipe in workers:
            pipe.send(("stop", run_ids[-1]))
        answers = []
        for _, pipe in workers:
            if not pipe.poll(180):
                raise RuntimeError("a follower process did not answer")
            answers.append(pipe.recv())
        # every follower has had every packet: what the servers spent on the runs since
        server_cpu = cpu_seconds(server_pids) - cpu0
        followers, where = [], []
        for w, ((p, _), got) in enumerate(zip(workers, answers, strict=True)):
            if isinstance(got, str):
                raise RuntimeError(got)
            followers.extend(got)
            where.extend((w, urls.index(follower_urls[w])) for _ in got)
            p.join(30)
        owner.client.disconnect()
    finally:
        for p, _ in workers:
            if p.is_alive():
                p.kill()

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
    return {
        "server_cpu": server_cpu,
        "computing": computing,
        "delivered": len(every),
        "pinned": server_cpus is not None,
        "slowest": slowest,
        "every": every,
        "per_follower": per_follower(owner_times, follower_times, where),
        "missing": missing,
        "packets": len(owner_times),
        "records": records,
        "wall": wall,
    }


def main(argv=None):
    import contextlib

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--followers", type=int, default=30)
    ap.add_argument("--procs", type=int, default=3, help="processes the followers are spread on")
    ap.add_argument(
        "--servers",
        type=int,
        default=1,
        help="also measure N server processes sharing a redis-server (--message-queue), the "
        "owner on the first and the followers on the others, beside the one-process figure",
    )
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
        help="followers are python-socketio clients that decode every packet in full (300 "
        "decodes share this machine's CPUs); else each is a websocket read by hand",
    )
    ap.add_argument("--quick", action="store_true", help="10 runs")
    ap.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="let the servers and the clients share every CPU",
    )
    args = ap.parse_args(argv)
    runs = 10 if args.quick else args.runs
    args.cpus = split_cpus(args.pin)  # (before this process is pinned to the clients' half)
    if args.graph == "wide200":
        doc = wide_graph(200)
    else:
        from backend.graph.document.templates import load_template

        doc = load_template("mlp-mse").model_dump(mode="json")

    results = []
    with tempfile.TemporaryDirectory() as data_dir:
        proc, url = server_bench_module().start_server(data_dir)
        try:
            results.append(("1 process", measure([url], doc, args, runs, [proc.pid])))
        finally:
            proc.terminate()
            proc.wait(10)
    if args.servers > 1:
        with tempfile.TemporaryDirectory() as data_dir, contextlib.ExitStack() as stack:
            urls, pids = start_servers(args.servers, data_dir, stack)
            name = f"{args.servers} processes + Redis"
            results.append((name, measure(urls, doc, args, runs, pids)))

    def ms(v, q=None):
        return (statistics.median(v) if q is None else pct(v, q)) * 1e3

    first = results[0][1]
    print("## rooms benchmark\n")
    print("- command: " + shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"- python {platform.python_version()}, {os.cpu_count()} CPUs; servers in subprocesses")
    print(
        f"- graph: {args.graph}, {len(doc['nodes'])} nodes, backward; {runs} runs one after "
        f"another, one started every {args.interval:g} s; {first['records']} records and "
        f"{first['packets'] // runs} packets per run"
    )
    print(
        f"- {args.followers} followers in {args.procs} client processes + the owner; followers "
        + (
            "python-socketio clients decoding every packet"
            if args.decode
            else "websockets read by hand, each run packet's event and run_id from its head"
        )
    )
    server_cpus, client_cpus = args.cpus
    print(
        f"- servers (and Redis) on CPUs {sorted(server_cpus)}, clients on {sorted(client_cpus)}"
        if server_cpus
        else "- servers and clients share every CPU"
    )
    print(
        "\n| servers | packets x followers | missing | slowest follower per packet, ms: "
        "median | p95 | max | every follower, p95 ms | servers' CPU per delivered packet "
        "(runs aside), µs |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results:
        # the runs themselves (their server_ms, wall time on the owner's server) aside
        per = max(0.0, r["server_cpu"] - r["computing"]) / max(1, r["delivered"]) * 1e6
        print(
            f"| {name} | {r['packets']} x {args.followers} | {r['missing']} | "
            f"{ms(r['slowest']):.1f} | {ms(r['slowest'], 95):.1f} | {max(r['slowest']) * 1e3:.1f} "
            f"| {ms(r['every'], 95):.1f} | {per:.0f} |"
        )
    for name, r in results:
        print_per_follower(name, r["per_follower"])
    for name, r in results:
        p95 = pct(r["slowest"], 95)
        verdict = (
            "met" if max(r["slowest"]) <= 0.15 else ("met at p95" if p95 <= 0.15 else "missed")
        )
        print(f"\n{name}: slowest follower <= 150 ms behind at p95: {verdict}")


if __name__ == "__main__":
    main()
