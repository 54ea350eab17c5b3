"""`wg.show(...)`: the editor as a notebook widget (anywidget), its runs in the kernel.

The page is the editor the server serves, built as one ES module that ships in this package
(wiregrad/static/widget.js, `make widget`; no CDN, works offline). It speaks the server's
protocol over the widget's custom messages, answered in the kernel by the server's own code
(kernel.py). `document` is the open graph, kept in step both ways: edits on the canvas reach
`w.document`, and a document set from Python opens on the canvas. Runs started from Python
(`w.run`, `w.train`) show on the canvas as the page's own do."""

import json
import threading
from pathlib import Path

import anywidget
import traitlets

from backend.server import typed_wire
from backend.server.client_version import version_error
from backend.server.config import Settings
from backend.server.protocol import RunRequest, TrainRequest

from .code import from_code, to_code, trace
from .documents import DocumentError, as_document, save
from .html_export import export_html
from .kernel import PAGE, KernelSession
from .page_script import WIDGET_JS, built
from .running import RunOutput, outputs_of


def _document_of(obj, example_inputs):
    """A document dict from whatever `wg.show` was given."""
    from .documents import to_dict

    if isinstance(obj, dict) or type(obj).__name__ == "GraphDocument":
        return to_dict(obj)
    if isinstance(obj, Path) or (isinstance(obj, str) and len(obj) < 4096 and "\n" not in obj):
        path = Path(obj)
        if path.suffix == ".py" and path.is_file():
            beside = path.with_suffix(".safetensors")  # (the weights an export wrote there)
            weights = beside if beside.is_file() else None
            return from_code(path.read_text(encoding="utf-8"), weights)
        if path.is_file():
            return to_dict(path)
    if isinstance(obj, str):
        return to_dict(obj) if obj.lstrip().startswith("{") else from_code(obj)
    if callable(obj):
        return trace(obj, *example_inputs)
    raise TypeError(
        "wg.show takes a document, a graph file, PyTorch code, or a module or function to "
        f"trace; not {type(obj).__name__}"
    )


class Editor(anywidget.AnyWidget):
    _esm = WIDGET_JS
    document = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(640).tag(sync=True)

    @classmethod
    def of(cls, obj=None, *example_inputs, **options):
        doc = {} if obj is None else _document_of(obj, example_inputs)
        return cls(doc, **options)

    def __init__(self, document=None, *, height=640, data_dir=None, device=None, **kw):
        built()
        super().__init__(document=document or {}, height=height, **kw)
        settings = Settings(
            **({"data_dir": Path(data_dir)} if data_dir else {}),
            **({"device": device} if device else {}),
        )
        self._lock = threading.Lock()  # held while a run from Python starts (see _post)
        self._adopted = set()  # ids of runs and trainings started from Python
        self._ended = {}  # id -> its run_finished / train_finished packet
        self._ending = threading.Condition()
        self._losses = {}  # training id -> its losses so far (a training from Python)
        self.last_run = []  # [(event, data)] of the last run shown: what export_html keeps
        self._session = KernelSession(self._post, settings, observe=self._observe)
        self.on_msg(self._on_message)

    # -- the channel ---------------------------------------------------------------------------
    def _post(self, message):
        if message.get("type") == "event" and message["event"] in ("run_started", "train_started"):
            data = message["data"]
            with self._lock:  # (w.run names its run's id before its first packet goes out)
                key = data.get("run_id") or data.get("train_id")
                if key in self._adopted:
                    message = {**message, "data": {**data, "adopt": True}}
        self._deliver(message)

    def _deliver(self, message):
        """One message to the page in the server's wire (backend/server/typed_wire.py): its
        JSON in the first binary buffer, encoded once, by orjson, not again by the kernel's
        message packer, and its arrays (previews, tensor pages) as typed bytes in the second."""
        text, blob = typed_wire.encode(message)
        buffers = [text.encode()] if blob is None else [text.encode(), blob]
        self.send({"type": "packed", "wire": typed_wire.VERSION}, buffers=buffers)

    def _observe(self, event, data):
        if event == "train_progress" and data.get("train_id") in self._adopted:
            self._losses.setdefault(data["train_id"], []).extend(data.get("losses") or [])
        if event == "run_started":
            self.last_run = [(event, data)]
        elif (
            event in ("trace", "run_finished")
            and self.last_run
            and data.get("run_id") == self.last_run[0][1].get("run_id")
        ):
            self.last_run.append((event, data))
        key = data.get("run_id") or data.get("train_id")
        if event in ("run_finished", "train_finished") and key in self._adopted:
            with self._ending:  # (only Python's own runs are waited for, so only they are kept)
                self._ended[key] = data
                self._ending.notify_all()

    def _on_message(self, _widget, content, _buffers):
        if not isinstance(content, dict) or content.get("type") != "request":
            return
        wire = content.get("wire")
        if wire != typed_wire.VERSION:  # a page built before this package: told to rebuild
            reply = version_error(wire)
        else:
            reply = self._session.answer(content.get("event"), content.get("payload"))
        self._deliver({"type": "reply", "id": content.get("id"), "data": reply})

    @traitlets.observe("document")
    def _document_set(self, change):
        if "document" in getattr(self, "_property_lock", {}):
            return  # an edit on the canvas: the page has it already
        self._deliver({"type": "document", "document": change["new"]})

    # -- from Python -----------------------------------------------------------------------------
    def _wait(self, key, timeout):
        with self._ending:
            if not self._ending.wait_for(lambda: key in self._ended, timeout):
                raise TimeoutError(f"{key} did not finish in {timeout} s")
            self._adopted.discard(key)
            return self._ended.pop(key)

    def run(self, mode="forward", target=None, timeout=600):
        """Run the open graph ("forward" or "backward") in the kernel and show it on the
        canvas; returns its values and gradients by name (a RunOutput)."""
        doc = as_document(self.document)
        request = RunRequest(graph=json.loads(doc.model_dump_json()), mode=mode, target=target)
        with self._lock:
            ack = self._session.runs.start(PAGE, request)
            if "error" in ack:
                raise DocumentError(_refusal(ack))
            self._adopted.add(ack["run_id"])
        finished = self._wait(ack["run_id"], timeout)
        client = self._session.runs.client(PAGE)
        kept = client.finished.get(ack["run_id"])
        if kept is None:
            status, error = finished["status"], finished.get("error")
            return RunOutput(status, finished.get("target"), error=error)
        return outputs_of(kept[0], doc)

    def train(self, timeout=3600, **config):
        """Train the open graph by its training settings (each may be given here: steps,
        optimizer, lr, ...; docs/training.md), shown live on the canvas; the trained values
        go into `document`. Without training settings, the loss is the document's target.
        Returns the losses, step by step."""
        if not self.document.get("training") and "loss" not in config:
            config["loss"] = self.document.get("target")  # the traced loss, as it was drawn
        request = TrainRequest(graph=self.document, config=config or None)
        with self._lock:
            ack = self._session.trainings.start(PAGE, request)
            if "error" in ack:
                raise DocumentError(_refusal(ack))
            self._adopted.add(ack["train_id"])
        finished = self._wait(ack["train_id"], timeout)
        if finished.get("graph"):
            self.document = finished["graph"]
        if finished.get("status") == "error":
            raise RuntimeError(f"training failed: {finished.get('error')}")
        return self._losses.pop(ack["train_id"], [])

    def to_code(self, flavor="torch", trace=False, path=None):
        """The graph as a script (wg.to_code: with `path`, written there, its weights beside)."""
        return to_code(self.document, flavor=flavor, trace=trace, path=path)

    def save(self, path):
        return save(self.document, path)

    def export_html(self, path):
        """One self-contained HTML file: the graph and its last run, view-only, offline."""
        return export_html(self, path)

    def close(self):
        self._session.close()
        super().close()


def _refusal(ack):
    lines = [ack.get("error", "refused")]
    for p in ack.get("node_errors") or []:
        lines.append(f"  node {p.get('node')}: {p.get('message')}")
    return "\n".join(lines)
