"""The graph store: SQLite in the data directory, every save a new revision.

Nothing saved is ever lost: a save appends a revision inside one transaction (WAL journal,
synchronous=FULL), so a crash or a failed save leaves every earlier revision readable; a
delete only hides the graph; restoring an old revision appends it again as the newest. Ids are
checked against a pattern and every query is parameterised.
"""

import json
import re
import secrets
import sqlite3
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from .store_errors import StoreUnavailable, missing_store, opening_failure, write_failure

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


class Conflict(RuntimeError):
    """A save based on a revision that is no longer the head: someone saved in between.
    `.head` is the stored head, `.base` the revision the save was based on."""

    def __init__(self, graph_id, base, head):
        self.graph_id, self.base, self.head = graph_id, base, head
        super().__init__(
            f"this graph has changed since you opened it: revision {head} was saved after "
            f"the revision {base} your copy is based on; nothing was saved. Keep yours as a new "
            f"revision (save again based on revision {head}: theirs stays in the history) or "
            "open theirs"
        )


def check_id(graph_id):
    if not isinstance(graph_id, str) or not ID_RE.match(graph_id):
        raise BadId(f"invalid graph id {graph_id!r}: use 1-64 letters, digits, _ or -")
    return graph_id


class Store:
    def __init__(self, data_dir):
        self.path = Path(data_dir) / "wiregrad.sqlite3"
        self.read_only = False  # a data dir that can only be read: reads go on (store_errors)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(SCHEMA)
            self._migrate_owners()
        except (sqlite3.DatabaseError, OSError) as exc:
            self.read_only = opening_failure(exc, self.path) == "read-only"
        # One connection held open for the store's life (never used): SQLite deletes the WAL
        # and its index when the last connection closes, and the next one must make them
        # again, which a full disk refuses; held, they stay, so reads go on when writes cannot.
        self._keeper = None
        if not self.read_only:
            self._keeper = sqlite3.connect(self.path, check_same_thread=False)
            self._keeper.execute("SELECT 1 FROM graphs LIMIT 1").fetchall()

    def _migrate_owners(self):
        """Add the owner and share columns (auth.py) to a store made before them, in place:
        graphs made before owners belong to nobody (the teacher sees them; on loopback
        everyone does), and each gets a share token. Several processes may start at once on
        one data dir, so the check is repeated inside the write transaction."""
        with self._connect() as db:
            if {"owner", "share"} <= _columns(db):
                return
        with self._transaction() as db:
            columns = _columns(db)
            for column in ("owner", "share"):
                if column not in columns:
                    db.execute(f"ALTER TABLE graphs ADD COLUMN {column} TEXT")
            rows = db.execute("SELECT id FROM graphs WHERE share IS NULL").fetchall()
            db.executemany(
                "UPDATE graphs SET share = ? WHERE id = ?",
                [(secrets.token_urlsafe(16), r[0]) for r in rows],
            )

    @contextmanager
    def _connect(self):
        # One short-lived connection per operation: safe across threads and processes.
        try:
            if self.read_only:  # nothing can write here, this process included (store_errors)
                db = sqlite3.connect(f"{self.path.as_uri()}?immutable=1", uri=True)
            else:
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:  # a data dir gone while serving: a clear 503, not a 500
            raise missing_store(exc, self.path.parent) or exc from None
        try:
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            yield db
        except sqlite3.Error as exc:
            raise missing_store(exc, self.path.parent) or exc from None
        finally:
            db.close()

    @contextmanager
    def _transaction(self, pending=0):
        """One write transaction of about `pending` bytes; a disk that refuses it raises
        StoreUnavailable (nothing was written: SQLite rolls the transaction back)."""
        if self.read_only:
            raise StoreUnavailable("read-only", self.path.parent)
        try:
            with self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            failure = write_failure(exc, self.path.parent, pending)
            if failure is None:
                raise
            raise failure from None

    # -- writes ------------------------------------------------------------------------------
    def create(self, document: dict, graph_id=None, owner=None):
        """A new graph; `owner` is the hash of its owner's key (auth.py), None for nobody's."""
        graph_id = check_id(graph_id) if graph_id else uuid.uuid4().hex[:12]
        now = time.time()
        name = _name_of(document)
        body = _dump(document)
        with self._transaction(_pending(body)) as db:
            if db.execute("SELECT 1 FROM graphs WHERE id = ?", (graph_id,)).fetchone():
                raise ValueError(f"a graph with id {graph_id!r} exists")
            db.execute(
                "INSERT INTO graphs (id, name, created, updated, head, owner, share) "
                "VALUES (?, ?, ?, ?, 1, ?, ?)",
                (graph_id, name, now, now, owner, secrets.token_urlsafe(16)),
            )
            db.execute(
                "INSERT INTO revisions (graph_id, rev, created, name, document) "
                "VALUES (?, 1, ?, ?, ?)",
                (graph_id, now, name, body),
            )
        return self.info(graph_id)

    def save(self, graph_id, document: dict, base=None):
        """Append `document` as the graph's newest revision. With `base` (the revision the
        document was based on), only if that is still the head, else Conflict: checked inside
        the write transaction, so two saves based on one head cannot both pass."""
        check_id(graph_id)
        now = time.time()
        name = _name_of(document)
        body = _dump(document)
        with self._transaction(_pending(body)) as db:
            row = db.execute(
                "SELECT head, created FROM graphs WHERE id = ? AND deleted = 0", (graph_id,)
            ).fetchone()
            if row is None:
                raise NotFound(graph_id)
            if base is not None and base != row[0]:
                raise Conflict(graph_id, base, row[0])
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
                "SELECT id, name, created, updated, head, share FROM graphs "
                "WHERE id = ? AND deleted = 0",
                (graph_id,),
            ).fetchone()
        if row is None:
            raise NotFound(graph_id)
        return dict(zip(("id", "name", "created", "updated", "revision", "share"), row))

    def list(self, owner=None):
        """Every graph, newest first; with `owner` (a key hash), only that owner's."""
        where, args = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, name, created, updated, head, share FROM graphs "
                f"WHERE deleted = 0 {where} ORDER BY updated DESC",
                args,
            ).fetchall()
        keys = ("id", "name", "created", "updated", "revision", "share")
        return [dict(zip(keys, r)) for r in rows]

    def access(self, graph_id):
        """(owner hash or None, share token) of a graph that exists, else None."""
        if not isinstance(graph_id, str) or not ID_RE.match(graph_id):
            return None
        with self._connect() as db:
            row = db.execute(
                "SELECT owner, share FROM graphs WHERE id = ? AND deleted = 0", (graph_id,)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def get(self, graph_id, rev=None):
        return self.get_revision(graph_id, rev)[0]

    def get_revision(self, graph_id, rev=None):
        """(document, its revision number): the head, or revision `rev`, read in one query."""
        check_id(graph_id)
        if rev is not None and not 1 <= int(rev) < 2**62:
            raise NotFound(f"{graph_id} revision {rev}")
        with self._connect() as db:
            if rev is None:
                row = db.execute(
                    "SELECT r.document, r.rev FROM graphs g JOIN revisions r "
                    "ON r.graph_id = g.id AND r.rev = g.head "
                    "WHERE g.id = ? AND g.deleted = 0",
                    (graph_id,),
                ).fetchone()
            else:
                row = db.execute(
                    "SELECT r.document, r.rev FROM revisions r JOIN graphs g "
                    "ON g.id = r.graph_id WHERE r.graph_id = ? AND r.rev = ? "
                    "AND g.deleted = 0",
                    (graph_id, int(rev)),
                ).fetchone()
        if row is None:
            raise NotFound(graph_id if rev is None else f"{graph_id} revision {rev}")
        return json.loads(row[0]), row[1]

    def revisions(self, graph_id):
        self.info(graph_id)
        with self._connect() as db:
            rows = db.execute(
                "SELECT rev, created, name FROM revisions WHERE graph_id = ? ORDER BY rev",
                (graph_id,),
            ).fetchall()
        return [dict(zip(("revision", "created", "name"), r)) for r in rows]


def _columns(db):
    return {r[1] for r in db.execute("PRAGMA table_info(graphs)")}


def _name_of(document):
    name = document.get("name") if isinstance(document, dict) else None
    return str(name)[:200] if name else "untitled"


def _pending(body):
    """About how many bytes saving `body` writes: its pages in the WAL (4 KiB each with a
    24-byte frame header), twice over for the checkpoint into the database, and a few pages of
    the tables' b-trees (store_errors: whether a write met the file size limit)."""
    return 2 * len(body.encode()) + 64 * 1024


def _dump(document):
    return json.dumps(document, separators=(",", ":"), allow_nan=False)
