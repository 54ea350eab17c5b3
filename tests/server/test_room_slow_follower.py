"""Latest wins for a follower that falls behind (room_delivery.py, issue 36): a follower that
stops reading while the owner runs is skipped for the rest of the run's records once its
connection's queue is BEHIND packets long, and when it reads again it gets the state (the
run's records as the room has them) and the end: its queue stays bounded, and what it ends up
with is what a follower that kept up has. A raw websocket with a tiny receive buffer stands in
for a phone on a weak network."""

import json
import socket
import threading
import time
from types import SimpleNamespace

import socketio
import websocket
from _server_helpers import typed_args, wide_graph
from test_rooms import client, create, join  # noqa: F401

from backend.server import room_delivery
from backend.server.room_delivery import BEHIND, BEHIND_BYTES, SEQ, _LatestWins

RUNS = 4


class SlowFollower:
    """Engine.IO over a websocket by hand, so that it can stop reading."""

    def __init__(self, server):
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{server.port}/socket.io/?EIO=4&transport=websocket",
            origin=server.url,
            sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),),
            skip_utf8_validation=True,
            timeout=30,
        )
        assert self.ws.recv().startswith("0")  # the Engine.IO open packet
        self.ws.send('40{"wire":2}')  # the wire it reads (client_version.py)
        connected = self.ws.recv()
        assert connected.startswith("40"), connected
        self.sid = json.loads(connected[2:])["sid"]
        self.events = []

    def call(self, event, data):
        self.ws.send("421" + json.dumps([event, data]))
        while True:
            frame = self.read()
            if frame.startswith("431"):
                return json.loads(frame[3:])[0]
            if frame.startswith("461-1"):  # a binary ack: its attachment comes next
                return typed_args([*json.loads(frame[5:])[:-1], self.ws.recv()])[0]

    def read(self):
        frame = self.ws.recv()
        if isinstance(frame, bytes):  # the typed arrays of the binary event just read
            event, payload = typed_args([*json.loads(self.header)[:-1], frame])
            self.events.append((event, payload))
        elif frame == "2":  # the server's ping
            self.ws.send("3")
        elif frame.startswith("42"):
            event, payload = json.loads(frame[2:])
            self.events.append((event, payload))
        elif frame.startswith("451-"):  # a binary event: its one attachment comes next
            self.header = frame[4:]
        return frame

    def read_until(self, done, timeout=60):
        deadline = time.monotonic() + timeout
        while not done(self.events):
            assert time.monotonic() < deadline, "the awaited packet did not come"
            self.read()


def test_a_slow_follower_skips_superseded_records_and_gets_the_final_state(server, client):  # noqa: F811
    manager = server.socketio.server.manager
    owner, fast = client(), client()
    code = create(owner)
    join(fast, code)
    slow = SlowFollower(server)
    assert "error" not in slow.call("room_join", {"code": code})
    eio_sid = manager.eio_sid_from_sid(slow.sid, "/")
    skipped_before = manager.skipped

    # the slow follower reads nothing while the owner runs; the queue on its connection
    # is watched all along
    longest = [0, 0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            n, size = manager.waiting(eio_sid)
            longest[0], longest[1] = max(longest[0], n), max(longest[1], size)
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    run_ids, sent, biggest = [], 0, 0
    try:
        for seed in range(RUNS):
            # 16 x 16 values a node: typed, a run's records still fill the queue past the mark
            run_id, _, _ = owner.run_to_end(wide_graph(1000, size=16, seed=seed), "backward")
            run_ids.append(run_id)
            packets = owner.packets(run_id, "trace")
            sent += len(packets)
            biggest = max([biggest, *(len(json.dumps(p)) for p in packets)])
    finally:
        stop.set()
        watcher.join()
    assert manager.skipped > skipped_before, "the follower never fell behind: no test"
    # bounded: the mark, and the one packet that crossed it
    assert longest[0] <= BEHIND + 2, longest
    assert longest[1] <= BEHIND_BYTES + 1.1 * biggest, (longest, biggest)

    # it reads again: the latest state, the last run with its end, comes by itself
    last = run_ids[-1]

    def ended(evs):
        for event, p in evs:
            if event == "run_finished" and p["run_id"] == last:
                return True
            if event == "room_catch_up" and (p.get("run_finished") or {}).get("run_id") == last:
                return True
        return False

    slow.read_until(ended)
    fast.wait_finished(last)
    want = fast.raw_records(last)
    records, finished = [], None
    for event, payload in slow.events:
        if event == "run_started" and payload["run_id"] == last:
            records = []
        elif event == "trace" and payload["run_id"] == last:
            records += payload["records"]
        elif event == "room_catch_up" and (payload.get("run_started") or {}).get("run_id") == last:
            records, finished = list(payload["records"]), payload["run_finished"]
        elif event == "run_finished" and payload["run_id"] == last:
            finished = payload
    assert finished is not None and finished["status"] == "ok"
    assert records == want
    got = sum(1 for e, _ in slow.events if e == "trace")
    assert got < sent, (got, sent)
    # the runs it skipped whole are not sent after the state: the latest won
    catch_ups = [p for e, p in slow.events if e == "room_catch_up"]
    assert catch_ups and catch_ups[-1]["run_started"]["run_id"] == last
    assert manager.waiting(eio_sid)[0] <= 1
    slow.ws.close()


def test_a_follower_that_keeps_up_is_sent_every_packet(server, client):  # noqa: F811
    """Below the mark nothing is skipped: every trace packet reaches a reading follower."""
    owner, fast = client(), client()
    code = create(owner)
    join(fast, code)
    manager = server.socketio.server.manager
    before = manager.skipped
    run_id, _, _ = owner.run_to_end(wide_graph(200), "backward")
    fast.wait_finished(run_id)
    assert fast.raw_records(run_id) == owner.raw_records(run_id)
    assert len(fast.packets(run_id, "trace")) == len(owner.packets(run_id, "trace"))
    assert manager.skipped == before


def test_a_followers_queue_counts_binary_frames_in_its_bytes():
    """Typed arrays go as binary frames (typed_wire.py): the mark in bytes counts them as it
    counts text, or a run of big previews would pass the mark unseen."""
    import queue

    from engineio import packet

    from backend.server.room_delivery import LatestWinsManager

    q = queue.Queue()
    for data in ('451-["trace",{"run_id":"r"},{"_placeholder":true,"num":0}]', bytes(1 << 20)):
        q.put(packet.Packet(packet.MESSAGE, data))
    manager = LatestWinsManager()
    manager.server = SimpleNamespace(eio=SimpleNamespace(sockets={"e": SimpleNamespace(queue=q)}))
    n, size = manager.waiting("e")
    assert n == 2 and size > 1 << 20
    q.put(packet.Packet(packet.MESSAGE, bytes(BEHIND_BYTES)))
    assert manager._over("e")


class _Delivered(socketio.Manager):
    """Stands below the latest-wins delivery: records what would go to each follower."""

    def emit(self, event, data, namespace=None, room=None, skip_sid=None, **kw):
        self.sent.append((event, data, room, list(skip_sid or [])))


class _OneFollower(_LatestWins, _Delivered):
    """Latest wins for one follower `f` of `room:r`, whose queue length the test sets."""

    def __init__(self, state, reading=0.0):
        super().__init__()
        self.sent, self.queue_length = [], 0
        self.server = SimpleNamespace(eio=SimpleNamespace(sockets={"e": "the follower's"}))

        def catch_up(room, what):
            got = state[0]
            time.sleep(reading)  # (the registry's read: Redis is a round trip away)
            return got

        self.catch_up = catch_up

    def get_participants(self, namespace, room):
        yield from [("f", "e")] if room == "room:r" else []

    def waiting(self, eio_sid):
        return self.queue_length, 0

    def is_connected(self, sid, namespace):
        return True

    def to_follower(self):
        """The trace packets' seqs and the catch-ups' seqs the follower was sent, in order."""
        out = []
        for event, data, room, skip in self.sent:
            if event == "room_catch_up" and room == "f":
                out.append(("state", data["seq"]))
            elif room == "room:r" and "f" not in skip:
                assert SEQ not in data  # followers get the owner's packet as it was
                out.append((event, data["n"]))
        return out


def _packet(seq, run="a"):
    return {"run_id": run, "records": [], "n": seq, SEQ: seq}


def _state(seq, run="a"):
    return {"code": "r", "run_started": {"run_id": run}, "records": [], "seq": seq}


def test_a_state_ahead_of_the_packets_is_not_followed_by_the_packets_it_holds():
    """The room's state is written before its packets are handed on (and with Redis read from
    Redis while they travel): a follower caught up with a state that holds packets 1..3 while
    packet 1 is being delivered is sent the state, then 4 and on, never 2 and 3 again."""
    state = [_state(3)]
    m = _OneFollower(state)
    m.queue_length = BEHIND + 1
    m.emit("trace", _packet(0), "/", room="room:r")  # over the mark: skipped from here
    assert ("room:r", "f", "run") in m.behind
    m.queue_length = 0
    for seq in (1, 2, 3, 4, 5):
        m.emit("trace", _packet(seq), "/", room="room:r")
    assert m.to_follower() == [("state", 3), ("trace", 4), ("trace", 5)]
    # a new run is not covered by the old run's state
    m.emit("run_started", _packet(0, run="b"), "/", room="room:r")
    assert m.to_follower()[-1] == ("run_started", 0)
    assert not m.marks


def test_a_state_behind_the_packet_at_hand_is_followed_by_it():
    """With Redis a training's state is written through at intervals, so it can hold less
    than the packet that catches the follower up: that packet follows the state."""
    state = [_state(1)]
    m = _OneFollower(state)
    m.queue_length = BEHIND + 1
    m.emit("trace", _packet(1), "/", room="room:r")
    m.queue_length = 0
    m.emit("trace", _packet(2), "/", room="room:r")
    assert m.to_follower() == [("state", 1), ("trace", 2)]


def test_the_sweeper_and_a_delivery_keep_one_order(monkeypatch):
    """The sweeper catches up a drained follower while the owner's packets keep coming: the
    packets handed on while it reads the state wait for the state, and those it holds are not
    sent after it."""
    monkeypatch.setattr(room_delivery, "SWEEP_SECONDS", 0.001)
    state = [_state(0)]
    m = _OneFollower(state, reading=0.05)
    reading = threading.Event()
    read = m.catch_up
    m.catch_up = lambda room, what: reading.set() or read(room, what)
    m.queue_length = BEHIND + 1
    m.emit("trace", _packet(0), "/", room="room:r")
    m.queue_length = 0  # drained: the sweeper catches it up
    assert reading.wait(5)
    for seq in range(1, 4):  # (the state read above already holds these)
        m.emit("trace", _packet(seq), "/", room="room:r")
        state[0] = _state(seq + 1)
    assert m.to_follower() == [("state", 0), ("trace", 1), ("trace", 2), ("trace", 3)]
