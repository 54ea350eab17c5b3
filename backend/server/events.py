"""One way to take a client's Socket.IO message: validate it against its pydantic model, act
on it, and answer every message (an error reply for a bad one, or for one that breaks the
handler), so that no message takes the server down; and the replies for a graph that cannot
run, shared by runs and trainings."""

import functools
from typing import Any, NamedTuple

from flask import request

from ..graph import Problem, edit_nodes, validate
from ..graph import parse as parse_document
from ..graph.document.format import invalid_text
from ..graph.document.modules import ModuleProblems, flatten
from .protocol import parse

UNREACHABLE_QUEUE = (
    "rooms are unavailable for a moment: this server cannot reach Redis, its message queue "
    "(--message-queue); try again shortly"
)


def guarded(fn):
    """A handler that answers every message, even one that breaks it."""

    @functools.wraps(fn)
    def handler(*args):
        try:
            return fn(*args)
        except Exception as exc:
            if _queue_unreachable(exc):
                return {"error": UNREACHABLE_QUEUE, "code": "unavailable"}
            return {"error": f"internal error: {type(exc).__name__}"}

    return handler


def _queue_unreachable(exc):
    """Whether `exc` is redis-py's word for a Redis that does not answer (redis is imported
    only by a server with a message queue, so it is recognised without importing it)."""
    kinds = {f"{c.__module__}.{c.__name__}" for c in type(exc).__mro__}
    return bool(kinds & {"redis.exceptions.ConnectionError", "redis.exceptions.TimeoutError"})


def on_message(socketio, event, model, act, max_bytes, default=None):
    """Register `event`: its payload is parsed as `model` (`default` stands in for a missing
    payload), then `act(sid, message)` makes the reply."""

    @guarded
    def handler(*args):
        if len(args) > 1:  # python-socketio hands each extra argument of an emit over
            return {"error": f"{event} takes one argument, an object; it was sent {len(args)}"}
        data = args[0] if args else None
        msg, err = parse(model, default if data is None else data, max_bytes)
        return err or act(request.sid, msg)

    handler.__name__ = f"on_{event}"
    socketio.on_event(event, handler)


class Graph(NamedTuple):
    """A graph a client sent, checked: `doc` as sent (what a later edit applies to, what a
    training writes its trained values back into) and `flat`, its modules unpacked
    (modules.flatten): what validation checked and what a run runs, unpacked once."""

    doc: Any
    flat: Any


def read_graph(data, limits, target=None):
    """A run's or a training's graph: (Graph, None) when it can run, else (None, the error
    reply with every problem at once). `target`, when given, must be one of its nodes."""
    try:
        doc = parse_document(data)
    except Exception as exc:  # pydantic's ValidationError: the document's structure
        return None, {"error": f"invalid graph document: {invalid_text(exc)}", "node_errors": []}
    return checked(doc, limits, target)


def read_edit(base, nodes, limits, target=None):
    """A run's graph sent as an edit of `base` (an earlier run's document): as read_graph."""
    try:
        doc = edit_nodes(base, nodes)
    except Exception as exc:  # EditError, or pydantic's ValidationError of a node
        return None, {"error": f"invalid edit: {invalid_text(exc)}", "node_errors": []}
    return checked(doc, limits, target)


def checked(doc, limits, target=None):
    """(Graph, None) when `doc` can run (and `target`, when given, is one of its nodes), else
    (None, the error reply)."""
    flat = None
    try:
        flat = flatten(doc, limits.max_nodes, limits.max_edges)
    except ModuleProblems as bad:
        problems = bad.problems
    else:
        problems = validate(flat, limits)
    if target is not None and all(n.id != target for n in doc.nodes):
        problems.append(Problem(f"the target '{target}' is not a node of the graph"))
    if problems:
        return None, problems_reply(problems)
    return Graph(doc, flat), None


def problems_reply(problems):
    n = len(problems)
    return {
        "error": f"the graph has {n} problem{'s' if n != 1 else ''}",
        "node_errors": [p.to_dict() for p in problems],
    }
