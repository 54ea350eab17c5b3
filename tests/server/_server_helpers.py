"""Helpers for the server tests: a recording Socket.IO client, record finders, graph builders."""

import functools
import threading
import time
from dataclasses import dataclass, field

import engineio
import socketio
import socketio.packet

from backend.graph.running.records import expand_records
from backend.server import fastjson, typed_wire

EVENTS = ("run_started", "trace", "run_finished")


@dataclass
class Recorder:
    """A connected client and what the server sent it, in arrival order."""

    client: socketio.Client
    received: list = field(default_factory=list)  # (monotonic time, event, data)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def on(self, event, data):
        with self.cond:
            self.received.append((time.monotonic(), event, data))
            self.cond.notify_all()

    def call(self, event, data=None, timeout=10):
        return self.client.call(event, data, timeout=timeout)

    def run(self, graph, mode="forward", **fields):
        ack = self.call("run", {"graph": graph, "mode": mode, **fields})
        assert "run_id" in ack, ack
        return ack["run_id"]

    def packets(self, run_id, event=None):
        with self.cond:
            return [
                (t, ev, d)
                for t, ev, d in self.received
                if d.get("run_id") == run_id and (event is None or ev == event)
            ]

    def wait_finished(self, run_id, timeout=30):
        """The run's `run_finished` payload (waiting for it)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for _, ev, d in self.received:
                    if ev == "run_finished" and d.get("run_id") == run_id:
                        return d
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no run_finished for {run_id}")
                self.cond.wait(left)

    def wait_for(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate(self.received):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the awaited packet did not come")
                self.cond.wait(left)

    def raw_records(self, run_id):
        """Every trace record of the run as sent, in the order received: summaries as row
        numbers of the `summaries` tables among them."""
        return [r for _, _, d in self.packets(run_id, "trace") for r in d["records"]]

    def records(self, run_id):
        """The run's records received so far, each with its summary written out."""
        return expand_records(self.raw_records(run_id))

    def result(self, run_id, timeout=30):
        """(run_finished payload, records) once the run is over and all its records came
        (run_finished tells how many there are; a trace packet may come after it)."""
        finished = self.wait_finished(run_id, timeout)
        want = finished.get("records")
        if want is not None:
            self.wait_for(lambda _: len(self.raw_records(run_id)) >= want, timeout=5)
        return finished, self.records(run_id)

    def run_to_end(self, graph, mode="forward", timeout=30, **fields):
        run_id = self.run(graph, mode, **fields)
        finished, records = self.result(run_id, timeout)
        return run_id, finished, records


class _InOrderEngineIO(engineio.Client):
    """python-engineio's client hands each message to a new thread, so handlers may see
    packets out of the order they came in; this one handles them on the reading thread,
    in order, so the tests see exactly the order the server sent."""

    def _trigger_event(self, event, *args, **kwargs):
        if event == "message":
            kwargs["run_async"] = False
        return super()._trigger_event(event, *args, **kwargs)

    def _connect_websocket(self, *args, **kwargs):
        # websocket-client waits 3 s for the server's answer to its close frame, which the
        # threading server never sends once Socket.IO has closed the connection: don't.
        ok = super()._connect_websocket(*args, **kwargs)
        if ok and self.ws is not None:
            self.ws.close = functools.partial(self.ws.close, timeout=0.05)
        return ok


class WirePacket(socketio.packet.Packet):
    """The client's packets: the server's binary messages carry one attachment, placed as the
    last argument (typed_wire.SocketPacket), so it is put back there without walking the
    payload as python-socketio does (the page's socket.io-client walks it, in JavaScript).
    What it sends is JSON only, as the page's is (the server closes a connection that sends
    binary), so the outgoing payload is not walked for bytes either: on a 1,000-node graph
    python-socketio's walk took longer than the server took to read and check it."""

    uses_binary_events = False

    @classmethod
    def reconstruct_binary(cls, data, attachments):
        if len(attachments) == 1 and data and data[-1] == {"_placeholder": True, "num": 0}:
            return [*data[:-1], attachments[0]]
        return super().reconstruct_binary(data, attachments)


class InOrderClient(socketio.Client):
    """Also reads the server's typed arrays (typed_wire.py): a binary event's or ack's last
    argument is the arrays' buffer, which handlers never see; with `materialize` (the default)
    the arrays come as the nested lists the JSON wire wrote, else as numpy arrays."""

    materialize = True

    def _engineio_client_class(self):
        return _InOrderEngineIO

    def _handle_event(self, namespace, id, data):
        return super()._handle_event(namespace, id, typed_args(data, self.materialize))

    def _handle_ack(self, namespace, id, data):
        return super()._handle_ack(namespace, id, typed_args(data, self.materialize))


def typed_args(args, materialize=True):
    """A Socket.IO message's arguments with the arrays of its binary attachment read."""
    if len(args) >= 2 and isinstance(args[-1], bytes):
        *rest, blob = args
        return [typed_wire.decode(a, blob, materialize) for a in rest]
    return args


def connect(url, origin=None, record=True, materialize=True, wire=typed_wire.VERSION):
    # websocket-client checks UTF-8 in pure Python (slower than the whole run on a trace of
    # megabytes); a browser does it natively, as orjson parses like its JSON.parse
    options = {"skip_utf8_validation": True}
    if origin:
        options["origin"] = origin
    client = InOrderClient(
        reconnection=False, websocket_extra_options=options, json=fastjson, serializer=WirePacket
    )
    client.materialize = materialize
    rec = Recorder(client)
    if record:
        for event in EVENTS:
            client.on(event, lambda data, event=event: rec.on(event, data))
    # the page announces the wire it reads (client_version.py); wire=None: an old client
    auth = None if wire is None else {"wire": wire}
    client.connect(url, transports=["websocket"], wait_timeout=10, auth=auth)
    return rec


# -- records -----------------------------------------------------------------------------------
def find(records, kind, **fields):
    """The records of `kind` whose fields match."""
    return [
        r for r in records if r["kind"] == kind and all(r.get(k) == v for k, v in fields.items())
    ]


def one(records, kind, **fields):
    found = find(records, kind, **fields)
    assert len(found) == 1, (kind, fields, found)
    return found[0]


def key(record):
    """What a record is about: its kind and where."""
    return tuple(record.get(k) for k in ("kind", "node", "edge", "param", "port"))


def preview(records, kind, **fields):
    return one(records, kind, **fields)["summary"]["preview"]


# -- graphs ------------------------------------------------------------------------------------
def tensor(node_id, value=None, requires_grad=False, **params):
    if value is not None:
        params["value"] = value
    return {"id": node_id, "op": "tensor", "params": {"requires_grad": requires_grad, **params}}


def node(node_id, op, **params):
    return {"id": node_id, "op": op, "params": params}


def edge(source, target, port="input", edge_id=None):
    return {
        "id": edge_id or f"{source}-{target}-{port}",
        "source": source,
        "sourcePort": "out",
        "target": target,
        "targetPort": port,
    }


def graph(nodes, edges=(), **fields):
    doc = {"format": "wiregrad.graph", "version": 1, "nodes": list(nodes), "edges": list(edges)}
    return doc | fields


def times_k(k, x=3.0):
    """y = x * k with x a leaf: forward y = x*k, backward x.grad = k."""
    return graph(
        [tensor("x", x, True), tensor("k", k), node("y", "mul")],
        [edge("x", "y"), edge("k", "y", "other")],
        target="y",
        name=f"x times {k}",
    )


def slow_chain(n=200, size=512, op="tanh"):
    """A chain of `n` elementwise ops on a size x size tensor: long enough to cancel."""
    nodes = [tensor("x", shape=[size, size], init="randn", seed=0, requires_grad=True)]
    edges = []
    prev = "x"
    for i in range(n):
        nodes.append(node(f"n{i}", op))
        edges.append(edge(prev, f"n{i}"))
        prev = f"n{i}"
    nodes.append(node("loss", "sum"))
    edges.append(edge(prev, "loss"))
    return graph(nodes, edges, target="loss", name="slow chain")


def wide_graph(n_nodes=1000, size=8, seed=0):
    """`n_nodes` nodes of size x size tensors: leaves, then a chain of elementwise ops in
    which binary ops also take an earlier node; a final sum. Forward + backward ready."""
    import random

    rng = random.Random(seed)
    nodes = [
        tensor(f"w{i}", shape=[size, size], init="randn", seed=i, requires_grad=True)
        for i in range(3)
    ]
    edges = []
    ids = [n["id"] for n in nodes]
    prev = ids[-1]
    for i in range(n_nodes - len(nodes) - 1):
        nid = f"n{i}"
        if rng.random() < 0.5:
            nodes.append(node(nid, rng.choice(["tanh", "sigmoid", "sin"])))
            edges.append(edge(prev, nid))
        else:
            nodes.append(node(nid, rng.choice(["add", "sub", "mul"])))
            edges.append(edge(prev, nid))
            edges.append(edge(rng.choice(ids[-20:]), nid, "other"))
        ids.append(nid)
        prev = nid
    nodes.append(node("loss", "sum"))
    edges.append(edge(prev, "loss"))
    return graph(nodes, edges, target="loss", name=f"{n_nodes} nodes")


def with_leaf(b, n=300, requires_grad=False):
    """wide_graph(n, size=4) with a leaf `b` (4 values, each `b`) added in just before the sum:
    an edit of `b` reaches only `b`, the add it feeds, and the sum."""
    doc = wide_graph(n, size=4)
    into_loss = doc["edges"].pop()
    doc["nodes"] += [tensor("b", value=[b] * 4, requires_grad=requires_grad), node("t", "add")]
    doc["edges"] += [edge(into_loss["source"], "t"), edge("b", "t", "other"), edge("t", "loss")]
    return doc


class RawClient:
    """A Socket.IO client written by hand over websocket-client, for frames that
    python-socketio would not send (broken JSON, deep nesting, binary junk)."""

    def __init__(self, url, origin=None):
        import websocket

        ws_url = url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
        options = {"origin": origin} if origin else {}
        self.ws = websocket.create_connection(ws_url, timeout=10, **options)
        opening = self.ws.recv()
        assert opening.startswith("0{"), opening
        self.ws.send(f'40{{"wire":{typed_wire.VERSION}}}')
        self.connected = self._recv_packet()
        self.next_id = 1

    def _recv_packet(self):
        while True:
            msg = self.ws.recv()
            if msg == "2":  # Engine.IO ping
                self.ws.send("3")
                continue
            return msg

    def send_text(self, text):
        self.ws.send(text)

    def call_raw(self, event_and_args_json):
        """Send `42<id><json array text>`, return the ack's decoded arguments (or the first
        frame that is not an ack, as text)."""
        import json

        ack_id = self.next_id
        self.next_id += 1
        self.ws.send(f"42{ack_id}{event_and_args_json}")
        while True:
            msg = self._recv_packet()
            if msg.startswith(f"43{ack_id}"):
                return json.loads(msg[len(f"43{ack_id}") :])
            if not msg.startswith("42"):  # not an event for us: something else went wrong
                return msg

    def close(self):
        self.ws.close()


# -- memory ------------------------------------------------------------------------------------
def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


class PeakRSS:
    """The peak RSS growth over a block of this process, the in-process servers' included
    (VmHWM reset at its start)."""

    def __enter__(self):
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        self.start = _status("VmRSS")
        return self

    def __exit__(self, *exc):
        self.grew = _status("VmHWM") - self.start
