"""The graph store: SQLite in the data directory, every save a new revision.

Nothing saved is ever lost: a save appends a revision inside one transaction (WAL journal,
synchronous=FULL), so a crash or a failed save leaves every earlier revision readable; a
delete only hides the graph; restoring an old revision appends it again as the newest. Ids are
checked against a pattern and every query is parameterised.
"""

import json
import re
import sqlite3
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

SCHEMA = """
CREATE TABLE IF NOT EXISTS graphs (
    id       TEXT PRIMARY KEY,
    name     TEXT NOT NULL,
    created  REAL NOT NULL,
    updated  REAL NOT NULL,
    head     INTEGER NOT NULL,
    deleted  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS revisions (
    graph_id TEXT NOT NULL REFERENCES graphs(id),
    rev      INTEGER NOT NULL,
    created  REAL NOT NULL,
    name     TEXT NOT NULL,
    document TEXT NOT NULL,
    PRIMARY KEY (graph_id, rev)
);
"""


class NotFound(KeyError):
    pass


class BadId(ValueError):
    pass


def check_id(graph_id):
    if not isinstance(graph_id, str) or not ID_RE.match(graph_id):
        raise BadId(f"invalid graph id {graph_id!r}: use 1-64 letters, digits, _ or -")
    return graph_id


class Store:
    def __init__(self, data_dir):
        self.path = Path(data_dir) / "wiregrad.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)

    @contextmanager
    def _connect(self):
        # One short-lived connection per operation: safe across threads and processes.
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            yield db
        finally:
            db.close()

    @contextmanager
    def _transaction(self):
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- writes ------------------------------------------------------------------------------
    def create(self, document: dict, graph_id=None):
        graph_id = check_id(graph_id) if graph_id else uuid.uuid4().hex[:12]
        now = time.time()
        name = _name_of(document)
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM graphs WHERE id = ?", (graph_id,)).fetchone():
                raise ValueError(f"a graph with id {graph_id!r} exists")
            db.execute(
                "INSERT INTO graphs (id, name, created, updated, head) VALUES (?, ?, ?, ?, 1)",
                (graph_id, name, now, now),
            )
            db.execute(
                "INSERT INTO revisions (graph_id, rev, created, name, document) "
                "VALUES (?, 1, ?, ?, ?)",
                (graph_id, now, name, _dump(document)),
            )
        return self.info(graph_id)

    def save(self, graph_id, document: dict):
        """Append `document` as the graph's newest revision."""
        check_id(graph_id)
        now = time.time()
        name = _name_of(document)
        body = _dump(document)
        with self._transaction() as db:
            row = db.execute(
                "SELECT head, created FROM graphs WHERE id = ? AND deleted = 0", (graph_id,)
            ).fetchone()
            if row is None:
                raise NotFound(graph_id)
            rev, created = row[0] + 1, row[1]
            db.execute(
                "INSERT INTO revisions (graph_id, rev, created, name, document) "
                "VALUES (?, ?, ?, ?, ?)",
                (graph_id, rev, now, name, body),
            )
            db.execute(
                "UPDATE graphs SET head = ?, updated = ?, name = ? WHERE id = ?",
                (rev, now, name, graph_id),
            )
        # what this save wrote, not whatever is newest by the time we answer
        return {"id": graph_id, "name": name, "created": created, "updated": now, "revision": rev}

    def restore(self, graph_id, rev):
        """Make an older revision the newest again (as a new revision: history only grows)."""
        document = self.get(graph_id, rev)
        return self.save(graph_id, document)

    def delete(self, graph_id):
        check_id(graph_id)
        with self._transaction() as db:
            cur = db.execute(
                "UPDATE graphs SET deleted = 1, updated = ? WHERE id = ? AND deleted = 0",
                (time.time(), graph_id),
            )
            if cur.rowcount == 0:
                raise NotFound(graph_id)

    # -- reads -------------------------------------------------------------------------------
    def info(self, graph_id):
        check_id(graph_id)
        with self._connect() as db:
            row = db.execute(
                "SELECT id, name, created, updated, head FROM graphs WHERE id = ? AND deleted = 0",
                (graph_id,),
            ).fetchone()
        if row is None:
            raise NotFound(graph_id)
        return dict(zip(("id", "name", "created", "updated", "revision"), row))

    def list(self):
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, name, created, updated, head FROM graphs "
                "WHERE deleted = 0 ORDER BY updated DESC"
            ).fetchall()
        return [dict(zip(("id", "name", "created", "updated", "revision"), r)) for r in rows]

    def get(self, graph_id, rev=None):
        check_id(graph_id)
        if rev is not None and not 1 <= int(rev) < 2**62:
            raise NotFound(f"{graph_id} revision {rev}")
        with self._connect() as db:
            if rev is None:
                row = db.execute(
                    "SELECT r.document FROM graphs g JOIN revisions r "
                    "ON r.graph_id = g.id AND r.rev = g.head "
                    "WHERE g.id = ? AND g.deleted = 0",
                    (graph_id,),
                ).fetchone()
            else:
                row = db.execute(
                    "SELECT r.document FROM revisions r JOIN graphs g "
                    "ON g.id = r.graph_id WHERE r.graph_id = ? AND r.rev = ? "
                    "AND g.deleted = 0",
                    (graph_id, int(rev)),
                ).fetchone()
        if row is None:
            raise NotFound(graph_id if rev is None else f"{graph_id} revision {rev}")
        return json.loads(row[0])

    def revisions(self, graph_id):
        self.info(graph_id)
        with self._connect() as db:
            rows = db.execute(
                "SELECT rev, created, name FROM revisions WHERE graph_id = ? ORDER BY rev",
                (graph_id,),
            ).fetchall()
        return [dict(zip(("revision", "created", "name"), r)) for r in rows]


def _name_of(document):
    name = document.get("name") if isinstance(document, dict) else None
    return str(name)[:200] if name else "untitled"


def _dump(document):
    return json.dumps(document, separators=(",", ":"), allow_nan=False)
