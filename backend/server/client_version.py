"""Which wire a Socket.IO client reads, from what it announces when it connects.

A page announces the wire it reads in the Socket.IO handshake's auth payload, `{"wire": 2}`
(typed_wire.VERSION: arrays as typed binary buffers). A client that announces none or another
(a page loaded before the server was updated and never reloaded, a script written for wire 1)
stays connected but every message it sends is answered with an error saying so, and nothing
is started for it, so it is never sent a packet it would misread (docs/protocol.md, "Wire
version")."""

import threading

from .typed_wire import VERSION


def announced(auth):
    """The wire version in a handshake's auth payload, or None."""
    wire = auth.get("wire") if isinstance(auth, dict) else None
    return wire if isinstance(wire, int) and not isinstance(wire, bool) else None


def version_error(wire):
    said = "announced no wire version" if wire is None else f"reads wire {wire}"
    return {
        "error": f"this page is from another version of Wiregrad than the server: it {said}, "
        f"the server sends wire {VERSION} (values as typed binary arrays). Reload the page "
        "(or update the client) to use this server.",
        "code": "client_version",
        "wire": VERSION,
    }


class ClientVersions:
    """The connections that do not read this server's wire, by sid."""

    def __init__(self):
        self.lock = threading.Lock()
        self.other = {}  # sid -> the wire it announced (None: none)

    def connected(self, sid, auth):
        wire = announced(auth)
        if wire != VERSION:
            with self.lock:
                self.other[sid] = wire

    def gone(self, sid):
        with self.lock:
            self.other.pop(sid, None)

    def gate(self, socketio):
        """Answer every event of such a connection with the version error, at python-socketio's
        handler table (after every handler is registered, the catch-all included)."""
        handlers = socketio.server.handlers.get("/", {})

        def gated(handler, catch_all):
            def check(*args):
                sid = args[1] if catch_all else args[0]  # the catch-all gets the event first
                if sid in self.other:
                    return version_error(self.other[sid])
                return handler(*args)

            return check

        for event, handler in list(handlers.items()):
            if event not in ("connect", "disconnect"):
                handlers[event] = gated(handler, event == "*")
