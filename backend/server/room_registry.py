"""Where rooms live: in this process (one process serves the classroom), or in Redis (several
processes share rooms through `--message-queue redis://...`). One small interface, two
implementations; rooms.py's RoomManager holds the per-process part (who of this process's
clients owns or follows what, the locks) and asks the registry for the shared part.

Shared per room: its owner (a Socket.IO sid, on whichever process), the SHA-256 of the owner's
secret (the teacher's page keeps the secret, to take the room back after a reload or from
another process), the graph and lesson step, and the owner's last run as its followers were
sent it (the `run_started` payload, records, `run_finished`, whether some were left out), and
the owner's last training as room_training.py folds it (bounded), the selected edge, and the
room's question (room_quiz.py) with its students' answers.

In Redis, a room is three keys (`wiregrad:room:CODE`, `...:run`, `...:records`) and one per
question for its answers (`...:answers:QUIZ_ID`, a hash token -> answer), that expire a day
after the room's last change, so a room whose every process died does not stay forever.
Compare-and-set (owner changes, removal) goes through WATCH/MULTI transactions.
"""

import threading

from . import fastjson

ROOM_TTL = 24 * 3600  # seconds a room's Redis keys outlive its last change


class MemoryRegistry:
    """Rooms of this process: a dict under a lock."""

    shared = False

    def __init__(self):
        self.rooms = {}  # code -> dict
        self.answers = {}  # code -> (quiz_id, {token: answer}) of the room's current question
        self.lock = threading.Lock()

    def claim(self, code, owner, secret_hash, graph):
        """Open room `code` for `owner`; False when the code is taken."""
        with self.lock:
            if code in self.rooms:
                return False
            self.rooms[code] = {
                "owner": owner,
                "secret": secret_hash,
                "graph": graph,
                "step": None,
                "lesson": None,
                "pace": None,
                "run_started": None,
                "records": [],
                "run_finished": None,
                "truncated": False,
                "seq": 0,
                "training": None,
                "selected": None,
                "quiz": None,
            }
            self.answers.pop(code, None)
            return True

    def owner(self, code):
        with self.lock:
            room = self.rooms.get(code)
            return None if room is None else room["owner"]

    def take_over(self, code, secret_hash, new_owner):
        """(True, the previous owner) when `secret_hash` is the room's, else (False, None)."""
        with self.lock:
            room = self.rooms.get(code)
            if room is None or room["secret"] != secret_hash:
                return False, None
            old, room["owner"] = room["owner"], new_owner
            return True, old

    def remove(self, code, owner):
        """Close the room if `owner` still owns it; True when it did."""
        with self.lock:
            room = self.rooms.get(code)
            if room is None or room["owner"] != owner:
                return False
            del self.rooms[code]
            self.answers.pop(code, None)
            return True

    def set(self, code, field, value):
        with self.lock:
            if code in self.rooms:
                self.rooms[code][field] = value

    def get(self, code, field):
        with self.lock:
            room = self.rooms.get(code)
            return None if room is None else room[field]

    def put_answer(self, code, quiz_id, answer):
        """Keep a student's answer (replacing the one with its token) to question `quiz_id`."""
        with self.lock:
            if code not in self.rooms:
                return
            kept = self.answers.get(code)
            if kept is None or kept[0] != quiz_id:
                kept = self.answers[code] = (quiz_id, {})
            kept[1][answer["token"]] = answer

    def get_answer(self, code, quiz_id, token):
        with self.lock:
            kept = self.answers.get(code)
            return kept[1].get(token) if kept and kept[0] == quiz_id else None

    def quiz_answers(self, code, quiz_id):
        with self.lock:
            kept = self.answers.get(code)
            return list(kept[1].values()) if kept and kept[0] == quiz_id else []

    def run_started(self, code, payload):
        with self.lock:
            room = self.rooms.get(code)
            if room is not None:
                room.update(
                    run_started=payload, records=[], run_finished=None, truncated=False, seq=0
                )

    def run_records(self, code, records, truncated, seq=0):
        """Add a trace packet's records; `seq` is the packet's number in its run (rooms.py)."""
        with self.lock:
            room = self.rooms.get(code)
            if room is not None:
                room["records"].extend(records)
                room["truncated"] = room["truncated"] or truncated
                room["seq"] = seq

    def run_finished(self, code, payload, seq=0):
        with self.lock:
            room = self.rooms.get(code)
            if room is not None:
                room.update(run_finished=payload, seq=seq)

    def snapshot(self, code):
        """What a joiner is sent: graph, step and the last run (None when there is no room)."""
        with self.lock:
            room = self.rooms.get(code)
            if room is None:
                return None
            keys = (
                "graph",
                "step",
                "lesson",
                "pace",
                "run_started",
                "run_finished",
                "training",
                "selected",
                "quiz",
            )
            snap = {k: room[k] for k in keys}
            snap["records"] = list(room["records"])
            snap["truncated"] = room["truncated"]
            snap["seq"] = room["seq"]
            return snap


class RedisRegistry:
    """Rooms in Redis, shared by every process on the same message queue."""

    shared = True

    def __init__(self, url):
        import redis

        self.redis = redis.Redis.from_url(url, decode_responses=True)
        self.redis.ping()  # fail at start, in one line, when Redis is not there

    @staticmethod
    def _keys(code):
        base = f"wiregrad:room:{code}"
        return base, f"{base}:run", f"{base}:records"

    def _touch(self, pipe, code):
        for key in self._keys(code):
            pipe.expire(key, ROOM_TTL)

    def claim(self, code, owner, secret_hash, graph):
        room, run, records = self._keys(code)
        if not self.redis.hsetnx(room, "owner", owner):
            return False
        pipe = self.redis.pipeline()
        pipe.delete(run, records)
        pipe.hset(
            room,
            mapping={
                "secret": secret_hash,
                "graph": _dump(graph),
                "step": "null",
                "lesson": "null",
                "pace": "null",
                "training": "null",
                "selected": "null",
                "quiz": "null",
            },
        )
        pipe.expire(room, ROOM_TTL)
        pipe.execute()
        return True

    def owner(self, code):
        return self.redis.hget(self._keys(code)[0], "owner")

    def _swap_owner(self, code, check, new_owner):
        """WATCH the room; if check(fields) holds, set its owner (or delete it, new_owner None).
        Returns (done, previous owner)."""
        import redis

        room, run, records = self._keys(code)
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(room)
                    fields = pipe.hgetall(room)
                    if not fields or not check(fields):
                        pipe.unwatch()
                        return False, None
                    pipe.multi()
                    if new_owner is None:
                        quiz = _load(fields.get("quiz"))
                        pipe.delete(room, run, records)
                        if quiz:  # (older questions' answers expire with ROOM_TTL)
                            pipe.delete(self._answers_key(code, quiz["quiz_id"]))
                    else:
                        pipe.hset(room, "owner", new_owner)
                        self._touch(pipe, code)
                    pipe.execute()
                    return True, fields.get("owner")
                except redis.WatchError:
                    continue  # the room changed meanwhile: look again

    def take_over(self, code, secret_hash, new_owner):
        return self._swap_owner(code, lambda f: f.get("secret") == secret_hash, new_owner)

    def remove(self, code, owner):
        return self._swap_owner(code, lambda f: f.get("owner") == owner, None)[0]

    def set(self, code, field, value):
        room = self._keys(code)[0]
        # only an open room is written (a room closed meanwhile is not re-created)
        if self.redis.exists(room):
            pipe = self.redis.pipeline()
            pipe.hset(room, field, _dump(value))
            self._touch(pipe, code)
            pipe.execute()

    def get(self, code, field):
        return _load(self.redis.hget(self._keys(code)[0], field))

    def _answers_key(self, code, quiz_id):
        return f"{self._keys(code)[0]}:answers:{quiz_id}"

    def put_answer(self, code, quiz_id, answer):
        key = self._answers_key(code, quiz_id)
        pipe = self.redis.pipeline()
        pipe.hset(key, answer["token"], _dump(answer))
        pipe.expire(key, ROOM_TTL)
        pipe.execute()

    def get_answer(self, code, quiz_id, token):
        return _load(self.redis.hget(self._answers_key(code, quiz_id), token))

    def quiz_answers(self, code, quiz_id):
        return [fastjson.loads(v) for v in self.redis.hvals(self._answers_key(code, quiz_id))]

    def run_started(self, code, payload):
        _, run, records = self._keys(code)
        pipe = self.redis.pipeline()
        pipe.delete(run, records)
        pipe.hset(
            run,
            mapping={"started": _dump(payload), "finished": "null", "truncated": "0", "seq": "0"},
        )
        self._touch(pipe, code)
        pipe.execute()

    def run_records(self, code, records, truncated, seq=0):
        _, run, key = self._keys(code)
        pipe = self.redis.pipeline(transaction=True)  # the records and their seq at once
        if records:
            pipe.rpush(key, *(_dump(r) for r in records))
        if truncated:
            pipe.hset(run, "truncated", "1")
        pipe.hset(run, "seq", str(seq))
        pipe.expire(key, ROOM_TTL)
        pipe.execute()

    def run_finished(self, code, payload, seq=0):
        run = self._keys(code)[1]
        self.redis.hset(run, mapping={"finished": _dump(payload), "seq": str(seq)})

    def snapshot(self, code):
        room, run, records = self._keys(code)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(room)
        pipe.hgetall(run)
        pipe.lrange(records, 0, -1)
        fields, last, recs = pipe.execute()
        if not fields:
            return None
        return {
            "graph": _load(fields.get("graph")),
            "step": _load(fields.get("step")),
            "lesson": _load(fields.get("lesson")),
            "pace": _load(fields.get("pace")),
            "run_started": _load(last.get("started")),
            "run_finished": _load(last.get("finished")),
            "records": [fastjson.loads(r) for r in recs],
            "truncated": last.get("truncated") == "1",
            "seq": int(last.get("seq") or 0),
            "training": _load(fields.get("training")),
            "selected": _load(fields.get("selected")),
            "quiz": _load(fields.get("quiz")),
        }


def _dump(value):
    return fastjson.dumps(value)


def _load(text):
    return None if text is None else fastjson.loads(text)


def make_registry(message_queue):
    return RedisRegistry(message_queue) if message_queue else MemoryRegistry()
