"""create_app: the Flask app (API + the built editor) and its Socket.IO server, from Settings."""

from pathlib import Path

from flask import Flask, abort, current_app, jsonify, request, send_from_directory
from flask_socketio import ConnectionRefusedError, SocketIO

from . import auth, collector, fastjson
from . import training as trainings
from .api import api
from .client_version import ClientVersions
from .config import Settings
from .events import on_message
from .protocol import (
    CancelRequest,
    RoomAnswerRequest,
    RoomAskRequest,
    RoomCreateRequest,
    RoomJoinRequest,
    RoomLeaveRequest,
    RoomLessonRequest,
    RoomPaceRequest,
    RoomResumeRequest,
    RoomRevealRequest,
    RoomSelectRequest,
    RoomStepRequest,
    RoomUpdateRequest,
    RunRequest,
    TensorRequest,
)
from .ratelimit import JoinGate, RateLimiter, gate_costly_events
from .room_archive import RoomArchive
from .room_claims import RoomClaims
from .room_delivery import client_manager
from .room_registry import make_registry
from .rooms import RoomManager
from .runs import RunManager
from .security_headers import SecurityHeaders
from .store import Store
from .store_errors import StoreDamaged
from .transport import guard_frames
from .typed_wire import SocketPacket

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
    store = app.extensions["wiregrad.store"] = Store(settings.data_dir)
    app.register_blueprint(api)
    origin_allowed = auth.origin_checker(settings)

    @app.before_request
    def refuse_foreign_origins():
        origin = request.headers.get("Origin")
        if origin and not origin_allowed(origin, request.environ):
            return jsonify({"error": f"origin {origin} is not allowed (see --allow-origin)"}), 403
        return None

    auth.install(app, settings, store)  # who may read and change which stored graph

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
        cors_allowed_origins=origin_allowed,
        # several processes: rooms' packets go through Redis (docs/deployment.md); a room's
        # follower that falls behind gets its state, not every packet (room_delivery.py)
        client_manager=client_manager(settings.message_queue),
        # the transport takes up to 4x the limit, so that a message over the limit gets an
        # error reply from its handler (protocol.parse) rather than a dropped connection
        max_http_buffer_size=4 * settings.max_message_bytes,
        json=fastjson,
        # arrays as typed binary buffers, one attachment a message (typed_wire.py)
        serializer=SocketPacket,
    )
    guard_frames(socketio)  # binary frames refused at the transport (transport.py)
    runs = RunManager(socketio, settings)
    app.extensions["wiregrad.runs"] = runs
    versions = ClientVersions()  # which wire each client reads (client_version.py)
    runs.for_client = versions.for_client
    _register_events(socketio, runs, settings, versions)
    # owners' packets go to their rooms too (docs/training.md); rooms live in Redis when
    # there is a message queue, so that every process sees them
    rooms = RoomManager(
        socketio,
        registry=make_registry(settings.message_queue),
        grace=settings.room_grace_seconds,
        claims=RoomClaims(settings.data_dir),
        archive=RoomArchive(settings.data_dir),
    )
    runs.mirror = rooms.mirror
    app.extensions["wiregrad.rooms"] = rooms
    limiter = app.extensions["wiregrad.limiter"] = RateLimiter()
    _register_room_events(socketio, rooms, settings, JoinGate(limiter, settings))
    gate_costly_events(socketio, limiter, settings)
    # a page of another wire version is told so, never sent what it would misread
    versions.gate(socketio)
    # the Host check comes before everything, Socket.IO's handshake included (auth.py)
    app.wsgi_app = auth.HostCheck(app.wsgi_app, settings)
    # outermost: every answer, the Host check's and Socket.IO's included (security_headers.py)
    app.wsgi_app = SecurityHeaders(app.wsgi_app)
    return app, socketio


def _register_events(socketio, runs, settings, versions):
    max_bytes = settings.max_message_bytes
    trainings.register(socketio, runs, max_bytes)  # train, train_control
    connected = set()  # this process's Socket.IO clients, for the connection cap

    @socketio.on("connect")
    def on_connect(auth=None):
        if len(connected) >= settings.max_connections:
            raise ConnectionRefusedError(
                f"the server is full ({settings.max_connections} connections); try again later"
            )
        connected.add(request.sid)
        versions.connected(request.sid, auth)

    @socketio.on("disconnect")
    def on_disconnect(*_args):
        if not socketio.server.manager.is_connected(request.sid, "/"):
            connected.discard(request.sid)  # (a client's own "disconnect" event is not one)
            versions.gone(request.sid)
            runs.disconnect(request.sid)
            # a room it owns waits room_grace_seconds for it to come back (room_resume)
            current_app.extensions["wiregrad.rooms"].disconnect(request.sid)

    on_message(socketio, "run", RunRequest, runs.start, max_bytes)
    on_message(
        socketio, "cancel", CancelRequest, lambda sid, m: runs.cancel(sid, m.run_id), max_bytes
    )
    on_message(socketio, "tensor", TensorRequest, runs.tensor, max_bytes)

    @socketio.on("*")
    def on_unknown(event, *_args):
        return {"error": f"unknown event {event!r}; see docs/protocol.md"}


def _register_room_events(socketio, rooms, settings, joins):
    def on(event, model, act, **kw):
        on_message(socketio, event, model, act, settings.max_message_bytes, **kw)

    # room_create may come with no payload at all
    on("room_create", RoomCreateRequest, lambda sid, m: rooms.create(sid, m.graph), default={})
    # codes and secrets can be guessed only as fast as JoinGate lets anyone try
    on("room_join", RoomJoinRequest, lambda sid, m: joins(sid, lambda: rooms.join(sid, m.code)))
    on(
        "room_resume",
        RoomResumeRequest,
        lambda sid, m: joins(sid, lambda: rooms.resume(sid, m.code, m.secret)),
    )
    on("room_leave", RoomLeaveRequest, lambda sid, m: rooms.leave(sid, m.code))
    on("room_update", RoomUpdateRequest, lambda sid, m: rooms.update(sid, m.code, m.graph))
    on("room_step", RoomStepRequest, lambda sid, m: rooms.step(sid, m.code, m.index))
    on("room_lesson", RoomLessonRequest, lambda sid, m: rooms.lesson(sid, m.code, m.index))
    on("room_pace", RoomPaceRequest, lambda sid, m: rooms.pace(sid, m.code, m.steps_per_second))
    on("room_select", RoomSelectRequest, lambda sid, m: rooms.select(sid, m.code, m.edge))
    # predict, then reveal (room_quiz.py)
    on(
        "room_ask",
        RoomAskRequest,
        lambda sid, m: rooms.ask(
            sid,
            m.code,
            m.target.model_dump(),
            m.question,
            m.names,
            m.truth,
            [x.model_dump() for x in m.mistakes],
        ),
    )
    on(
        "room_answer",
        RoomAnswerRequest,
        lambda sid, m: rooms.answer(sid, m.code, m.quiz_id, m.answer, m.name, m.token),
    )
    on("room_reveal", RoomRevealRequest, lambda sid, m: rooms.reveal(sid, m.code, m.quiz_id))
    on("room_quiz_end", RoomLeaveRequest, lambda sid, m: rooms.end_quiz(sid, m.code))
    on("room_quiz_csv", RoomLeaveRequest, lambda sid, m: rooms.quiz_csv(sid, m.code))
    on("room_quiz_spread", RoomLeaveRequest, lambda sid, m: rooms.quiz_spread(sid, m.code))


def serve(settings: Settings):
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    _ignore_file_size_signal()
    try:
        app, socketio = create_app(settings)
    except StoreDamaged as exc:  # one line with the file's path, no traceback
        import sys

        print(exc, file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    collector.settle()
    teacher, students = auth.urls(settings)
    if settings.teacher_token is None:
        print(f"Wiregrad is running: open {teacher}", flush=True)
    else:
        print(
            "Wiregrad is running beyond loopback.\n"
            f"  Teacher (sees and manages every graph; keep it secret): {teacher}\n"
            f"  Students: {students}",
            flush=True,
        )

    socketio.run(
        app,
        host=settings.host,
        port=settings.port,
        allow_unsafe_werkzeug=True,
        log_output=False,
        request_handler=request_handler(settings),
    )


def _ignore_file_size_signal():
    """A write past the file size limit (`ulimit -f`) sends SIGXFSZ, which ends a process by
    default; ignored, the write fails with EFBIG and a save answers a clear 507
    (store_errors). CPython ignores it at start already; this keeps it so when the server is
    embedded in a process that does not."""
    import signal

    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def request_handler(settings: Settings):
    """Werkzeug's request handler with a socket timeout: socketserver applies it to every read
    of a request, so a client that sends half a request and waits holds a thread
    `request_timeout` seconds at most (auth.HostCheck lifts it for websockets, which Engine.IO's
    pings keep alive). Werkzeug's server has no connection cap of its own: the Socket.IO
    `connect` handler caps connections (Settings.max_connections)."""
    from werkzeug.serving import WSGIRequestHandler

    return type("TimedRequestHandler", (WSGIRequestHandler,), {"timeout": settings.request_timeout})
