"""The server's side of the editor, inside the notebook's kernel (wiregrad.show).

The widget's page speaks the protocol it speaks to `wiregrad serve` (docs/protocol.md), over
the widget's custom messages instead of Socket.IO and HTTP (frontend/src/api/widgetChannel.ts):
a request `{type: "request", id, event, payload}` gets `{type: "reply", id, data}`, and pushed
packets come as `{type: "event", event, data}`. The same code answers it as the server does:
the run and training managers (backend/server/runs.py, training.py) for `run`, `cancel`,
`tensor`, `train` and `train_control`, and the JSON API (backend/server/api.py) through the
Flask app's in-process test client for `api` calls. No server process, no port: runs happen in
the kernel, in threads of their own, on the same engine."""

import threading

from backend.server.app import create_app
from backend.server.config import Settings
from backend.server.protocol import (
    CancelRequest,
    RunRequest,
    TensorRequest,
    TrainControlRequest,
    TrainRequest,
    parse,
)
from backend.server.runs import RunManager
from backend.server.training import TrainingManager

# the one page a widget is: its client id in the run and training managers
PAGE = "widget"


class _Channel:
    """What the managers use of Flask-SocketIO: emit to the page, start a thread."""

    def __init__(self, send):
        self.send = send

    def emit(self, event, data, to=None):
        self.send({"type": "event", "event": event, "data": data})

    def start_background_task(self, fn, *args):
        t = threading.Thread(target=fn, args=args, daemon=True, name="wiregrad-run")
        t.start()
        return t


class KernelSession:
    def __init__(self, send, settings=None, observe=None):
        """`send(message)` posts to the page; `observe(event, data)` sees every packet
        (the widget keeps each run's end for `w.run`)."""
        self.settings = settings or Settings()
        self.app, _ = create_app(self.settings)
        self.http = self.app.test_client()

        def post(message):
            if observe is not None and message.get("type") == "event":
                observe(message["event"], message["data"])
            send(message)

        channel = _Channel(post)
        self.runs = RunManager(channel, self.settings)
        self.trainings = TrainingManager(channel, self.runs)
        self.handlers = {
            "run": (RunRequest, self.runs.start),
            "cancel": (CancelRequest, lambda sid, m: self.runs.cancel(sid, m.run_id)),
            "tensor": (TensorRequest, self.runs.tensor),
            "train": (TrainRequest, self.trainings.start),
            "train_control": (TrainControlRequest, self.trainings.control),
        }

    def answer(self, event, payload):
        """The reply to one request of the page (never raises: an error is a reply)."""
        try:
            if event == "api":
                return self._api(payload)
            handler = self.handlers.get(event)
            if handler is None:
                return {"error": f"{event!r} is not available in a notebook (no rooms here)"}
            model, act = handler
            msg, err = parse(model, payload, self.settings.max_message_bytes)
            return err or act(PAGE, msg)
        except Exception as exc:  # a bug of ours: the page hears of it, the kernel goes on
            return {"error": f"internal error: {type(exc).__name__}: {exc}"}

    def _api(self, payload):
        if not isinstance(payload, dict) or not isinstance(payload.get("path"), str):
            bad = {"error": "expected {method, path, body}"}
            return {"status": 400, "data": bad, "headers": {}}
        method = str(payload.get("method") or "GET").upper()
        kw = {} if payload.get("body") is None else {"json": payload["body"]}
        res = self.http.open("/api" + payload["path"], method=method, **kw)
        try:
            data = res.get_json(silent=True)
        finally:
            res.close()
        if data is None:
            data = {"error": f"{res.status_code} from {payload['path']}"}
        headers = {k.lower(): v for k, v in res.headers.items() if k.lower().startswith("x-")}
        return {"status": res.status_code, "data": data, "headers": headers}

    def close(self):
        self.runs.disconnect(PAGE)
