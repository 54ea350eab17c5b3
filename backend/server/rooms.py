"""Rooms: one client (the owner, say a teacher) drives a graph, the others (followers) watch.

A room has a six-character code (`A-Z2-9`), the owner's graph and lesson step, and its
followers, who are the members of a Flask-SocketIO room (`room:CODE`; the owner is not in it).
The owner's `room_update` and `room_step` go to the followers as `room_graph` and `room_step`;
its runs' packets (and any other per-client packet that is passed to `mirror`, such as a
training's `train_*` events) go to them too, the same payloads the owner gets. The room keeps
its owner's last run (its `run_started`, its records up to `max_records`, a pack counted as the
records it stands for, its `run_finished`) so that a late joiner sees what everyone sees.

Thread safety: runs and trainings call `mirror` from their worker threads while handlers join,
leave and close rooms. `self.lock` guards the tables (code -> room, owner sid -> room,
follower sid -> room); each room's `lock` orders what its followers are sent against joins and
closes, so a joiner's snapshot and the packets it is sent after joining neither overlap nor
leave a gap, and nothing goes out to a closed room. Locks are taken tables first, room second.
"""

import logging
import secrets
import string
import threading

from flask_socketio import join_room, leave_room

from ..graph import parse
from ..graph.document import invalid_text
from ..graph.records import count as record_count

CODE_ALPHABET = string.ascii_uppercase + "23456789"
CODE_LENGTH = 6
OWNER_ONLY = "only the room's owner can drive it"
NAMESPACE = "/"

log = logging.getLogger(__name__)


def _not_a_document(graph):
    """The error ack for a room graph that is not a graph document (followers' pages would load
    whatever the owner sent), else None. Only the format is checked: a graph being drawn may
    well have problems that keep it from running."""
    if graph is None:
        return None
    try:
        parse(graph)
    except Exception as exc:  # pydantic's ValidationError
        return {"error": f"invalid graph document: {invalid_text(exc)}"}
    return None


class _LastRun:
    """The owner's latest run, as its followers were sent it."""

    def __init__(self, started):
        self.run_id = started.get("run_id")
        self.started = started
        self.records = []
        self.kept = 0  # the records they stand for (see backend/graph/records.py)
        self.finished = None
        self.truncated = False


class Room:
    def __init__(self, code, owner, graph):
        self.code = code
        self.owner = owner
        self.name = f"room:{code}"  # the Socket.IO room of the followers
        self.graph = graph
        self.step = None
        self.followers = set()
        self.closed = False
        self.run = None  # _LastRun
        self.lock = threading.Lock()


class RoomManager:
    def __init__(self, socketio, max_records=10_000):
        self.socketio = socketio
        self.max_records = max_records  # records of the last run kept for late joiners
        self.rooms = {}  # code -> Room
        self.owned = {}  # owner sid -> Room
        self.following = {}  # follower sid -> Room
        self.lock = threading.Lock()

    # -- handlers (called from Socket.IO event handlers, so in a request context) -------------
    def create(self, sid, graph=None):
        """`room_create`: the sid's room (a new one, or the one it owns already)."""
        refused = _not_a_document(graph)
        if refused:
            return refused
        self._stop_following(sid)
        with self.lock:
            room = self.owned.get(sid)
            if room is None:
                code = _new_code()
                while code in self.rooms:
                    code = _new_code()
                room = self.rooms[code] = self.owned[sid] = Room(code, sid, graph)
                return {"code": code}
        if graph is not None:
            self.update(sid, room.code, graph)
        return {"code": room.code}

    def join(self, sid, code):
        """`room_join`: follow the room; the ack has its graph, step and last run."""
        with self.lock:
            room = self.rooms.get(code)
            if room is None:
                return {"error": f"no room {code}"}
            if room.owner == sid:
                return {"error": f"you own room {code}"}
            mine = self.owned.get(sid)
            if mine is not None:
                return {"error": f"you own room {mine.code}; leave it before joining another"}
            before = self.following.get(sid)
        if before is not None and before is not room:
            self._stop_following(sid)
        with self.lock:
            if self.rooms.get(code) is not room:  # closed meanwhile
                return {"error": f"no room {code}"}
            self.following[sid] = room
        with room.lock:
            if room.closed:
                with self.lock:
                    if self.following.get(sid) is room:
                        del self.following[sid]
                return {"error": f"no room {code}"}
            room.followers.add(sid)
            join_room(room.name, sid=sid, namespace=NAMESPACE)
            run = room.run
            ack = {
                "code": code,
                "graph": room.graph,
                "step": room.step,
                "run_started": run.started if run else None,
                "records": list(run.records) if run else [],
                "run_finished": run.finished if run else None,
            }
            if run is not None and run.truncated:
                ack["records_truncated"] = True
            return ack

    def leave(self, sid, code):
        """`room_leave`: a follower stops following; the owner closes the room."""
        with self.lock:
            room = self.rooms.get(code)
            if room is None:
                return {"error": f"no room {code}"}
            if room.owner != sid and self.following.get(sid) is not room:
                return {"error": f"you are not in room {code}"}
        if room.owner == sid:
            self._close(room)
        else:
            self._stop_following(sid)
        return {"ok": True}

    def update(self, sid, code, graph):
        """`room_update` (owner only): followers get `room_graph`."""
        refused = _not_a_document(graph)
        if refused:
            return refused
        return self._drive(sid, code, "graph", graph, "room_graph", {"code": code, "graph": graph})

    def step(self, sid, code, index):
        """`room_step` (owner only): followers get `room_step`."""
        return self._drive(sid, code, "step", index, "room_step", {"code": code, "index": index})

    def _drive(self, sid, code, field, value, event, payload):
        """The owner sets the room's `field` (kept for late joiners) and followers get `event`."""
        room, err = self._driven(sid, code)
        if err:
            return err
        with room.lock:
            if room.closed:
                return {"error": f"no room {code}"}
            setattr(room, field, value)
            self._emit(room, event, payload)
        return {"ok": True}

    def disconnect(self, sid):
        """The client went away: close the room it owns; stop it following one."""
        with self.lock:
            owned = self.owned.get(sid)
        if owned is not None:
            self._close(owned)
        self._stop_following(sid, connected=False)

    # -- the hook for per-client packets (any thread) ------------------------------------------
    def mirror(self, sid, event, payload):
        """Copy a packet that was just sent to client `sid` to the followers of the room it owns,
        if it owns one. `run_started`, `trace` and `run_finished` are also remembered (the last
        run only) for later joiners. Never raises: a run or training must not fail for this."""
        room = self.owned.get(sid)  # (one dict read; the tables' lock is not needed for it)
        if room is None:
            return
        try:
            with room.lock:
                if room.closed:
                    return
                self._remember(room, event, payload)
                self._emit(room, event, payload)
        except Exception:  # a bug of ours: keep the run going
            log.exception("mirroring %s to room %s", event, room.code)

    # -- internals -----------------------------------------------------------------------------
    def _remember(self, room, event, payload):
        if event == "run_started":
            room.run = _LastRun(payload)
            return
        run = room.run
        if run is None or payload.get("run_id") != run.run_id:
            return  # another run's (say a cancelled one's) late packet, or not a run's
        if event == "trace":
            for rec in payload.get("records", ()):
                # a pack weighs the records it stands for, a summaries table one
                weight = max(1, record_count(rec))
                if run.truncated or run.kept + weight > self.max_records:
                    run.truncated = True
                    break
                run.records.append(rec)
                run.kept += weight
        elif event == "run_finished":
            run.finished = payload

    def _emit(self, room, event, payload):
        if room.followers:
            self.socketio.emit(event, payload, to=room.name, namespace=NAMESPACE)

    def _driven(self, sid, code):
        with self.lock:
            room = self.rooms.get(code)
        if room is None:
            return None, {"error": f"no room {code}"}
        if room.owner != sid:
            return None, {"error": OWNER_ONLY}
        return room, None

    def _stop_following(self, sid, connected=True):
        with self.lock:
            room = self.following.pop(sid, None)
        if room is None:
            return
        with room.lock:
            room.followers.discard(sid)
            if connected and not room.closed:
                leave_room(room.name, sid=sid, namespace=NAMESPACE)

    def _close(self, room):
        with self.lock:
            if self.rooms.get(room.code) is room:
                del self.rooms[room.code]
            if self.owned.get(room.owner) is room:
                del self.owned[room.owner]
        with room.lock:
            if room.closed:
                return
            room.closed = True
            self._emit(room, "room_closed", {"code": room.code})
            followers, room.followers = room.followers, set()
            room.run = None
            self.socketio.close_room(room.name, namespace=NAMESPACE)
        with self.lock:  # (a join that came after `closed` was set cleans up after itself)
            for sid in followers:
                if self.following.get(sid) is room:
                    del self.following[sid]


def _new_code():
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
