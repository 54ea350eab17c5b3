"""What a room showed, kept on disk so that a restart does not empty the students' screens.

The room registry (room_registry.py) lives in memory or in Redis; a restart of a one-process
server, or a Redis that comes back empty, forgets everything in it. The owner's page takes the
room back (room_claims.py) and sends its graph, lesson step, pace, step mode's position and
selected edge again, but its last run and training are only in the registry, and students
who rejoin would see an empty canvas until the next run. So the room's state is written here
as it settles (a run when it finishes, a training when it ends, the other fields as the owner
sets them), one row per field, in the data directory's rooms database, and put back into the
registry when the owner's `room_resume` opens the room again. Dropped when the room closes;
rows not touched for ROOM_TTL (a day) are forgotten.

A data directory that cannot be written does not stop rooms (logged once), as with claims.
"""

import sqlite3
import time

from . import fastjson
from .room_registry import ROOM_TTL
from .rooms_file import RoomsFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS room_state (
    code     TEXT NOT NULL,
    field    TEXT NOT NULL,
    value    TEXT NOT NULL,
    touched  REAL NOT NULL,
    PRIMARY KEY (code, field)
);
"""


class RoomArchive(RoomsFile):
    SCHEMA = SCHEMA
    LOST = (
        "room state cannot be kept in %s (%s): after a restart",
        "students see the room's graph again but not its last run",
    )

    def put(self, code, field, value):
        """Keep `field` of room `code` (any JSON value; None is kept as null)."""
        text = fastjson.dumps(value)
        now = time.time()
        try:
            with self.lock, self._connect() as db:
                db.execute(
                    "INSERT INTO room_state (code, field, value, touched) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (code, field) DO UPDATE SET value = excluded.value, "
                    "touched = excluded.touched",
                    (code, field, text, now),
                )
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)

    def load(self, code):
        """{field: value} of what was kept of room `code` ({} when nothing)."""
        now = time.time()
        try:
            with self.lock, self._connect() as db:
                db.execute("DELETE FROM room_state WHERE touched < ?", (now - ROOM_TTL,))
                rows = db.execute(
                    "SELECT field, value FROM room_state WHERE code = ?", (code,)
                ).fetchall()
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
            return {}
        return {field: fastjson.loads(value) for field, value in rows}

    def remove(self, code):
        try:
            with self.lock, self._connect() as db:
                db.execute("DELETE FROM room_state WHERE code = ?", (code,))
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
