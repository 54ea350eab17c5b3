"""The data directory's rooms database (rooms.sqlite3), shared by what a room keeps on disk:
its owner's claim (room_claims.py) and what it showed (room_archive.py).

One short-lived connection per call, closed at the end of its block; every process of a
lecture hall shares the file, as they share the graph store. A data directory that cannot be
written does not stop rooms: the first failure is logged once, with what is lost, and the
table's owner goes on without it (`broken`)."""

import logging
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

log = logging.getLogger(__name__)


class RoomsFile:
    # set by each table's class: its CREATE statements, and what a failure loses (two lines)
    SCHEMA = ""
    LOST = ("", "")

    def __init__(self, data_dir):
        self.path = Path(data_dir) / "rooms.sqlite3"
        self.lock = threading.Lock()
        self.broken = False  # a write failed once: said in the log, rooms go on without it
        try:
            with self._connect() as db:
                db.executescript(self.SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)

    def _connect(self):
        return closing(sqlite3.connect(self.path, timeout=10, isolation_level=None))

    def _failed(self, exc):
        if not self.broken:
            first, then = self.LOST
            log.warning(first, self.path, exc)
            log.warning(then)
        self.broken = True
