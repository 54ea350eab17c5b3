"""create_app: the Flask app (API + the built editor) and its Socket.IO server, from Settings."""

from pathlib import Path

import socketio.packet
from flask import Flask, abort, current_app, jsonify, request, send_from_directory
from flask_socketio import SocketIO

from . import fastjson
from . import training as trainings
from .api import api
from .config import Settings
from .events import on_message
from .protocol import (
    CancelRequest,
    RoomCreateRequest,
    RoomJoinRequest,
    RoomLeaveRequest,
    RoomStepRequest,
    RoomUpdateRequest,
    RunRequest,
    TensorRequest,
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


def _register_events(socketio, runs, max_bytes):
    trainings.register(socketio, runs, max_bytes)  # train, train_control

    @socketio.on("disconnect")
    def on_disconnect(*_args):
        if not socketio.server.manager.is_connected(request.sid, "/"):
            runs.disconnect(request.sid)  # (a client's own "disconnect" event is not one)
            current_app.extensions["wiregrad.rooms"].disconnect(request.sid)

    on_message(socketio, "run", RunRequest, runs.start, max_bytes)
    on_message(
        socketio, "cancel", CancelRequest, lambda sid, m: runs.cancel(sid, m.run_id), max_bytes
    )
    on_message(socketio, "tensor", TensorRequest, runs.tensor, max_bytes)

    @socketio.on("*")
    def on_unknown(event, *_args):
        return {"error": f"unknown event {event!r}; see docs/protocol.md"}


def _register_room_events(socketio, rooms, max_bytes):
    def on(event, model, act, **kw):
        on_message(socketio, event, model, act, max_bytes, **kw)

    # room_create may come with no payload at all
    on("room_create", RoomCreateRequest, lambda sid, m: rooms.create(sid, m.graph), default={})
    on("room_join", RoomJoinRequest, lambda sid, m: rooms.join(sid, m.code))
    on("room_leave", RoomLeaveRequest, lambda sid, m: rooms.leave(sid, m.code))
    on("room_update", RoomUpdateRequest, lambda sid, m: rooms.update(sid, m.code, m.graph))
    on("room_step", RoomStepRequest, lambda sid, m: rooms.step(sid, m.code, m.index))


def serve(settings: Settings):
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    app, socketio = create_app(settings)
    url = f"http://{settings.host}:{settings.port}/"
    print(f"Wiregrad is running: open {url}", flush=True)
    socketio.run(
        app, host=settings.host, port=settings.port, allow_unsafe_werkzeug=True, log_output=False
    )
