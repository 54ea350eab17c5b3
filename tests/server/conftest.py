"""Real Wiregrad servers on loopback for the protocol tests, and Socket.IO clients for them.

`start_server(tmp_dir, **settings)` runs `create_app(Settings(...))` as `wiregrad serve` runs it
(`socketio.run`: the Werkzeug server, threading mode, with the app's request handler) in a
daemon thread on a free port and waits until
/api/health answers. The `server` fixture is one such server per test module; tests that need
other settings (small limits, allowed origins) start their own with `make_server`.
`sio_client()` connects a python-socketio client over a websocket and records every
`run_started`, `trace` and `run_finished` packet it receives; it disconnects at teardown.
"""

import logging
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass

import pytest
import requests
from _server_helpers import connect

from backend.server import Settings, create_app
from backend.server.app import request_handler

HOST = "127.0.0.1"


@dataclass
class Server:
    url: str
    port: int
    settings: Settings
    app: object
    socketio: object

    def api(self, path):
        return f"{self.url}/api{path}"

    def healthy(self):
        r = requests.get(self.api("/health"), timeout=5)
        return r.status_code == 200 and r.json()["status"] == "ok"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start_server(data_dir, **overrides):
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    settings = Settings(host=HOST, port=port, data_dir=data_dir, **overrides)
    app, sio = create_app(settings)
    handler = request_handler(settings)

    def serve():
        sio.run(
            app,
            host=HOST,
            port=port,
            allow_unsafe_werkzeug=True,
            log_output=False,
            request_handler=handler,
        )

    threading.Thread(target=serve, name=f"wiregrad-{port}", daemon=True).start()
    server = Server(f"http://{HOST}:{port}", port, settings, app, sio)
    deadline = time.monotonic() + 20
    while True:
        try:
            if server.healthy():
                return server
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    return start_server(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def make_server(tmp_path_factory):
    """start_server with other settings: make_server(max_message_bytes=4096)."""

    def make(**overrides):
        return start_server(tmp_path_factory.mktemp("data"), **overrides)

    return make


@pytest.fixture
def sio_client():
    """sio_client(server) -> a connected Recorder; every one is disconnected at teardown."""
    made = []

    def make(server, origin=None):
        rec = connect(server.url, origin)
        made.append(rec)
        return rec

    yield make
    for rec in made:
        if rec.client.connected:
            rec.client.disconnect()


# -- real processes -------------------------------------------------------------------------
def wait_until(ok, what, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ok():
                return
        except Exception:  # not listening yet (redis-py's and requests' errors alike)
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.05)


def start_redis(cwd):
    """Debian's redis-server on a free loopback port, without persistence: (url, process)."""
    exe = shutil.which("redis-server")
    assert exe, "redis-server is missing: run ./scripts/install-redis.sh (make test does)"
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    url = f"redis://{HOST}:{port}/0"
    wait_until(lambda: redis.Redis.from_url(url).ping(), "redis-server")
    return url, proc


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    url, proc = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    proc.terminate()
    proc.wait(10)
