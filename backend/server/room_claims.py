"""Which room code belongs to which owner, kept on disk so that it outlives the process.

A room lives in memory or in Redis (room_registry.py); a restart or a Redis flush forgets it.
The teacher's page then asks for it back (`room_resume` with the code and the owner's
secret), and so may anyone who saw the code on the projector. What tells the two apart after
the room is forgotten is this table: code -> SHA-256 of the owner's secret, written when the
room opens, dropped when it closes, in SQLite in the data directory (every process of a
lecture hall shares it, as they share the graph store). A claim not used for ROOM_TTL
(a day, as the registry's keys) is forgotten, so that its code can be drawn again.

A data directory that cannot be written does not stop rooms: the room opens, it just cannot
be claimed back after a restart (logged once).
"""

import sqlite3
import time

from .room_registry import ROOM_TTL
from .rooms_file import RoomsFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS room_claims (
    code     TEXT PRIMARY KEY,
    secret   TEXT NOT NULL,
    touched  REAL NOT NULL
);
"""


class RoomClaims(RoomsFile):
    SCHEMA = SCHEMA
    LOST = (
        "room claims cannot be kept in %s (%s): rooms will not be",
        "claimable after a restart until the data dir is writable",
    )

    def add(self, code, secret_hash):
        """Claim `code` for the owner of `secret_hash`; False when a live claim holds it."""
        now = time.time()
        try:
            with self.lock, self._connect() as db:
                db.execute("DELETE FROM room_claims WHERE touched < ?", (now - ROOM_TTL,))
                cur = db.execute(
                    "INSERT OR IGNORE INTO room_claims (code, secret, touched) VALUES (?, ?, ?)",
                    (code, secret_hash, now),
                )
                return cur.rowcount == 1
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
            return True

    def holder(self, code):
        """The secret hash that claims `code` (its claim touched now), or None."""
        now = time.time()
        try:
            with self.lock, self._connect() as db:
                row = db.execute(
                    "SELECT secret FROM room_claims WHERE code = ? AND touched >= ?",
                    (code, now - ROOM_TTL),
                ).fetchone()
                if row is not None:
                    db.execute("UPDATE room_claims SET touched = ? WHERE code = ?", (now, code))
                return None if row is None else row[0]
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
            return None

    def remove(self, code):
        try:
            with self.lock, self._connect() as db:
                db.execute("DELETE FROM room_claims WHERE code = ?", (code,))
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
