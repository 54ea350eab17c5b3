"""What the store says when the disk cannot take a write, or the database cannot be read.

SQLite reports these as OperationalError/DatabaseError with its own words ("attempt to write
a readonly database", "database or disk is full", "file is not a database"); a user needs to
know what happened, that nothing was saved (and what was), and what to do."""

import errno
import os
import sqlite3


class StoreUnavailable(RuntimeError):
    """A write the disk refused; `.reason` is "read-only" or "full". Nothing was written."""

    def __init__(self, reason, data_dir):
        self.reason, self.data_dir = reason, data_dir
        super().__init__(reason)

    def message(self, last_revision=None):
        kept = (
            f"your last saved revision is r{last_revision}"
            if last_revision
            else "no earlier revision of this graph exists"
        )
        if self.reason == "full":
            return (
                f"the disk is full; nothing was saved, {kept}. Free some space on the disk "
                f"of {self.data_dir} and save again"
            )
        return (
            f"the data dir is read-only ({self.data_dir}); nothing was saved, {kept}. Make "
            "it writable (or serve with --data-dir on a writable disk) and save again; "
            "opening and running graphs still works"
        )

    @property
    def status(self):
        return 507 if self.reason == "full" else 503


class StoreDamaged(RuntimeError):
    """The database file at start is not one SQLite can read: one line, with its path."""


def write_failure(exc, data_dir):
    """The StoreUnavailable that `exc` (from a write) stands for, or None for other errors."""
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, OSError):
        if exc.errno == errno.ENOSPC:
            return StoreUnavailable("full", data_dir)
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return StoreUnavailable("read-only", data_dir)
        return None
    if not isinstance(exc, sqlite3.Error):
        return None
    if code == sqlite3.SQLITE_FULL or "disk is full" in text:
        return StoreUnavailable("full", data_dir)
    # a write into the WAL that the disk refuses is often only "disk I/O error": ask the disk
    if "disk i/o error" in text and _free_bytes(data_dir) < 1024**2:
        return StoreUnavailable("full", data_dir)
    if code == sqlite3.SQLITE_READONLY or "readonly" in text or "read-only" in text:
        return StoreUnavailable("read-only", data_dir)
    return None


def _free_bytes(path):
    try:
        st = os.statvfs(path)
    except OSError:
        return 1 << 62
    return st.f_bavail * st.f_frsize


def opening_failure(exc, path):
    """At start: "read-only" when the store can only be read, else raises StoreDamaged for a
    damaged file; other errors are raised as they are."""
    if write_failure(exc, path.parent) is not None or (
        isinstance(exc, sqlite3.OperationalError) and path.exists()
    ):
        return "read-only"
    if isinstance(exc, sqlite3.DatabaseError):
        raise StoreDamaged(
            f"wiregrad: the database {path} is damaged ({exc}); move it aside to start with an "
            "empty store (or put back a backup), then start again"
        ) from None
    raise exc
