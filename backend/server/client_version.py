"""Which wire a Socket.IO client reads, from what it announces when it connects.

A page announces the wire it reads in the Socket.IO handshake's auth payload, `{"wire": 2}`
(typed_wire.VERSION: arrays as typed binary buffers). A client that announces none, or wire 1,
reads arrays as JSON numbers, as every client did before typed arrays (a page loaded before the
server was updated, a script written from the protocol's description): its acks and its own
runs' and trainings' packets are written out so (typed_wire.as_json). A client that announces
another wire stays connected, but every message it sends is answered with an error saying so
and nothing is started for it, so it is never sent a packet it would misread (docs/protocol.md,
"Wire version")."""

import threading

from .typed_wire import VERSION, as_json

JSON_WIRE = 1  # arrays as JSON numbers: what a client that announces no wire reads


def announced(auth):
    """The wire version a handshake's auth payload announces: JSON_WIRE where it says none; the
    value as it came where it is no wire number (answered with the version error)."""
    wire = auth.get("wire", JSON_WIRE) if isinstance(auth, dict) else JSON_WIRE
    return wire if isinstance(wire, int) and not isinstance(wire, bool) else repr(wire)[:40]


def version_error(wire):
    return {
        "error": f"this client reads wire {wire}, which this server does not send: it sends "
        f"wire {VERSION} (values as typed binary arrays) or wire {JSON_WIRE} (JSON numbers). "
        "Reload the page (or update the client) to use this server.",
        "code": "client_version",
        "wire": VERSION,
    }


class ClientVersions:
    """The connections that read JSON numbers, and those that read a wire this server does not
    send, by sid."""

    def __init__(self):
        self.lock = threading.Lock()
        self.json = set()  # sids of JSON_WIRE clients
        self.other = {}  # sid -> the wire it announced, one this server does not send

    def connected(self, sid, auth):
        wire = announced(auth)
        with self.lock:
            if wire == JSON_WIRE:
                self.json.add(sid)
            elif wire != VERSION:
                self.other[sid] = wire

    def gone(self, sid):
        with self.lock:
            self.json.discard(sid)
            self.other.pop(sid, None)

    def for_client(self, sid, payload):
        """`payload` as client `sid` reads it: its arrays as JSON numbers for a JSON_WIRE
        client, else as it is (typed)."""
        return as_json(payload) if sid in self.json else payload

    def gate(self, socketio):
        """Answer every event of a connection of another wire with the version error, and a
        JSON_WIRE connection's acks in JSON numbers, at python-socketio's handler table (after
        every handler is registered, the catch-all included)."""
        handlers = socketio.server.handlers.get("/", {})

        def gated(handler, catch_all):
            def check(*args):
                sid = args[1] if catch_all else args[0]  # the catch-all gets the event first
                if sid in self.other:
                    return version_error(self.other[sid])
                return self.for_client(sid, handler(*args))

            return check

        for event, handler in list(handlers.items()):
            if event not in ("connect", "disconnect"):
                handlers[event] = gated(handler, event == "*")
