"""How a run fails, and how its failures read: one module that every part of the executor
(its forward paths, its recorder, its backward watch) can raise from without importing the
executor itself."""

from ..limits import LimitExceeded


class Cancelled(Exception):
    """The run's cancel flag was set (a new run, a disconnect); raised at a checkpoint."""


class NodeError(Exception):
    """A failure that belongs to one node (`node`, None for the run as a whole): the run's
    error record names it."""

    def __init__(self, node, exc):
        self.node, self.exc = node, exc
        self.extra = None  # fields the error record adds (a version error's: inplace.py)


# the start of the engine's (and PyTorch's) error when a saved tensor was written in place
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"


def too_many_bytes(limit):
    """The error of a run whose values together take more than `limit` bytes."""
    return LimitExceeded(f"the run's values take more than {_size(limit)}, the limit for one run")


def _size(n):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,} bytes"


def message(exc):
    """An exception's text as a user reads it (a KeyError's without its quotes)."""
    text = str(exc)
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        text = str(exc.args[0])
    return text or type(exc).__name__
