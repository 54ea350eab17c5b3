"""What the store says when the disk cannot take a write, or the database cannot be read.

SQLite reports these as OperationalError/DatabaseError with its own words ("attempt to write
a readonly database", "database or disk is full", "file is not a database", and for a write
past the process's file size limit only "disk I/O error"); a user needs to know what happened,
that nothing was saved (and what was), and what to do."""

import contextlib
import errno
import os
import sqlite3
from pathlib import Path

try:
    import resource
except ImportError:  # not on Windows: no file size limit to meet there
    resource = None


class StoreUnavailable(RuntimeError):
    """A write the disk refused, or a store that is gone; nothing was written. `.reason`:
    "full", "file-size-limit" (the process may not make a file that big: `ulimit -f`,
    RLIMIT_FSIZE), "read-only", or "missing" (the data dir was moved, deleted or replaced by
    a file while the server ran: reads fail too)."""

    def __init__(self, reason, data_dir, limit=None):
        self.reason, self.data_dir, self.limit = reason, data_dir, limit
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
        if self.reason == "file-size-limit":
            return (
                f"the server may not write files larger than {self.limit:,} bytes (its file "
                f"size limit, ulimit -f) and the database in {self.data_dir} needs to grow; "
                f"nothing was saved, {kept}. Raise the limit for the server (ulimit -f "
                "unlimited before wiregrad serve, or LimitFSIZE= in its systemd unit) and "
                "save again; opening and running graphs still works"
            )
        if self.reason == "missing":
            return (
                f"the data dir {self.data_dir} is gone or is not a directory any more (moved, "
                "deleted or replaced by a file while the server ran); nothing was saved and "
                "stored graphs cannot be read. Put it back (or restart with --data-dir on a "
                "directory) and try again"
            )
        return (
            f"the data dir is read-only ({self.data_dir}); nothing was saved, {kept}. Make "
            "it writable (or serve with --data-dir on a writable disk) and save again; "
            "opening and running graphs still works"
        )

    @property
    def status(self):
        # 507 Insufficient Storage: the store cannot take more until space is made
        return 507 if self.reason in ("full", "file-size-limit") else 503


class StoreDamaged(RuntimeError):
    """The database file at start is not one SQLite can read: one line, with its path."""


def write_failure(exc, data_dir, pending=0):
    """The StoreUnavailable that `exc` (from a write of about `pending` bytes) stands for, or
    None for other errors."""
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, OSError):
        if exc.errno == errno.ENOSPC:
            return StoreUnavailable("full", data_dir)
        if exc.errno == errno.EFBIG:
            return StoreUnavailable("file-size-limit", data_dir, _file_size_limit())
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return StoreUnavailable("read-only", data_dir)
        return None
    if not isinstance(exc, sqlite3.Error):
        return None
    if code == sqlite3.SQLITE_FULL or "disk is full" in text:
        return StoreUnavailable("full", data_dir)
    # a write the disk refuses is often only "disk I/O error" (SQLite reports ENOSPC in the
    # WAL, EFBIG and EDQUOT all as SQLITE_IOERR_WRITE, and Python does not give the errno):
    # ask the disk, then the process's file size limit
    if "disk i/o error" in text:
        if _free_bytes(data_dir) < 1024**2:
            return StoreUnavailable("full", data_dir)
        limit = _file_size_limit()
        if limit is not None and _largest_file(data_dir) + pending >= limit:
            return StoreUnavailable("file-size-limit", data_dir, limit)
    if code == sqlite3.SQLITE_READONLY or "readonly" in text or "read-only" in text:
        return StoreUnavailable("read-only", data_dir)
    return missing_store(exc, data_dir)


def missing_store(exc, data_dir):
    """StoreUnavailable("missing") when `exc` (from any store operation) came from a data dir
    that is no longer a directory, else None."""
    if isinstance(exc, (sqlite3.Error, OSError)) and not Path(data_dir).is_dir():
        return StoreUnavailable("missing", data_dir)
    return None


def _file_size_limit():
    """The process's file size limit in bytes (RLIMIT_FSIZE, `ulimit -f`), None if unlimited.
    A write past it fails with EFBIG, since Python ignores SIGXFSZ (which would otherwise end
    the process); wiregrad serve makes sure of that (app.serve)."""
    if resource is None:
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else soft


def _largest_file(data_dir):
    """The size of the store's biggest file: the database, its WAL or its shared memory."""
    sizes = [0]
    for path in Path(data_dir).glob("wiregrad.sqlite3*"):
        with contextlib.suppress(OSError):  # gone between the listing and the stat
            sizes.append(path.stat().st_size)
    return max(sizes)


def _free_bytes(path):
    try:
        st = os.statvfs(path)
    except OSError:
        return 1 << 62
    return st.f_bavail * st.f_frsize


def opening_failure(exc, path):
    """At start: "read-only" when the store can only be read, else raises StoreDamaged for a
    damaged file; other errors are raised as they are."""
    failure = write_failure(exc, path.parent)
    if (failure is not None and failure.reason != "missing") or (
        isinstance(exc, sqlite3.OperationalError) and path.exists()
    ):
        return "read-only"
    if isinstance(exc, sqlite3.DatabaseError):
        raise StoreDamaged(
            f"wiregrad: the database {path} is damaged ({exc}); move it aside to start with an "
            "empty store (or put back a backup), then start again"
        ) from None
    raise exc
