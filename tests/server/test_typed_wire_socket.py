"""Arrays as typed binary buffers over a real Socket.IO connection (backend/server/typed_wire.py,
docs/protocol.md "Typed arrays"): a run's previews and a tensor page arrive as float32, int64
and bool bytes equal to the engine's bit for bit; each binary message has exactly one
attachment; a page's bytes stay within one message's limit; a client that does not announce
the wire is told so and sent nothing."""

import json

import numpy as np
import pytest
import torch
from _server_helpers import (
    EVENTS,
    InOrderClient,
    RawClient,
    Recorder,
    WirePacket,
    connect,
    edge,
    graph,
    node,
    tensor,
)

from backend.graph.running.records import expand_records
from backend.server import fastjson, typed_wire
from engine.watch import array_of

X = [[0.1, -2.5], [3.0, 1e-8]]
BIG = 2**53 + 1  # no double holds it: JSON numbers would round it on the page


def mixed_dtypes():
    """float32 values and gradients, an int64 leaf, a bool comparison."""
    return graph(
        [
            tensor("x", X, True),
            tensor("k", [[3.0, 0.5], [-1.0, 7.0]]),
            node("y", "mul"),
            node("loss", "sum"),
            tensor("i", [BIG, -5], dtype="int64"),
            tensor("z", 0.5),
            node("b", "gt"),
        ],
        [
            edge("x", "y"),
            edge("k", "y", "other"),
            edge("y", "loss"),
            edge("x", "b"),
            edge("z", "b", "other"),
        ],
        target="loss",
    )


def torch_expected():
    x = torch.tensor(X, requires_grad=True)
    k = torch.tensor([[3.0, 0.5], [-1.0, 7.0]])
    y = x * k
    loss = y.sum()
    loss.backward()
    return {
        ("value", "x"): x.detach(),
        ("value", "y"): y.detach(),
        ("value", "loss"): loss.detach(),
        ("value", "i"): torch.tensor([BIG, -5]),
        ("value", "b"): x.detach() > 0.5,
        ("grad", "x"): x.grad,
    }


def same(got, want):
    """Equal dtype, shape and bytes: the engine's numbers exactly, NaN and -0 included."""
    want = want.numpy() if isinstance(want, torch.Tensor) else want
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want)
    assert got.tobytes() == want.tobytes(), (got, want)


def test_previews_and_tensor_pages_arrive_typed_and_exact(server):
    rec = connect(server.url, materialize=False)  # arrays as the numpy views of the bytes
    try:
        run_id, finished, _ = rec.run_to_end(mixed_dtypes(), "backward")
        assert finished["status"] == "ok"
        raw = rec.raw_records(run_id)
        tables = [r for r in raw if r["kind"] == "summaries"]
        # every table's numbers came as typed buffers, not JSON numbers
        for t in tables:
            assert isinstance(t["preview"], np.ndarray) and t["preview"].dtype.name == t["dtype"]
            assert isinstance(t["stats"], np.ndarray) and t["stats"].dtype == np.float64
            assert isinstance(t["nan"], np.ndarray) and t["nan"].dtype == np.int64
        records = expand_records(raw)
        want = torch_expected()
        for (kind, where), t in want.items():
            if kind == "value":
                (r,) = [r for r in records if r["kind"] == "value" and r["node"] == where]
            else:
                (r,) = [r for r in records if r["kind"] == "leaf_grad" and r["node"] == where]
            same(np.asarray(r["summary"]["preview"]), t)
            reply = rec.call("tensor", {"run_id": run_id, "node": where, "kind": kind})
            same(reply["values"], t)
        # and what the server's engine holds, for a value and a gradient
        kept = server.app.extensions["wiregrad.runs"].client(rec.client.get_sid()).finished
        result = kept[run_id][0]
        same(
            rec.call("tensor", {"run_id": run_id, "node": "y"})["values"],
            array_of(result.values["y"]),
        )
    finally:
        rec.client.disconnect()


def test_a_page_of_a_large_tensor_is_its_elements_exactly(server):
    doc = graph([tensor("w", shape=[700, 400], init="randn", seed=3)], target="w")
    rec = connect(server.url, materialize=False)
    try:
        run_id, finished, _ = rec.run_to_end(doc)
        assert finished["status"] == "ok"
        engine = array_of(
            server.app.extensions["wiregrad.runs"]
            .client(rec.client.get_sid())
            .finished[run_id][0]
            .values["w"]
        )
        offset, count = 1000, 262_144
        page = rec.call("tensor", {"run_id": run_id, "node": "w", "offset": offset, "count": count})
        same(page["values"], engine.reshape(-1)[offset : offset + count])
        assert page["numel"] == 280_000 and page["offset"] == offset
    finally:
        rec.client.disconnect()


def test_every_binary_message_has_one_attachment(server):
    """Read frame by frame: a binary event or ack announces exactly one attachment, which is
    the next frame; no other binary frame comes."""
    raw = RawClient(server.url)
    try:
        frames = []
        raw.ws.send("421" + json.dumps(["run", {"graph": mixed_dtypes(), "mode": "backward"}]))
        while True:
            f = raw._recv_packet()
            frames.append(f)
            if isinstance(f, str) and f.startswith('42["run_finished"'):
                break
        # Engine.IO's message "4", then Socket.IO's BINARY_EVENT "5" or BINARY_ACK "6"
        binary_headers = [
            i for i, f in enumerate(frames) if isinstance(f, str) and f[:2] in ("45", "46")
        ]
        assert binary_headers, "no binary message: nothing was sent typed"
        for i, f in enumerate(frames):
            if isinstance(f, bytes):
                assert i - 1 in binary_headers
        for i in binary_headers:
            assert frames[i].startswith("451-"), frames[i][:20]  # (events: no ack id)
            assert isinstance(frames[i + 1], bytes)
            # the placeholder is the last argument, and the only one
            args = json.loads(frames[i][4:])
            assert args[-1] == {"_placeholder": True, "num": 0}
            assert sum(json.dumps(a).count("_placeholder") for a in args) == 1
    finally:
        raw.close()


def test_a_tensor_page_stays_within_one_messages_bytes(make_server):
    """max_message_bytes bounds a page's bytes too: 64 KiB hold 16,384 float32 or 8,192
    int64 elements a page; more is refused with the limit in the error, nothing sent."""
    server = make_server(max_message_bytes=64 * 1024)
    doc = graph(
        [
            tensor("f", shape=[20_000], init="randn", seed=0),
            tensor("i", value=list(range(10_000)), dtype="int64"),
            node("s", "sum"),
            node("t", "sum"),
        ],
        [edge("f", "s"), edge("i", "t")],
    )
    rec = connect(server.url, materialize=False)
    try:
        run_id, finished, _ = rec.run_to_end(doc)
        assert finished["status"] == "ok"
        whole = rec.call("tensor", {"run_id": run_id, "node": "f"})
        assert (
            whole["code"] == "too_large" and "more than one answer holds (16,384)" in whole["error"]
        )
        over = rec.call("tensor", {"run_id": run_id, "node": "i", "offset": 0, "count": 8_193})
        assert over == {
            "error": "count is at most 8,192 elements a page of int64",
            "code": "too_large",
        }
        ok = rec.call("tensor", {"run_id": run_id, "node": "i", "offset": 0, "count": 8_192})
        same(ok["values"], np.arange(8_192, dtype=np.int64))
    finally:
        rec.client.disconnect()


@pytest.mark.parametrize("wire", [None, 1])
def test_a_client_that_announces_no_wire_reads_json_numbers(server, wire):
    # a client written from the protocol's description, or a page of before typed arrays: its
    # acks and its runs' packets carry no binary, the numbers as the JSON wire writes them
    old = connect(server.url, wire=wire, materialize=False)
    try:
        run_id, finished, _ = old.run_to_end(mixed_dtypes(), "backward")
        assert finished["status"] == "ok"
        raw = old.raw_records(run_id)
        tables = [r for r in raw if r["kind"] == "summaries"]
        assert tables and all(isinstance(t["preview"], list) for t in tables)
        records = expand_records(raw)
        (i,) = [r for r in records if r["kind"] == "value" and r["node"] == "i"]
        assert i["summary"]["preview"] == [BIG, -5]  # (exact: an int64 as its digits)
        reply = old.call("tensor", {"run_id": run_id, "node": "x"})
        assert reply["values"] == X  # each float32 as its shortest decimal
        assert reply["dtype"] == "float32"
    finally:
        old.client.disconnect()


@pytest.mark.parametrize("wire", [3, "two"])
def test_a_client_of_another_wire_is_told_and_sent_nothing(server, wire):
    old = connect(server.url, wire=wire)
    try:
        for event, payload in [
            ("run", {"graph": mixed_dtypes(), "mode": "backward"}),
            ("tensor", {"run_id": "abc", "node": "x"}),
            ("room_create", {}),
            ("no_such_event", {}),
        ]:
            reply = old.call(event, payload)
            assert reply["code"] == "client_version" and reply["wire"] == typed_wire.VERSION, reply
            said = wire if isinstance(wire, int) else repr(wire)
            assert f"this client reads wire {said}," in reply["error"], reply
            assert "Reload the page" in reply["error"], reply
        # nothing was started for it, so nothing comes
        new = connect(server.url)
        try:
            new.run_to_end(mixed_dtypes(), "backward")  # (a run of a client of this wire)
        finally:
            new.client.disconnect()
        assert old.received == []
    finally:
        old.client.disconnect()


def test_typed_arrays_arrive_over_long_polling_too(server):
    """Engine.IO's polling transport (the page's fallback) carries the attachment as base64:
    the same bytes arrive."""
    client = InOrderClient(reconnection=False, json=fastjson, serializer=WirePacket)
    client.materialize = False
    rec = Recorder(client)
    for event in EVENTS:
        client.on(event, lambda data, event=event: rec.on(event, data))
    client.connect(server.url, transports=["polling"], auth={"wire": typed_wire.VERSION})
    try:
        assert client.transport() == "polling"
        run_id, finished, records = rec.run_to_end(mixed_dtypes(), "backward")
        assert finished["status"] == "ok"
        (i,) = [r for r in records if r["kind"] == "value" and r["node"] == "i"]
        same(np.asarray(i["summary"]["preview"]), torch.tensor([BIG, -5]))
        reply = rec.call("tensor", {"run_id": run_id, "node": "x", "kind": "grad"})
        same(reply["values"], torch_expected()[("grad", "x")])
    finally:
        client.disconnect()


def test_an_object_shaped_like_a_descriptor_stays_the_object_it_is():
    # a room owner's graph param made to look like an array of the message's buffer: only a
    # descriptor carrying the message's random tag (its buffer's first 8 bytes) is read
    forged = {"$typed": "float32", "shape": [1], "offset": 8}
    guessed = {**forged, "tag": "00" * 8}
    message = {"graph": {"p": forged, "q": guessed}, "values": np.arange(3, dtype=np.float32)}
    text, blob = typed_wire.encode(message)
    back = typed_wire.decode(json.loads(text), blob)
    assert back["graph"] == {"p": forged, "q": guessed}
    np.testing.assert_array_equal(back["values"], np.arange(3, dtype=np.float32))
    assert typed_wire.encode(message)[1][:8] != blob[:8]  # a tag of its own for each message
