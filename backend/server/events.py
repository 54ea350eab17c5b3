"""One way to take a client's Socket.IO message: validate it against its pydantic model, act
on it, and answer every message (an error reply for a bad one, or for one that breaks the
handler), so that no message takes the server down."""

import functools

from flask import request

from .protocol import parse


def guarded(fn):
    """A handler that answers every message, even one that breaks it."""

    @functools.wraps(fn)
    def handler(*args):
        try:
            return fn(*args)
        except Exception as exc:
            return {"error": f"internal error: {type(exc).__name__}"}

    return handler


def on_message(socketio, event, model, act, max_bytes, default=None):
    """Register `event`: its payload is parsed as `model` (`default` stands in for a missing
    payload), then `act(sid, message)` makes the reply."""

    @guarded
    def handler(data=None):
        msg, err = parse(model, default if data is None else data, max_bytes)
        return err or act(request.sid, msg)

    handler.__name__ = f"on_{event}"
    socketio.on_event(event, handler)
