"""Frames the Socket.IO transport refuses before anything reads them further.

What a client sends is JSON text only (docs/protocol.md; only the server sends binary, its
typed arrays: typed_wire.py). python-socketio would otherwise keep a binary event's
attachments until the last of them arrives (a header can announce billions), each up to the
transport's buffer size, for as long as the connection lasts; and a frame that does not parse
would log a full traceback (2 KB for a 28-byte frame). Here a binary frame, or
a text header announcing binary attachments, closes its connection at once, and each refused
frame logs one line."""

import logging

log = logging.getLogger("wiregrad.server")

# Socket.IO packet types 5 (BINARY_EVENT) and 6 (BINARY_ACK): a header whose attachments follow
_BINARY_TYPES = ("5", "6")


def guard_frames(socketio):
    """Put the refusals in front of python-socketio's handler of Engine.IO messages."""
    server = socketio.server
    eio = server.eio
    handle = eio.handlers["message"]

    def on_message(eio_sid, data):
        if not isinstance(data, str) or data[:1] in _BINARY_TYPES:
            what = "a binary frame" if not isinstance(data, str) else "a binary event header"
            log.warning(
                "refused %s from %s (%s bytes): Wiregrad takes JSON text only; "
                "the connection is closed",
                what,
                eio_sid,
                f"{len(data):,}",
            )
            server._binary_packet.pop(eio_sid, None)
            eio.disconnect(eio_sid)
            return None
        try:
            return handle(eio_sid, data)
        except Exception as exc:  # a frame that does not parse: one line, no traceback
            log.warning(
                "refused a frame from %s (%s bytes): %s: %s",
                eio_sid,
                f"{len(data):,}",
                type(exc).__name__,
                str(exc)[:120],
            )
            return None

    eio.handlers["message"] = on_message
