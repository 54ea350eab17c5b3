"""Latest wins for a room's followers that fall behind (issue 36).

A room's packets go to every follower through one encoding (rooms.py `_emit`), and each
follower's connection has a queue of packets waiting to be written to it. A follower that
reads slower than the owner's run or training produces (a phone on a weak network, a busy
laptop) would see its queue grow without bound, and everything it is shown later and later.
Runs' records and trainings' progress are superseded by the room's state, which the registry
keeps anyway (for joiners): so a follower whose queue holds more than BEHIND packets
(or BEHIND_BYTES) is sent none of that run's or training's packets (its start, records,
progress, end) until its queue has drained; then it is sent the state once, as
`room_catch_up` (what a joiner's ack has: the run's records so far and its end, or the
training so far), the latest state at that moment, whatever it skipped. A sweeper checks
skipped followers every SWEEP_SECONDS, so one skipped at a run's end gets the end without
waiting for another packet. Its queue stays bounded (the mark and one state); it never
misses the end.

The state can be ahead of the packets still on their way: the owner's process folds a packet
into the state before handing it on, and with Redis the state is read from Redis while the
packets come through the message queue. So rooms.py numbers each packet of a run or training
(`seq`) and the state says the last number it holds; a follower caught up with a state is not
sent the packets that state holds (none twice, none before the state it belongs after), and a
room's deliveries and catch-ups take one lock, so each follower sees them in one order.

This is done where packets are handed to connections, in the Socket.IO client manager of the
process the follower is connected to (with Redis, each process does it for its own
followers): `_LatestWins.emit` is the local delivery, below the message queue's fan-out.
"""

import logging
import threading
import time

import socketio

from .typed_wire import QueueJson

log = logging.getLogger(__name__)

BEHIND = 64  # packets waiting on a follower's connection before it is skipped...
BEHIND_BYTES = 2 << 20  # ...or this many bytes (a trace packet of a big graph is a megabyte)
SWEEP_SECONDS = 0.2  # how often a skipped follower's connection is checked for having drained
ORDER_STRIPES = 64  # locks that order each room's deliveries, a room hashed to one
ROOM_PREFIX = "room:"
SEQ = "$seq"  # a room packet's number in its run or training, for this delivery only
# a room's packets that the room's state supersedes, by the state that has them
STATE_OF = {
    "run_started": "run",
    "trace": "run",
    "run_finished": "run",
    "train_started": "training",
    "train_progress": "training",
    "train_snapshot": "training",
    "train_finished": "training",
}


class _LatestWins(socketio.Manager):
    """The local delivery of room packets with latest-wins for slow followers. `catch_up`
    (set by rooms.py) gives the state to send: catch_up(room name, "run" | "training") ->
    payload or None."""

    catch_up = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # (room, sid, "run" | "training") -> (namespace, eio_sid): skipped until caught up
        self.behind = {}
        # (room, sid, "run" | "training") -> (run or training id, seq): what the state the
        # follower was last caught up with holds; packets up to it are not sent again
        self.marks = {}
        self.behind_lock = threading.Lock()
        # A room's deliveries and catch-ups, one at a time: a catch-up's state and the
        # packets around it are then in one order for each follower (striped by room name).
        self.order = [threading.Lock() for _ in range(ORDER_STRIPES)]
        self.sweeping = False
        self.skipped = 0  # packets not sent to followers that were behind
        self.caught_up = 0  # room_catch_up packets sent

    def waiting(self, eio_sid):
        """(packets, bytes) waiting on the connection ((0, 0) when it is gone)."""
        sock = self.server.eio.sockets.get(eio_sid)
        if sock is None:
            return 0, 0
        q = sock.queue
        with q.mutex:  # (a snapshot of the deque under the queue's own lock)
            pending = list(q.queue)
        # text frames and binary attachments (typed arrays, typed_wire.py) alike
        size = sum(
            len(p.data) for p in pending if p is not None and isinstance(p.data, (str, bytes))
        )
        return len(pending), size

    def _over(self, eio_sid):
        n, size = self.waiting(eio_sid)
        return n > BEHIND or size > BEHIND_BYTES

    def _drained(self, eio_sid):
        n, size = self.waiting(eio_sid)
        return n <= BEHIND // 8 and size <= BEHIND_BYTES // 8

    def _order(self, room):
        return self.order[hash(room) % ORDER_STRIPES]

    def emit(self, event, data, namespace=None, room=None, skip_sid=None, callback=None, **kw):
        room = kw.pop("to", None) or room
        what = STATE_OF.get(event)
        if what is None or callback or not (isinstance(room, str) and room.startswith(ROOM_PREFIX)):
            return super().emit(
                event, data, namespace, room=room, skip_sid=skip_sid, callback=callback, **kw
            )
        namespace = namespace or "/"
        skip = list(skip_sid) if isinstance(skip_sid, list) else [skip_sid]
        place = _place(what, data)
        if place is not None:  # followers get the owner's packet as the owner got it
            data = {k: v for k, v in data.items() if k != SEQ}
        with self._order(room):
            late = []
            with self.behind_lock:
                for sid, eio_sid in self.get_participants(namespace, room):
                    key = (room, sid, what)
                    if key in self.behind:
                        if self._drained(eio_sid):
                            del self.behind[key]
                            late.append(sid)
                        else:
                            skip.append(sid)  # this packet's content is in the state it will get
                            self.skipped += 1
                    elif _covered(self.marks.get(key), place):
                        skip.append(sid)  # sent already, in the state it was caught up with
                    elif self._over(eio_sid):
                        self.behind[key] = (namespace, eio_sid)
                        skip.append(sid)
                        self.skipped += 1
                        self._sweep_soon()
                    elif place is not None:
                        self.marks.pop(key, None)  # (newer than its state: the mark is done)
            for sid in late:
                mark = self._send_catch_up(sid, namespace, room, what)
                if _covered(mark, place):
                    skip.append(sid)
                    self.skipped += 1
            return super().emit(event, data, namespace, room=room, skip_sid=skip, **kw)

    def _sweep_soon(self):
        """A follower skipped at a run's end gets the state once it has drained, even if no
        packet comes after (lock held)."""
        if not self.sweeping:
            self.sweeping = True
            threading.Thread(target=self._sweep, name="rooms-latest-wins", daemon=True).start()

    def _sweep(self):
        while True:
            time.sleep(SWEEP_SECONDS)
            with self.behind_lock:
                ready = [
                    (key, ns, eio_sid)
                    for key, (ns, eio_sid) in self.behind.items()
                    if self.server.eio.sockets.get(eio_sid) is None or self._drained(eio_sid)
                ]
            for key, ns, eio_sid in ready:
                room, sid, what = key
                with self._order(room):
                    with self.behind_lock:  # (an emit may have caught it up meanwhile)
                        if self.behind.get(key) != (ns, eio_sid):
                            continue
                        del self.behind[key]
                    if self.is_connected(sid, ns):
                        self._send_catch_up(sid, ns, room, what)
            with self.behind_lock:
                if not self.behind:
                    self.sweeping = False
                    return

    def _send_catch_up(self, sid, namespace, room, what):
        """Send the follower the room's state (the room's order held), and remember what it
        holds; returns that mark (None when nothing was sent)."""
        try:
            payload = self.catch_up(room, what) if self.catch_up else None
        except Exception:  # Redis away, a bug: the follower waits for the next packet
            log.exception("catching up a follower of %s", room)
            return None
        if payload is None:
            return None
        self.caught_up += 1
        # (this process's own delivery: the follower is connected here)
        _LatestWins.emit(self, "room_catch_up", payload, namespace, room=sid)
        mark = _state_place(what, payload)
        with self.behind_lock:
            if mark is None:
                self.marks.pop((room, sid, what), None)
            else:
                self.marks[(room, sid, what)] = mark
        return mark

    def disconnect(self, sid, namespace, **kwargs):
        with self.behind_lock:
            for table in (self.behind, self.marks):
                for key in [k for k in table if k[1] == sid]:
                    del table[key]
        return super().disconnect(sid, namespace, **kwargs)


def _place(what, packet):
    """(run or training id, seq) of a room packet; None for one without a place (rooms.py
    numbers the packets it keeps in the room's state)."""
    if not isinstance(packet, dict) or not isinstance(packet.get(SEQ), int):
        return None
    return packet.get("run_id" if what == "run" else "train_id"), packet[SEQ]


def _state_place(what, state):
    """(id, seq) of the last packet a room_catch_up's state holds."""
    if what == "run":
        started = state.get("run_started") or {}
        ident, seq = started.get("run_id"), state.get("seq")
    else:
        training = state.get("training") or {}
        ident, seq = training.get("train_id"), training.get("seq")
    return (ident, seq) if ident is not None and isinstance(seq, int) else None


def _covered(mark, place):
    """Whether a packet at `place` is in the state of `mark`: same run or training, not after."""
    return mark is not None and place is not None and place[0] == mark[0] and place[1] <= mark[1]


class LatestWinsManager(_LatestWins):
    """One process."""


class LatestWinsRedisManager(socketio.RedisManager, _LatestWins):
    """Several processes on Redis: the fan-out through Redis, then each process's delivery."""

    def set_server(self, server):
        super().set_server(server)
        self.json = QueueJson  # arrays stay arrays across processes (typed_wire.py)


def client_manager(message_queue):
    """The Socket.IO client manager for `--message-queue` (None: one process)."""
    if message_queue:
        return LatestWinsRedisManager(message_queue, channel="flask-socketio")
    return LatestWinsManager()
