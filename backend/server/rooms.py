"""Rooms: one client (the owner, say a teacher) drives a graph, the others (followers) watch.

A room has a six-character code (`A-Z2-9`), the owner's graph and lesson step, and its
followers, who are the members of a Flask-SocketIO room (`room:CODE`; the owner is not in it).
What every process must see of a room (owner, secret, graph, step, last run) is in the room
registry (room_registry.py: this process's memory, or Redis with --message-queue); this
manager keeps who of this process's clients owns or follows what.

The owner gets a secret with its code. A connection that drops (a reload, a network hiccup)
does not close the room at once: it waits `grace` seconds for `room_resume {code, secret}`,
from this process or any other sharing the registry; a deliberate disconnect or `room_leave`
closes it at once.
The owner's `room_update` and `room_step` go to the followers as `room_graph` and `room_step`;
its runs' packets (and any other per-client packet that is passed to `mirror`, such as a
training's `train_*` events) go to them too, the same payloads the owner gets. The room keeps
its owner's last run (its `run_started`, its records up to `max_records`, a pack counted as the
records it stands for, its `run_finished`) and its last training (room_training.py: the loss
points so far, downsampled, the last snapshot, how it ended) so that a late joiner sees what
everyone sees.

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
import time

from flask_socketio import join_room, leave_room

from ..graph import parse
from ..graph.document.format import invalid_text
from ..graph.running.records import count as record_count
from . import room_quiz
from .auth import key_hash
from .room_delivery import SEQ
from .room_registry import MemoryRegistry
from .room_training import TrainingRecord

CODE_ALPHABET = string.ascii_uppercase + "23456789"
TRAINING_WRITE_SECONDS = 0.25
REREGISTER_SECONDS = 2.0  # how often an owner's process checks that Redis still has its rooms
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
    if _holds_placeholder(graph):
        # socket.io's page reads such an object in a binary packet (one with typed arrays,
        # typed_wire.py) as an attachment: the followers' pages would fail to read the packet
        return {
            "error": "invalid graph document: it holds an object with the key "
            "'_placeholder', which Socket.IO reserves for binary attachments"
        }
    return None


def _holds_placeholder(value):
    """Whether any object in `value` (decoded JSON, already bounded by the message's size) has
    the key `_placeholder`."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "_placeholder" in x:
                return True
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


class _LastRun:
    """The owner's latest run, as far as this (the owner's) process counts it."""

    def __init__(self, started):
        self.run_id = started.get("run_id")
        self.kept = 0  # the records they stand for (see backend/graph/running/records.py)
        self.truncated = False
        self.seq = 0  # the run's packets so far after its start (room_delivery.py's marks)


class Room:
    """This process's side of a room: the owner's sid when the owner is connected here, the
    followers connected here, and the lock that orders their snapshots against packets."""

    def __init__(self, code, owner, secret=None):
        self.code = code
        self.owner = owner
        self.secret = secret
        # the owner's graph and step as this (the owner's) process last set them: what it
        # registers the room with again if Redis forgets it (RoomManager.reregister)
        self.graph = None
        self.step = None
        self.lesson = None  # the lesson step shown, and the training pace ({steps_per_second})
        self.pace = None
        self.selected = None  # the owner's selected edge
        self.quiz = None  # the room's question (room_quiz.py), the truth included
        self.name = f"room:{code}"  # the Socket.IO room of the followers
        self.followers = set()
        self.closed = False
        self.run = None  # _LastRun
        self.training = None  # room_training.TrainingRecord of the owner's last training
        self.training_written = 0.0  # time.monotonic() of its last write to the registry
        self.timer = None  # the grace timer while the owner is away
        self.lock = threading.Lock()


class RoomManager:
    def __init__(
        self, socketio, max_records=10_000, registry=None, grace=60.0, claims=None, archive=None
    ):
        self.socketio = socketio
        self.max_records = max_records  # records of the last run kept for late joiners
        self.registry = registry or MemoryRegistry()
        self.claims = claims  # room_claims.RoomClaims: who may take a forgotten room back
        self.archive = archive  # room_archive.RoomArchive: what a forgotten room showed
        self.grace = grace
        self.rooms = {}  # code -> Room, for rooms owned or followed from this process
        self.owned = {}  # owner sid -> Room
        self.following = {}  # follower sid -> Room
        self.lock = threading.Lock()
        manager = getattr(getattr(socketio, "server", None), "manager", None)
        if manager is not None and hasattr(manager, "catch_up"):  # room_delivery.py
            manager.catch_up = self._catch_up
        if self.registry.shared:  # Redis may be flushed or restarted empty under live rooms
            threading.Thread(
                target=self._keep_registered, name="rooms-reregister", daemon=True
            ).start()

    # -- handlers (called from Socket.IO event handlers, so in a request context) -------------
    def create(self, sid, graph=None):
        """`room_create`: the sid's room (a new one, or the one it owns already), and the
        owner's secret for `room_resume`."""
        refused = _not_a_document(graph)
        if refused:
            return refused
        self._stop_following(sid)
        with self.lock:
            room = self.owned.get(sid)
            if room is None:
                secret = secrets.token_urlsafe(16)
                code = self._free_code(sid, key_hash(secret), graph)
                room = self.rooms[code] = self.owned[sid] = Room(code, sid, secret)
                room.graph = graph
                self._archive(code, "graph", graph)
                return {"code": code, "secret": secret}
        if graph is not None:
            self.update(sid, room.code, graph)
        return {"code": room.code, "secret": room.secret}

    def resume(self, sid, code, secret):
        """`room_resume`: the owner, back after a reload or a drop (on this process or
        another), takes its room again with the secret `room_create` gave it."""
        with self.lock:
            mine = self.owned.get(sid)
            if mine is not None and mine.code == code:
                return {"code": code, "secret": mine.secret}
            if mine is not None:
                return {"error": f"you own room {mine.code}; leave it before taking another"}
        taken, old = self.registry.take_over(code, key_hash(secret), sid)
        restored = False
        if not taken and self.registry.owner(code) is None and self._claimed(code, secret):
            # no such room: the server restarted (rooms in memory) or Redis forgot it. The
            # claim on disk says the secret is the owner's, so the owner opens it again: its
            # students rejoin the same code by themselves. Without the claim's secret nobody
            # can: the code is on the projector for everyone to read.
            with self.lock:
                free = code not in self.rooms
            taken = free and self.registry.claim(code, sid, key_hash(secret), None)
            old, restored = None, taken
            if taken:
                self._restore(code)
        if not taken:
            return {"error": f"no room {code} with that secret"}
        self._stop_following(sid)
        with self.lock:
            room = self.rooms.get(code)
            if room is None or room.closed:
                room = self.rooms[code] = Room(code, sid, secret)
            if room.owner is not None and self.owned.get(room.owner) is room:
                del self.owned[room.owner]
            room.owner, room.secret = sid, secret
            self.owned[sid] = room
            if room.timer is not None:
                room.timer.cancel()
                room.timer = None
        if old and old != sid:
            # the previous connection, if it is still there (another tab, or a drop the
            # server has not noticed yet), on whichever process: it leads no more
            self.socketio.server.disconnect(old, namespace=NAMESPACE)
        snap = self.registry.snapshot(code) or {}
        return {
            "code": code,
            "secret": secret,
            "graph": snap.get("graph"),
            "step": snap.get("step"),
            "restored": restored,
        }

    def _free_code(self, sid, secret_hash, graph):
        """A new code, claimed on disk and in the registry (tables locked)."""
        while True:
            code = _new_code()
            if code in self.rooms:
                continue
            if self.claims is not None and not self.claims.add(code, secret_hash):
                continue  # a room that may still come back after a restart holds it
            if self.registry.claim(code, sid, secret_hash, graph):
                return code
            if self.claims is not None:
                self.claims.remove(code)  # (taken in the registry: not ours to keep)

    def _restore(self, code):
        """Put what the archive kept of room `code` back into the registry: its students,
        rejoining, see the last run and where the lesson was, not an empty canvas."""
        if self.archive is None:
            return
        kept = self.archive.load(code)
        for field in ("graph", "step", "lesson", "pace", "selected", "quiz", "training"):
            if field in kept:
                self.registry.set(code, field, kept[field])
        run = kept.get("run")
        if run and run.get("run_started"):
            self.registry.run_started(code, run["run_started"])
            self.registry.run_records(code, run["records"], run["truncated"])
            if run.get("run_finished"):
                self.registry.run_finished(code, run["run_finished"])

    def _archive(self, code, field, value):
        if self.archive is not None:
            self.archive.put(code, field, value)

    def _claimed(self, code, secret):
        return self.claims is not None and self.claims.holder(code) == key_hash(secret)

    def join(self, sid, code):
        """`room_join`: follow the room; the ack has its graph, step and last run."""
        owner = self.registry.owner(code)
        if owner is None:
            return {"error": f"no room {code}"}
        if owner == sid:
            return {"error": f"you own room {code}"}
        with self.lock:
            mine = self.owned.get(sid)
            if mine is not None:
                return {"error": f"you own room {mine.code}; leave it before joining another"}
            before = self.following.get(sid)
        if before is not None and before.code != code:
            self._stop_following(sid)
        with self.lock:
            room = self.rooms.get(code)
            if room is None or room.closed:
                room = self.rooms[code] = Room(code, None)  # followed here, owned elsewhere
            self.following[sid] = room
        with room.lock:
            snap = None if room.closed else self.registry.snapshot(code)
            if snap is None:  # closed meanwhile
                with self.lock:
                    if self.following.get(sid) is room:
                        del self.following[sid]
                    self._forget_if_unused(room)
                return {"error": f"no room {code}"}
            room.followers.add(sid)
            join_room(room.name, sid=sid, namespace=NAMESPACE)
            ack = {
                "code": code,
                "graph": snap["graph"],
                "step": snap["step"],
                "lesson": snap.get("lesson"),
                "pace": snap.get("pace"),
                "run_started": snap["run_started"],
                "records": snap["records"],
                "run_finished": snap["run_finished"] if snap["run_started"] else None,
                # the owner's process has the training as it is now; another process has
                # the registry's copy, at most TRAINING_WRITE_SECONDS old
                "training": room.training.to_json() if room.training else snap.get("training"),
                "selected": snap.get("selected"),
                "quiz": self._quiz_view(code, snap.get("quiz")),
            }
            if snap["truncated"]:
                ack["records_truncated"] = True
            return ack

    def leave(self, sid, code):
        """`room_leave`: a follower stops following; the owner closes the room."""
        if self.registry.owner(code) is None:
            return {"error": f"no room {code}"}
        with self.lock:
            owned = self.owned.get(sid)
            following = self.following.get(sid)
        if owned is not None and owned.code == code:
            self._close(owned)
        elif following is not None and following.code == code:
            self._stop_following(sid)
        else:
            return {"error": f"you are not in room {code}"}
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

    def lesson(self, sid, code, index):
        """`room_lesson` (owner only): the lesson step the owner shows; followers get
        `room_lesson`, and a joiner the step in its ack."""
        return self._drive(
            sid, code, "lesson", index, "room_lesson", {"code": code, "index": index}
        )

    def pace(self, sid, code, steps_per_second):
        """`room_pace` (owner only): the owner's training pace (None: full speed), so that
        followers show the pace the class watches; kept for joiners."""
        value = {"steps_per_second": steps_per_second}
        return self._drive(sid, code, "pace", value, "room_pace", {"code": code, **value})

    def select(self, sid, code, edge):
        """`room_select` (owner only): the edge the owner has selected (None: none), which
        followers highlight and explain; kept for joiners."""
        return self._drive(sid, code, "selected", edge, "room_select", {"code": code, "edge": edge})

    # -- predict, then reveal (room_quiz.py) ---------------------------------------------------
    def ask(self, sid, code, target, question, names, truth, mistakes):
        """`room_ask` (owner only): a new question; followers get `room_quiz` without the
        true value, which stays here until `reveal`."""
        try:
            quiz = room_quiz.new_round(target, question, names, truth, mistakes)
        except room_quiz.QuizError as exc:
            return {"error": str(exc)}
        reply = self._drive(
            sid, code, "quiz", quiz, "room_quiz", {"code": code, "quiz": room_quiz.public(quiz)}
        )
        return {"ok": True, "quiz_id": quiz["quiz_id"]} if "ok" in reply else reply

    def answer(self, sid, code, quiz_id, text, name=None, token=None):
        """`room_answer` (a follower): its answer to the open question, kept in the registry;
        the owner, on whichever process, gets the new spread as `room_answers`. Answering
        again (with the token the first answer got) replaces the answer."""
        with self.lock:
            room = self.following.get(sid)
        if room is None or room.code != code:
            return {"error": f"you do not follow room {code}"}
        quiz = self.registry.get(code, "quiz")
        if quiz is None or quiz["quiz_id"] != quiz_id:
            return {"error": "that question is over: your teacher asked another or closed it"}
        if quiz["status"] != "open":
            return {"error": "the answer has been revealed: answers are closed"}
        if quiz["names"] and not (name or "").strip():
            return {"error": "your teacher asked for names: type your name with the answer"}
        if token is not None and self.registry.get_answer(code, quiz_id, token) is None:
            token = None  # not an answer of this question: a new one
        try:
            answer = room_quiz.new_answer(quiz, text, (name or "").strip()[:60], token)
        except room_quiz.AnswerError as exc:
            return {"error": f"answer: {exc}"}
        self.registry.put_answer(code, quiz_id, answer)
        owner = self.registry.owner(code)
        if owner is not None:
            summary = room_quiz.spread(quiz, self.registry.quiz_answers(code, quiz_id))
            payload = {"code": code, **summary}
            self.socketio.emit("room_answers", payload, to=owner, namespace=NAMESPACE)
        return {"ok": True, "token": answer["token"], "answer": answer["shown"]}

    def reveal(self, sid, code, quiz_id):
        """`room_reveal` (owner only): everyone gets the value, the class's spread and each
        answer's verdict (by token) as `room_quiz`; answers close."""
        room, err = self._driven(sid, code)
        if err:
            return err
        quiz = self.registry.get(code, "quiz")
        if quiz is None or quiz["quiz_id"] != quiz_id:
            return {"error": "no such question open in this room"}
        quiz = {**quiz, "status": "revealed"}
        with room.lock:
            if room.closed:
                return {"error": f"no room {code}"}
            self.registry.set(code, "quiz", quiz)
            view = self._quiz_view(code, quiz)
            self._emit(room, "room_quiz", {"code": code, "quiz": view})
        return {"ok": True, "spread": view["spread"], "quiz": view}

    def end_quiz(self, sid, code):
        """`room_quiz_end` (owner only): the question goes away on every page."""
        return self._drive(sid, code, "quiz", None, "room_quiz", {"code": code, "quiz": None})

    def quiz_csv(self, sid, code):
        """`room_quiz_csv` (owner only): the current question's answers as CSV text."""
        _, err = self._driven(sid, code)
        if err:
            return err
        quiz = self.registry.get(code, "quiz")
        if quiz is None:
            return {"error": "no question in this room"}
        answers = self.registry.quiz_answers(code, quiz["quiz_id"])
        return {"csv": room_quiz.answers_csv(quiz, answers), "answered": len(answers)}

    def quiz_spread(self, sid, code):
        """`room_quiz_spread` (owner only): the current question and its spread, for an owner
        page that reloaded or came back after a restart."""
        _, err = self._driven(sid, code)
        if err:
            return err
        quiz = self.registry.get(code, "quiz")
        if quiz is None:
            return {"quiz": None}
        answers = self.registry.quiz_answers(code, quiz["quiz_id"])
        return {"quiz": self._quiz_view(code, quiz), "spread": room_quiz.spread(quiz, answers)}

    def _quiz_view(self, code, quiz):
        if quiz is None:
            return None
        answers = ()
        if quiz["status"] == "revealed":  # (verdicts and the spread go out only then)
            answers = self.registry.quiz_answers(code, quiz["quiz_id"])
        return room_quiz.public(quiz, answers)

    def _drive(self, sid, code, field, value, event, payload):
        """The owner sets the room's `field` (kept for late joiners) and followers get `event`."""
        room, err = self._driven(sid, code)
        if err:
            return err
        with room.lock:
            if room.closed:
                return {"error": f"no room {code}"}
            setattr(room, field, value)
            self.registry.set(code, field, value)
            self._emit(room, event, payload)
        self._archive(code, field, value)
        return {"ok": True}

    def disconnect(self, sid, deliberate=False):
        """The client went away: a room it owns closes after `grace` seconds unless its owner
        resumes it (at once when `deliberate`); it stops following one. (A page that closes
        and one that reloads look the same to the server, so both get the grace.)"""
        with self.lock:
            owned = self.owned.pop(sid, None)
        if owned is not None:
            if self.registry.owner(owned.code) != sid:  # taken over elsewhere: nothing to close
                with self.lock:
                    owned.owner = None
                    self._forget_if_unused(owned)
            elif deliberate or self.grace <= 0:
                self._close(owned, sid)
            else:
                timer = threading.Timer(self.grace, self._close, args=(owned, sid))
                timer.daemon = True
                owned.timer = timer
                timer.start()
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
                seq = self._remember(room, event, payload)
                if seq is not None:  # its place in the state a follower may catch up from
                    payload = {**payload, SEQ: seq}
                self._emit(room, event, payload)
        except Exception:  # a bug of ours, or Redis gone: keep the run going
            log.exception("mirroring %s to room %s", event, room.code)

    def _catch_up(self, name, what):
        """The state a follower that fell behind is sent instead of the packets it skipped
        (room_delivery.py): the last run so far, or the training so far, as a joiner's ack
        has them. None when the room is gone."""
        code = name.removeprefix("room:")
        snap = self.registry.snapshot(code)
        if snap is None:
            return None
        if what == "training":
            room = self.rooms.get(code)
            local = room.training if room is not None and room.training else None
            return {"code": code, "training": local.to_json() if local else snap["training"]}
        payload = {
            "code": code,
            "run_started": snap["run_started"],
            "records": snap["records"],
            "run_finished": snap["run_finished"] if snap["run_started"] else None,
            "seq": snap["seq"],
        }
        if snap["truncated"]:
            payload["records_truncated"] = True
        return payload

    # -- a registry that forgot its rooms -------------------------------------------------------
    def reregister(self):
        """Put the rooms this process owns back into the registry where it has lost them (a
        Redis restarted empty, a FLUSHALL), with the graph and step the owner last set, so
        that their students can join again. Returns the codes registered again."""
        with self.lock:
            owned = [r for r in self.owned.values() if not r.closed]
        again = []
        for room in owned:
            with room.lock:
                if room.closed or self.registry.owner(room.code) is not None:
                    continue
                if self.registry.claim(room.code, room.owner, key_hash(room.secret), room.graph):
                    for field in ("step", "lesson", "pace", "selected", "quiz"):
                        if getattr(room, field) is not None:
                            self.registry.set(room.code, field, getattr(room, field))
                    again.append(room.code)
        if again:
            log.warning("the room registry had forgotten rooms %s: registered again", again)
        return again

    def _keep_registered(self):
        while True:
            time.sleep(REREGISTER_SECONDS)
            try:
                self.reregister()
            except Exception as exc:  # Redis still away: try again at the next tick
                log.debug("rooms not registered again yet: %s", exc)

    # -- internals -----------------------------------------------------------------------------
    def _remember(self, room, event, payload):
        """Fold an owner's packet into the room's state; returns the packet's number in its
        run or training (what the state holds up to), None for a packet it does not keep."""
        if event.startswith("train_"):
            return self._remember_training(room, event, payload)
        if event == "run_started":
            room.run = _LastRun(payload)
            self.registry.run_started(room.code, payload)
            return 0
        run = room.run
        if run is None or payload.get("run_id") != run.run_id:
            return None  # another run's (say a cancelled one's) late packet, or not a run's
        run.seq += 1
        if event == "trace":
            keep = []
            for rec in payload.get("records", ()):
                # a pack weighs the records it stands for, a summaries table one
                weight = max(1, record_count(rec))
                if run.truncated or run.kept + weight > self.max_records:
                    run.truncated = True
                    break
                keep.append(rec)
                run.kept += weight
            self.registry.run_records(room.code, keep, run.truncated, run.seq)
        elif event == "run_finished":
            self.registry.run_finished(room.code, payload, run.seq)
            if self.archive is not None:  # the run as the room has it, for after a restart
                snap = self.registry.snapshot(room.code) or {}
                keys = ("run_started", "records", "run_finished", "truncated")
                self.archive.put(room.code, "run", {k: snap.get(k) for k in keys})
        return run.seq

    def _remember_training(self, room, event, payload):
        """The owner's last training, bounded, in the registry for late joiners."""
        if event == "train_started":
            room.training = TrainingRecord(payload)
        elif room.training is None or not room.training.add(event, payload):
            return None  # an older training's late packet
        # Written through at most every TRAINING_WRITE_SECONDS: with Redis each write is the
        # whole record (up to ~20 KB), and a fast training sends hundreds of packets a second.
        # The start and the end are always written, so a joiner never sees a finished training
        # as running; between them it may miss the last fraction of a second of loss points.
        now = time.monotonic()
        final = event in ("train_started", "train_finished")
        if final or now - room.training_written >= TRAINING_WRITE_SECONDS:
            room.training_written = now
            self.registry.set(room.code, "training", room.training.to_json())
        if event == "train_finished":
            self._archive(room.code, "training", room.training.to_json())
        return room.training.seq

    def _emit(self, room, event, payload):
        # followers on other processes are reached through the message queue
        if room.followers or self.registry.shared:
            self.socketio.emit(event, payload, to=room.name, namespace=NAMESPACE)

    def _driven(self, sid, code):
        with self.lock:
            room = self.owned.get(sid)
        if room is not None and room.code == code:
            return room, None
        if self.registry.owner(code) is None:
            return None, {"error": f"no room {code}"}
        return None, {"error": OWNER_ONLY}

    def _stop_following(self, sid, connected=True):
        with self.lock:
            room = self.following.pop(sid, None)
        if room is None:
            return
        with room.lock:
            room.followers.discard(sid)
            if connected and not room.closed:
                leave_room(room.name, sid=sid, namespace=NAMESPACE)
        with self.lock:
            self._forget_if_unused(room)

    def _forget_if_unused(self, room):
        """Drop this process's record of a room it neither owns nor follows (tables locked)."""
        if room.owner is None and not room.followers and self.rooms.get(room.code) is room:
            del self.rooms[room.code]

    def _close(self, room, owner=None):
        """Close the room for everyone, if `owner` (default: the room's owner here) still
        owns it in the registry."""
        owner = owner or room.owner
        if not self.registry.remove(room.code, owner):
            return  # closed already, or the owner took it back (on this process or another)
        if self.claims is not None:
            self.claims.remove(room.code)
        if self.archive is not None:
            self.archive.remove(room.code)
        with self.lock:
            if self.rooms.get(room.code) is room:
                del self.rooms[room.code]
            if self.owned.get(owner) is room:
                del self.owned[owner]
        with room.lock:
            if room.timer is not None:
                room.timer.cancel()
            room.closed = True
            self.socketio.emit(
                "room_closed", {"code": room.code}, to=room.name, namespace=NAMESPACE
            )
            followers, room.followers = room.followers, set()
            room.run = room.training = None
            self.socketio.close_room(room.name, namespace=NAMESPACE)
        with self.lock:  # (a join that came after `closed` was set cleans up after itself)
            for sid in followers:
                if self.following.get(sid) is room:
                    del self.following[sid]


def _new_code():
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
