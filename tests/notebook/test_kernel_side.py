"""The widget's kernel side without a page: the protocol answered by the server's own managers
over the widget's channel (wiregrad/kernel.py, wiregrad/widget.py), and the package's import
needing neither PyTorch nor anywidget."""

import subprocess
import sys
import threading

import orjson
import pytest
import torch

import wiregrad as wg
from backend.server import typed_wire
from backend.server.config import Settings
from wiregrad.kernel import KernelSession

SQUARE = {
    "format": "wiregrad.graph",
    "version": 1,
    "nodes": [
        {"id": "x", "op": "tensor", "params": {"value": 2.0, "requires_grad": True}},
        {"id": "y", "op": "tensor", "params": {"value": 3.0, "requires_grad": True}},
        {"id": "a", "op": "add", "params": {}},
        {"id": "z", "op": "pow", "params": {"scalar": 2.0}},
    ],
    "edges": [
        {"id": "e1", "source": "x", "target": "a", "targetPort": "input"},
        {"id": "e2", "source": "y", "target": "a", "targetPort": "other"},
        {"id": "e3", "source": "a", "target": "z", "targetPort": "input"},
    ],
    "target": "z",
}


@pytest.fixture
def session(tmp_path):
    got, done = [], threading.Event()

    def send(message):
        got.append(message)
        if message.get("event") == "run_finished":
            done.set()

    s = KernelSession(send, Settings(data_dir=tmp_path))
    s.got, s.done = got, done
    yield s
    s.close()


def test_a_run_streams_its_packets_and_keeps_its_tensors(session):
    ack = session.answer("run", {"graph": SQUARE, "mode": "backward"})
    assert "run_id" in ack, ack
    assert session.done.wait(30)
    events = [m["event"] for m in session.got]
    assert events[0] == "run_started" and events[-1] == "run_finished"
    assert session.got[-1]["data"]["status"] == "ok"
    reply = session.answer("tensor", {"run_id": ack["run_id"], "node": "x", "kind": "grad"})
    assert reply["values"] == 10.0 and reply["shape"] == []  # d(x+y)^2/dx = 2(x+y)


def test_the_api_is_the_servers(session):
    ops = session.answer("api", {"method": "GET", "path": "/ops"})
    assert ops["status"] == 200 and any(o["name"] == "matmul" for o in ops["data"]["ops"])
    code = session.answer(
        "api", {"method": "POST", "path": "/export", "body": {"graph": SQUARE, "flavor": "torch"}}
    )
    assert code["status"] == 200 and "import torch" in code["data"]["code"]
    bad = session.answer("api", {"method": "POST", "path": "/validate", "body": {"nodes": 3}})
    assert bad["status"] == 400


def test_bad_requests_get_answers_not_exceptions(session):
    assert "error" in session.answer("room_create", {})  # no rooms in a notebook
    assert "error" in session.answer("run", "not an object")
    assert "error" in session.answer("run", {"graph": {"format": "nope"}})
    assert session.answer("api", None)["status"] == 400


def test_the_widget_packs_its_messages(tmp_path):
    w = wg.show(SQUARE, data_dir=tmp_path)
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    out = w.run("backward")
    assert out.loss == 25.0 and out.grads["x"] == 10.0
    content, buffers = sent[0]
    assert content == {"type": "packed", "wire": typed_wire.VERSION}
    first = orjson.loads(bytes(buffers[0]))
    assert first["event"] == "run_started" and first["data"]["adopt"] is True
    # a page's request, answered through the same channel
    w._on_message(
        w,
        {
            "type": "request",
            "id": 7,
            "event": "api",
            "payload": {"method": "GET", "path": "/templates"},
            "wire": typed_wire.VERSION,
        },
        [],
    )
    reply = orjson.loads(bytes(sent[-1][1][0]))
    assert reply["type"] == "reply" and reply["id"] == 7 and reply["data"]["status"] == 200


def test_importing_wiregrad_needs_neither_torch_nor_anywidget():
    code = "import sys, wiregrad; print('torch' in sys.modules, 'anywidget' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_widget_sends_arrays_typed_and_tells_an_old_page(tmp_path):
    """The widget speaks the server's wire (backend/server/typed_wire.py): a reply's arrays
    come as typed bytes in the message's second buffer, equal to the engine's values bit for
    bit; a page that does not announce the wire is told to reload, nothing else."""
    doc = {
        "format": "wiregrad.graph",
        "version": 1,
        "nodes": [
            {"id": "x", "op": "tensor", "params": {"value": [[0.1, -2.5], [3.0, 1e-8]]}},
            {
                "id": "i",
                "op": "tensor",
                "params": {"value": [9007199254740993, -5], "dtype": "int64"},
            },
            {"id": "b", "op": "gt", "params": {}},
            {"id": "z", "op": "tensor", "params": {"value": 0.5}},
        ],
        "edges": [
            {"id": "x-b", "source": "x", "sourcePort": "out", "target": "b", "targetPort": "input"},
            {"id": "z-b", "source": "z", "sourcePort": "out", "target": "b", "targetPort": "other"},
        ],
    }
    w = wg.show(doc, data_dir=tmp_path)
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    out = w.run("forward")
    run_id = orjson.loads(bytes(sent[0][1][0]))["data"]["run_id"]

    def ask(payload, wire=typed_wire.VERSION):
        request = {"type": "request", "id": 1, "event": "tensor", "payload": payload}
        if wire is not None:
            request["wire"] = wire
        w._on_message(w, request, [])
        content, buffers = sent[-1]
        assert content == {"type": "packed", "wire": typed_wire.VERSION}
        reply = orjson.loads(bytes(buffers[0]))["data"]
        return typed_wire.decode(reply, bytes(buffers[1]) if len(buffers) > 1 else None)

    want = {
        "x": torch.tensor([[0.1, -2.5], [3.0, 1e-8]]),
        "i": torch.tensor([9007199254740993, -5]),
        "b": torch.tensor([[0.1, -2.5], [3.0, 1e-8]]) > 0.5,
    }
    for node, t in want.items():
        got = ask({"run_id": run_id, "node": node})["values"]
        assert got.dtype == t.numpy().dtype and got.shape == tuple(t.shape), node
        assert got.tobytes() == t.numpy().tobytes(), node  # bit for bit, as PyTorch has it
        assert got.tobytes() == out.values[node].tobytes(), node  # and as the engine made it
    old = ask({"run_id": run_id, "node": "x"}, wire=None)
    assert old["code"] == "client_version" and "Reload the page" in old["error"]
