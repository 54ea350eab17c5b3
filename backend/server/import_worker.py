"""Scripts are read in a child process, never in the server's own.

Reading a script is `ast.parse` and the importer, both holding the GIL: a 900 KB line of one
list takes `ast.parse` three seconds in C, during which no other request of the process is
answered (not even /api/health). The importer's own budget is checked between its steps, and
every step's cost is bounded (importing/constants.py, importing/nodes.py), but the only bound
that holds for any input, parser included, is another interpreter: a child process with its
own GIL, an address-space limit and a deadline after which it is killed.

Children come from a forkserver that has the importer loaded already, so a child starts in a
few milliseconds without copying the server's threads or sockets. At most `max_imports`
children read at once; a request that finds them all busy waits up to the budget, then is
answered 503 with a `retry_after`. The document (or the problems, with the partial document)
comes back as plain JSON-ready data.
"""

import multiprocessing
import os
import resource
import threading

_CONTEXT = None
_CONTEXT_LOCK = threading.Lock()
_SLOTS = {}  # max_imports -> the semaphore of the children reading at once
PARSE_ALLOWANCE = 5.0  # seconds for ast.parse of the largest script taken, beyond the budget


class ImportBusy(Exception):
    """Every import slot is taken; `retry_after` says when to try again."""

    def __init__(self, retry_after):
        super().__init__("the server is reading other scripts; try again shortly")
        self.retry_after = retry_after


def _context():
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["backend.graph.importing.importer"])
            _CONTEXT = ctx
        return _CONTEXT


def _slots(max_imports):
    with _CONTEXT_LOCK:
        return _SLOTS.setdefault(max_imports, threading.BoundedSemaphore(max_imports))


def read_script(code, max_seconds, max_bytes, max_imports, weights=None):
    """("ok", document dict) or ("failed", problems, partial document dict or None), the
    script read in a child process that is killed past `max_seconds` (plus the parser's
    allowance) and cannot grow by more than `max_bytes`. ImportBusy when no slot frees up.
    `weights`: the bytes of the .safetensors file the script loads (read in the child too)."""
    slots = _slots(max_imports)
    if not slots.acquire(timeout=max_seconds):
        raise ImportBusy(retry_after=max_seconds)
    try:
        return _in_child(code, max_seconds, max_bytes, weights)
    finally:
        slots.release()


def _in_child(code, max_seconds, max_bytes, weights=None):
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(
        target=_child, args=(send, code, max_seconds, max_bytes, weights), name="wiregrad-import"
    )
    child.start()
    send.close()  # the child's end: EOF here once the child is gone
    wall = max_seconds + PARSE_ALLOWANCE
    try:
        if receive.poll(wall):
            try:
                return receive.recv()
            except EOFError:
                pass  # the child died without answering: out of memory
            return _failed(_memory_problem(max_bytes))
        return _failed(
            f"reading the script took longer than {wall:g} s, the limit (parsing included); "
            "import a shorter script"
        )
    finally:
        if child.is_alive():
            child.kill()
        child.join(1)
        receive.close()


def _failed(message):
    return ("failed", [{"line": 0, "message": message, "code": ""}], None)


def _memory_problem(max_bytes):
    return (
        f"reading the script needs more than {max_bytes // 2**20:,} MiB, the limit; "
        "import a shorter script"
    )


def _child(send, code, max_seconds, max_bytes, weights=None):
    """The child's work: limit its own address space, read, send the outcome back."""
    _limit_memory(max_bytes)
    from backend.graph.importing.importer import ImportFailed, from_python

    try:
        doc = from_python(code, max_seconds, weights=weights)
        outcome = ("ok", doc.model_dump(mode="json"))
    except ImportFailed as exc:
        partial = exc.document.model_dump(mode="json") if exc.document is not None else None
        outcome = ("failed", [p.to_dict() for p in exc.problems], partial)
    except MemoryError:
        outcome = _failed(_memory_problem(max_bytes))
    send.send(outcome)
    send.close()


def _limit_memory(max_bytes):
    """RLIMIT_AS at what the child has mapped now (the importer and numpy, loaded by the
    forkserver) plus `max_bytes`: past it allocations fail with MemoryError."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
        limit = mapped + max_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError):  # no /proc (not Linux): the deadline still bounds the child
        pass
