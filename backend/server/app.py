"""create_app: the Flask app (API + the built editor) and its Socket.IO server, from Settings."""

import functools
from pathlib import Path

import socketio.packet
from flask import Flask, abort, current_app, jsonify, request, send_from_directory
from flask_socketio import SocketIO

from . import fastjson
from . import training as trainings
from .api import api
from .config import Settings
from .protocol import (
    CancelRequest,
    RoomCreateRequest,
    RoomJoinRequest,
    RoomLeaveRequest,
    RoomStepRequest,
    RoomUpdateRequest,
    RunRequest,
    TensorRequest,
    parse,
)
from .rooms import RoomManager
from .runs import RunManager
from .store import Store

_FRONTEND = Path(__file__).resolve().parents[2] / "frontend" / "dist"

_PLACEHOLDER = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Wiregrad</title></head><body><main><h1>Wiregrad server</h1>
<p>The browser editor is not in frontend/dist: this build serves the API and Socket.IO only.</p>
<p>The API is at <a href="/api/ops">/api/ops</a>, <a href="/api/templates">/api/templates</a>
and <a href="/api/health">/api/health</a>.</p></main></body></html>"""


def create_app(settings: Settings | None = None):
    settings = settings or Settings()
    app = Flask(__name__, static_folder=None)
    app.config["WIREGRAD"] = settings
    app.config["MAX_CONTENT_LENGTH"] = settings.max_message_bytes
    app.extensions["wiregrad.store"] = Store(settings.data_dir)
    app.register_blueprint(api)
    origins = settings.origins()

    @app.before_request
    def refuse_foreign_origins():
        origin = request.headers.get("Origin")
        if origin and origin not in origins:
            return jsonify({"error": f"origin {origin} is not allowed (see --allow-origin)"}), 403
        return None

    @app.errorhandler(413)
    def too_large(_exc):
        return jsonify(
            {"error": f"the request is larger than {settings.max_message_bytes:,} bytes"}
        ), 413

    @app.errorhandler(404)
    @app.errorhandler(405)
    @app.errorhandler(500)
    def api_errors_as_json(exc):
        """Under /api every answer is JSON, errors included."""
        code = getattr(exc, "code", 500)
        if not request.path.startswith("/api/"):
            return exc
        text = {404: "no such API endpoint", 405: f"{request.method} is not allowed here"}
        return jsonify({"error": text.get(code, "internal error")}), code

    frontend = Path(settings.frontend_dir) if settings.frontend_dir else _FRONTEND

    @app.get("/")
    @app.get("/<path:path>")
    def editor(path="index.html"):
        if path.startswith("api/"):
            abort(404)
        if not (frontend / "index.html").is_file():
            return _PLACEHOLDER
        if not (frontend / path).is_file():
            path = "index.html"  # the editor's own routes
        return send_from_directory(frontend, path)

    socketio = SocketIO(
        app,
        async_mode="threading",
        cors_allowed_origins=origins,
        # the transport takes up to 4x the limit, so that a message over the limit gets an
        # error reply from its handler (protocol.parse) rather than a dropped connection
        max_http_buffer_size=4 * settings.max_message_bytes,
        json=fastjson,
        serializer=_TextPacket,
    )
    runs = RunManager(socketio, settings)
    app.extensions["wiregrad.runs"] = runs
    _register_events(socketio, runs, settings.max_message_bytes)
    rooms = RoomManager(socketio)  # owners' packets go to their rooms too (docs/training.md)
    runs.mirror = rooms.mirror
    app.extensions["wiregrad.rooms"] = rooms
    _register_room_events(socketio, rooms, settings.max_message_bytes)
    return app, socketio


class _TextPacket(socketio.packet.Packet):
    """Socket.IO packets that are JSON text only. python-socketio otherwise walks every
    outgoing payload looking for bytes to send as binary attachments, which on a trace packet
    of thousands of floats cost more than encoding it. Wiregrad sends and accepts no binary."""

    uses_binary_events = False
    json = fastjson


def _guarded(fn):
    """A handler that answers every message, even one that breaks it, and never takes the
    server down."""

    @functools.wraps(fn)
    def handler(*args):
        try:
            return fn(*args)
        except Exception as exc:
            return {"error": f"internal error: {type(exc).__name__}"}

    return handler


def _register_events(socketio, runs, max_bytes):
    trainings.register(socketio, runs, max_bytes)  # train, train_control

    @socketio.on("disconnect")
    def on_disconnect(*_args):
        if not socketio.server.manager.is_connected(request.sid, "/"):
            runs.disconnect(request.sid)  # (a client's own "disconnect" event is not one)
            current_app.extensions["wiregrad.rooms"].disconnect(request.sid)

    @socketio.on("run")
    @_guarded
    def on_run(data=None):
        msg, err = parse(RunRequest, data, max_bytes)
        return err or runs.start(request.sid, msg)

    @socketio.on("cancel")
    @_guarded
    def on_cancel(data=None):
        msg, err = parse(CancelRequest, data, max_bytes)
        return err or runs.cancel(request.sid, msg.run_id)

    @socketio.on("tensor")
    @_guarded
    def on_tensor(data=None):
        msg, err = parse(TensorRequest, data, max_bytes)
        return err or runs.tensor(request.sid, msg)

    @socketio.on("*")
    def on_unknown(event, *_args):
        return {"error": f"unknown event {event!r}; see docs/protocol.md"}


def _register_room_events(socketio, rooms, max_bytes):
    @socketio.on("room_create")
    @_guarded
    def on_room_create(data=None):
        msg, err = parse(RoomCreateRequest, {} if data is None else data, max_bytes)
        return err or rooms.create(request.sid, msg.graph)

    @socketio.on("room_join")
    @_guarded
    def on_room_join(data=None):
        msg, err = parse(RoomJoinRequest, data, max_bytes)
        return err or rooms.join(request.sid, msg.code)

    @socketio.on("room_leave")
    @_guarded
    def on_room_leave(data=None):
        msg, err = parse(RoomLeaveRequest, data, max_bytes)
        return err or rooms.leave(request.sid, msg.code)

    @socketio.on("room_update")
    @_guarded
    def on_room_update(data=None):
        msg, err = parse(RoomUpdateRequest, data, max_bytes)
        return err or rooms.update(request.sid, msg.code, msg.graph)

    @socketio.on("room_step")
    @_guarded
    def on_room_step(data=None):
        msg, err = parse(RoomStepRequest, data, max_bytes)
        return err or rooms.step(request.sid, msg.code, msg.index)


def serve(settings: Settings):
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    app, socketio = create_app(settings)
    url = f"http://{settings.host}:{settings.port}/"
    print(f"Wiregrad is running: open {url}", flush=True)
    socketio.run(
        app, host=settings.host, port=settings.port, allow_unsafe_werkzeug=True, log_output=False
    )
