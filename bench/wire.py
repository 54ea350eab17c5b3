"""What a run costs on the wire: bytes and time over a real Socket.IO connection.

Run:  .venv/bin/python bench/wire.py [--template lenet-digits | --wide N] [--repeat 5]

A `wiregrad serve` of this checkout (to compare wires, run the file from a copy of an older
checkout: `git archive REV | tar -x -C DIR`, with the built C extensions copied in) in a
subprocess on a free loopback port (bench/server.py's start_server); a hand-written Engine.IO
client over a websocket (no python-socketio in the way) sends the template's graph (or with
--wide N, bench/graph.py's kind of N-node graph of 8x8 tensors: tests/server's wide_graph) as
a backward run (forward for a template without a target), reads every frame until
`run_finished` and the records it counts, then asks for a page of the largest value (as much
as one answer holds; not for --wide). Reported, best of --repeat: the trace's bytes (text and
binary frames), the time from `run` to the last record, the client's time to read the
frames (orjson on the text; typed arrays are numpy views of the binary frames, as the page's
are typed-array views), and the tensor page's bytes and time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
import requests
import websocket

_ROOT = Path(__file__).resolve().parent.parent


def _start_server(data_dir):
    """bench/server.py's: `wiregrad serve` of this checkout in a subprocess, on a free port."""
    spec = importlib.util.spec_from_file_location("bench_server", _ROOT / "bench" / "server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.start_server(data_dir)


class Raw:
    """Engine.IO 4 / Socket.IO 5 over a websocket, frames counted as they come."""

    def __init__(self, url):
        ws_url = url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
        self.ws = websocket.create_connection(ws_url, timeout=60, skip_utf8_validation=True)
        assert self.ws.recv().startswith("0{")
        self.ws.send('40{"wire":2}')  # (a server of wire 1 reads no auth and ignores it)
        assert self.ws.recv().startswith("40")
        self.next = 1

    def frame(self):
        while True:
            f = self.ws.recv()
            if f == "2":
                self.ws.send("3")
                continue
            return f

    def call(self, event, payload):
        """Send and read until the ack: (the frames that came, the ack's frames)."""
        ack_id = self.next
        self.next += 1
        self.ws.send(f"42{ack_id}" + json.dumps([event, payload]))
        frames = []
        while True:
            f = self.frame()
            if isinstance(f, str) and _ack_id(f) == ack_id:
                ack = [f]
                if f.startswith("461-"):
                    ack.append(self.frame())
                return frames, ack
            frames.append(f)


def _ack_id(frame):
    """The id of an ack frame ("43<id>[...]", binary "461-<id>[...]"), else None."""
    head = frame[2:] if frame.startswith("43") else frame[4:] if frame.startswith("461-") else ""
    digits = head[: head.find("[")] if "[" in head else ""
    return int(digits) if digits.isdigit() else None


def _packets(frames):
    """(event, payload, blob) of each Socket.IO event among the frames."""
    out, i = [], 0
    while i < len(frames):
        f = frames[i]
        if isinstance(f, str) and f.startswith("42"):
            args = orjson.loads(f[2:])
            out.append((args[0], args[1], None))
        elif isinstance(f, str) and f.startswith("451-"):
            args = orjson.loads(f[4:])
            i += 1
            out.append((args[0], args[1], frames[i]))
        i += 1
    return out


def _views(x, blob):
    """The typed arrays of a payload as numpy views (what the page makes of them)."""
    if isinstance(x, dict):
        if "$typed" in x:
            n = int(np.prod(x["shape"], dtype=np.int64))
            return np.frombuffer(blob, x["$typed"], n, x["offset"])
        return {k: _views(v, blob) for k, v in x.items()}
    if isinstance(x, list):
        return [_views(v, blob) for v in x]
    return x


def one_run(client, doc, mode):
    t0 = time.perf_counter()
    frames, ack = client.call("run", {"graph": doc, "mode": mode})
    run_id = orjson.loads(ack[0][ack[0].index("[") :])[0]["run_id"]
    # the end: run_finished says how many records; count them cheaply as frames come (the
    # frames are read, in full, after the clock stops)
    finished = f'"run_finished",{{"run_id":"{run_id}"'

    def is_end(f):
        return isinstance(f, str) and finished in f[:80]

    done = any(map(is_end, frames))
    while not done:
        frames.append(client.frame())
        done = is_end(frames[-1])
    want = next(
        p["records"]
        for e, p, _ in _packets(frames)
        if e == "run_finished" and p["run_id"] == run_id
    )

    def count():
        return sum(
            len(p["records"])
            for e, p, _ in _packets(frames)
            if e == "trace" and p["run_id"] == run_id
        )

    while count() < want:
        frames.append(client.frame())
    wall = time.perf_counter() - t0
    text = sum(len(f.encode()) for f in frames if isinstance(f, str))
    binary = sum(len(f) for f in frames if isinstance(f, bytes))
    t1 = time.perf_counter()
    for _, payload, blob in _packets(frames):
        if blob is not None:
            _views(payload, blob)
    read = time.perf_counter() - t1
    return run_id, {"wall_ms": wall * 1e3, "text": text, "binary": binary, "read_ms": read * 1e3}


def node_sizes(client, run_id, doc):
    """{node: elements of its value} (a page of 0 elements: the shape and stats alone)."""
    sizes = {}
    for n in doc["nodes"]:
        ask = {"run_id": run_id, "node": n["id"], "count": 0, "offset": 0}
        _, ack = client.call("tensor", ask)
        reply = orjson.loads(ack[0][ack[0].index("[") :])[0]
        if "numel" in reply:
            sizes[n["id"]] = reply["numel"]
    return sizes


def tensor_page(client, run_id, node, numel):
    """A page of the tensor: all of it, or the most one answer holds (262,144 elements)."""
    ask = {
        "run_id": run_id,
        "node": node,
        "kind": "value",
        "offset": 0,
        "count": min(numel, 262_144),
    }
    t0 = time.perf_counter()
    _, ack = client.call("tensor", ask)
    wall = time.perf_counter() - t0
    size = sum(len(f.encode()) if isinstance(f, str) else len(f) for f in ack)
    return {"page_ms": wall * 1e3, "page_bytes": size}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--template", default="lenet-digits")
    ap.add_argument("--wide", type=int, default=0, help="a wide_graph of N nodes instead")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as data:
        proc, url = _start_server(data)
        try:
            if args.wide:
                sys.path.insert(0, str(_ROOT / "tests" / "server"))
                from _server_helpers import wide_graph

                doc, name = wide_graph(args.wide), f"wide_graph({args.wide})"
            else:
                doc = requests.get(f"{url}/api/templates/{args.template}", timeout=10).json()
                name = args.template
            mode = "backward" if doc.get("target") else "forward"
            client = Raw(url)
            best = {}
            # the node whose value has the most elements, asked of the first run (a template's
            # few nodes: a wide graph's thousand asks would meet the `tensor` rate limit)
            biggest, sizes = None, {}
            for _ in range(args.repeat):
                run_id, r = one_run(client, doc, mode)
                if biggest is None and not args.wide:
                    sizes = node_sizes(client, run_id, doc)
                    biggest = max(sizes, key=sizes.get)
                if biggest is not None:
                    r |= tensor_page(client, run_id, biggest, sizes[biggest])
                for k, v in r.items():
                    best[k] = min(best.get(k, v), v)
            print(f"{name} ({mode}), {_ROOT}, best of {args.repeat}:")
            print(f"  trace: {best['text']:,} bytes of text + {best['binary']:,} binary")
            print(
                f"  run -> last record: {best['wall_ms']:.1f} ms; "
                f"client reads the frames: {best['read_ms']:.1f} ms"
            )
            if biggest is not None:
                shown = f"{min(sizes[biggest], 262_144):,} of {sizes[biggest]:,} elements"
                print(
                    f"  tensor page of {biggest} ({shown}): {best['page_bytes']:,} bytes, "
                    f"{best['page_ms']:.1f} ms"
                )
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
