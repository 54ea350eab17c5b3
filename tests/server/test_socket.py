"""The Socket.IO protocol over a real server and real websockets: runs, traces, cancel, tensors,
per-client state, hostile messages and origins."""

import threading
import time

import numpy as np
import pytest
import socketio
from _server_helpers import (
    RawClient,
    connect,
    edge,
    find,
    graph,
    key,
    node,
    one,
    preview,
    slow_chain,
    tensor,
    times_k,
    wide_graph,
    with_leaf,
)

from backend.graph import parse, run, run_records
from backend.graph.document.templates import list_templates, load_template
from backend.graph.running.records import unpack_all

TEMPLATES = [t["id"] for t in list_templates()]


def template(template_id):
    return load_template(template_id).model_dump(mode="json")


def wait_for_records(client, run_id, n, timeout=20):
    client.wait_for(lambda _: len(client.records(run_id)) >= n, timeout)


# -- a run end to end ----------------------------------------------------------------------------
def test_square_of_a_sum_backward(server, sio_client):
    c = sio_client(server)
    run_id, finished, records = c.run_to_end(template("square-of-a-sum"), "backward")
    started = c.packets(run_id, "run_started")
    assert len(started) == 1
    assert started[0][2] == {"run_id": run_id, "mode": "backward", "target": None, "nodes": 4}
    assert finished["status"] == "ok" and "error" not in finished
    assert finished["target"] == "z"
    assert finished["records"] == len(c.raw_records(run_id))  # summary tables included
    assert {"forward_ms", "backward_ms", "total_ms", "server_ms"} <= set(finished["timings"])
    # run_started first, run_finished last, traces between
    events = [ev for _, ev, _ in c.packets(run_id)]
    assert events[0] == "run_started" and events[-1] == "run_finished"
    assert set(events[1:-1]) == {"trace"}

    assert [(r["node"], r["summary"]["preview"]) for r in find(records, "value")] == [
        ("x", 2.0),
        ("y", 3.0),
        ("a", 5.0),
        ("z", 25.0),
    ]
    assert preview(records, "value", node="z") == 25.0
    assert one(records, "value", node="z")["summary"]["grad_fn"] == "PowBackward0"
    assert preview(records, "node_grad", node="z") == 1.0
    assert preview(records, "node_grad", node="a") == 10.0
    assert preview(records, "node_grad", node="x") == 10.0
    assert preview(records, "node_grad", node="y") == 10.0
    assert preview(records, "edge_grad", edge="a-z") == 10.0
    assert preview(records, "edge_grad", edge="x-a") == 10.0
    assert one(records, "edge_grad", edge="y-a-other")["source"] == "y"
    assert preview(records, "leaf_grad", node="x", param=None) == 10.0
    assert preview(records, "leaf_grad", node="y", param=None) == 10.0
    autograd = one(records, "autograd")
    names = {n["name"] for n in autograd["nodes"]}
    assert {"PowBackward0", "AddBackward0", "AccumulateGrad"} <= names
    assert not find(records, "error")


def test_square_of_a_sum_forward_has_no_gradients(server, sio_client):
    c = sio_client(server)
    _, finished, records = c.run_to_end(template("square-of-a-sum"), "forward")
    assert finished["status"] == "ok"
    assert preview(records, "value", node="z") == 25.0
    assert {r["kind"] for r in records} == {"value", "autograd"}
    assert "backward_ms" not in finished["timings"]


def test_a_forward_run_after_an_edit_sends_what_it_did_not_reach_at_once(server, sio_client):
    """The client's cache keeps its last forward run: after an edit to one node near the end,
    the values the edit does not reach come first, in one packed record, and the values
    read back are those of a run without a cache."""
    c = sio_client(server)
    c.run_to_end(with_leaf(1.0), "forward")
    edited = with_leaf(-2.0)
    run_id, finished, records = c.run_to_end(edited, "forward")
    assert finished["status"] == "ok"
    packs = [r for r in c.raw_records(run_id) if r["kind"] == "values"]
    assert packs[0].get("cached") is True and len(packs[0]["nodes"]) > 250
    fresh = [r["node"] for r in records if r["kind"] == "value" and not r.get("cached")]
    assert fresh == ["b", "t", "loss"]
    _, want = run_records(parse(edited))
    got = {r["node"]: r["summary"] for r in records if r["kind"] == "value"}
    assert got.keys() == {r["node"] for r in want if r["kind"] == "value"}
    for r in want:
        if r["kind"] == "value":
            np.testing.assert_allclose(
                np.asarray(got[r["node"]]["preview"], dtype=float),
                np.asarray(r["summary"]["preview"], dtype=float),
                rtol=1e-6,
            )


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_every_template_runs_as_the_graph_layer_runs_it(server, sio_client, template_id):
    """What arrives over the wire is what the executor made, record for record."""
    c = sio_client(server)
    doc = template(template_id)
    mode = "backward" if doc.get("target") else "forward"
    ones = template_id == "vector-backward"  # its target is 3x3: backward starts from ones
    options = {"use_cache": False, "gradient_ones": ones}
    _, finished, records = c.run_to_end(doc, mode, options=options)
    expected, expected_records = run_records(parse(doc), mode, gradient_ones=ones)
    assert finished["status"] == expected.status, finished
    # two in-place templates end in PyTorch's errors on purpose (tests/graph/test_templates.py)
    assert expected.status == "ok" or template_id in ("inplace-leaf", "inplace-saved-overwritten")
    assert len(records) == len(expected_records)
    for got, want in zip(records, expected_records):
        assert got["kind"] == want["kind"]
        for field in ("node", "edge", "param", "port", "source", "target", "version", "message"):
            assert got.get(field) == want.get(field)
        if "summary" in want:
            got_s, want_s = got["summary"], want["summary"]
            assert got_s["shape"] == want_s["shape"]
            # a tensor past the preview limit (a conv's feature maps) has its stats only
            key = "preview" if "preview" in want_s else "stats"
            assert ("preview" in got_s) == (key == "preview")
            np.testing.assert_allclose(
                np.asarray(_numbers(got_s[key]), dtype=float),
                np.asarray(_numbers(want_s[key]), dtype=float),
                rtol=1e-6,
                atol=1e-7,
            )


def _numbers(v):
    """A preview as it is; stats as the list of their values, in key order."""
    return [v[k] for k in sorted(v)] if isinstance(v, dict) else v


def test_branch_not_taken_and_skipped_records_arrive(server, sio_client):
    c = sio_client(server)
    _, finished, records = c.run_to_end(template("branch-square-or-negate"), "backward")
    assert finished["status"] == "ok"
    assert find(records, "branch_not_taken")
    assert find(records, "skipped")


def test_target_overrides_the_documents(server, sio_client):
    c = sio_client(server)
    _, finished, records = c.run_to_end(template("square-of-a-sum"), "backward", target="a")
    assert finished["target"] == "a"
    assert preview(records, "leaf_grad", node="x", param=None) == 1.0


def test_a_run_that_fails_reports_the_node(server, sio_client):
    c = sio_client(server)
    doc = graph([tensor("x", 2.0, True), node("y", "exp")], [edge("x", "y")], target="y")
    doc["nodes"][0]["params"]["value"] = [1.0, 2.0]  # not a scalar: backward needs one
    _, finished, records = c.run_to_end(doc, "backward")
    assert finished["status"] == "error"
    assert finished["error"]["kind"] == "error" and finished["error"]["message"]
    assert one(records, "error") == finished["error"]


# -- validation happens before anything runs -----------------------------------------------------
@pytest.mark.parametrize(
    ("doc", "fields", "where"),
    [
        (graph([node("a", "no_such_op")]), {}, {"node": "a"}),
        (graph([tensor("x", 1.0), node("a", "add")], [edge("x", "a")]), {}, {"node": "a"}),
        (
            graph([node("a", "neg"), node("b", "neg")], [edge("a", "b"), edge("b", "a")]),
            {},
            {},
        ),
        (graph([tensor("x", 1.0)]), {"target": "nope"}, {}),
        (graph([tensor("x", shape=[10**5, 10**5], init="zeros")]), {}, {"node": "x"}),
        (graph([tensor("x", 1.0, init="bogus")]), {}, {"node": "x", "param": "init"}),
    ],
)
def test_validation_errors_come_back_in_the_ack(server, sio_client, doc, fields, where):
    c = sio_client(server)
    ack = c.call("run", {"graph": doc, "mode": "forward", **fields})
    assert set(ack) == {"error", "node_errors"}, ack
    assert ack["node_errors"]
    assert any(all(e.get(k) == v for k, v in where.items()) for e in ack["node_errors"]), ack
    time.sleep(0.1)
    assert c.received == []  # nothing ran


def test_structurally_broken_graph_is_an_ack_error(server, sio_client):
    c = sio_client(server)
    for doc in ({"nodes": 5}, {"nodes": [{"id": "a b", "op": "add"}]}, {"version": 3}):
        ack = c.call("run", {"graph": doc})
        assert ack["error"].startswith("invalid graph document") and ack["node_errors"] == []
        assert "errors.pydantic.dev" not in ack["error"], ack  # pydantic's words, not its links
    assert c.received == []


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("run", None),
        ("run", 5),
        ("run", "graph"),
        ("run", [1, 2]),
        ("run", {}),
        ("run", {"graph": []}),
        ("run", {"graph": {}, "mode": "sideways"}),
        ("run", {"graph": {}, "extra": 1}),
        ("run", {"graph": {}, "options": {"use_cache": "maybe"}}),
        ("run", {"graph": {}, "options": {"turbo": True}}),
        ("run", {"graph": {}, "target": "../etc"}),
        ("cancel", None),
        ("cancel", {}),
        ("cancel", {"run_id": 5}),
        ("cancel", {"run_id": "a" * 65}),
        ("cancel", {"run_id": "x", "more": 1}),
        ("tensor", {}),
        ("tensor", {"run_id": "x", "node": "y", "kind": "hessian"}),
        ("tensor", {"run_id": "x", "node": "y", "param": "gamma"}),
        ("tensor", {"run_id": "x", "node": "y z"}),
        ("no_such_event", {"a": 1}),
        ("run_finished", {"run_id": "x"}),
    ],
)
def test_malformed_messages_get_error_acks(server, sio_client, event, payload):
    c = sio_client(server)
    ack = c.call(event, payload)
    assert isinstance(ack, dict) and isinstance(ack.get("error"), str) and ack["error"], ack
    assert "run_id" not in ack
    assert "run_id" in c.call("run", {"graph": times_k(2)})  # the connection goes on


def test_raw_frames_that_break_json_leave_the_connection_usable(server):
    raw = RawClient(server.url)
    try:
        raw.ws.settimeout(10)
        broken = ("42{not json", '42["run", {"graph": ', "42", "4", "9", "42[]", "42[null]")
        # NaN, Infinity and 1e999 are not JSON either (nothing could write them back)
        broken += ('42["run", {"graph": {"x": NaN}}]', '42["run", {"graph": {"x": 1e999}}]')
        for text in broken:
            raw.send_text(text)
        # frames whose JSON parses are answered, even odd ones
        assert raw.call_raw('[5, {"graph": {}}]') == [
            {"error": "unknown event 5; see docs/protocol.md"}
        ]
        assert "error" in raw.call_raw('["run", 1, 2, 3]')[0]
        deep = "[" * 900 + "1" + "]" * 900
        ack = raw.call_raw(
            '["run", {"graph": {"nodes": [{"id": "x", "op": "tensor", "params": '
            f'{{"value": {deep}}}}}]}}}}]'
        )
        assert ack[0]["node_errors"][0]["node"] == "x"
        ack = raw.call_raw('["run", {"graph": {"nodes": []}}]')
        assert "run_id" in ack[0]
    finally:
        raw.close()
    assert server.healthy()


# -- cancel ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def slow():
    return slow_chain(400, 512)


def test_cancel_a_run_in_progress(server, sio_client, slow):
    c = sio_client(server)
    run_id = c.run(slow, "backward")
    wait_for_records(c, run_id, 3)
    assert c.call("cancel", {"run_id": run_id}) == {"ok": True}
    finished = c.wait_finished(run_id, timeout=10)
    assert finished["status"] == "cancelled"
    records = c.records(run_id)
    assert 3 <= len(records) < 400
    assert {r["kind"] for r in records} == {"value"}
    assert "error" in c.call("cancel", {"run_id": run_id})  # no longer in progress
    # the values made before the cancel can still be fetched
    got = c.call("tensor", {"run_id": run_id, "node": "x"})
    assert got["shape"] == [512, 512]


def test_cancel_unknown_or_someone_elses_run(server, sio_client, slow):
    a, b = sio_client(server), sio_client(server)
    assert "error" in b.call("cancel", {"run_id": "nosuchrun"})
    run_id = a.run(slow_chain(30, 64), "backward")
    ack = b.call("cancel", {"run_id": run_id})
    assert "error" in ack
    assert a.wait_finished(run_id)["status"] == "ok"


def test_a_new_run_cancels_the_clients_run_in_progress(server, sio_client, slow):
    c = sio_client(server)
    first = c.run(slow, "backward")
    wait_for_records(c, first, 2)
    second = c.run(template("square-of-a-sum"), "backward")
    assert first != second
    assert c.wait_finished(first, timeout=10)["status"] == "cancelled"
    finished = c.wait_finished(second)
    assert finished["status"] == "ok"
    assert preview(c.records(second), "leaf_grad", node="x", param=None) == 10.0
    # the cancelled run stops at its next node, so its run_finished may come after the new
    # run's: clients tell runs apart by run_id


def test_an_invalid_new_run_does_not_cancel_the_one_in_progress(server, sio_client):
    c = sio_client(server)
    run_id = c.run(slow_chain(40, 64), "backward")
    assert "node_errors" in c.call("run", {"graph": graph([node("a", "no_such_op")])})
    assert c.wait_finished(run_id)["status"] == "ok"


def test_a_disconnect_cancels_the_clients_runs(server, sio_client, slow):
    runs = server.app.extensions["wiregrad.runs"]
    a, b = sio_client(server), sio_client(server)
    run_id = a.run(slow, "backward")
    wait_for_records(a, run_id, 2)
    client_state = runs.clients[a.client.get_sid()]
    active_id, cancel_event = client_state.active
    assert active_id == run_id and not cancel_event.is_set()
    a.client.disconnect()
    deadline = time.monotonic() + 5
    while not cancel_event.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cancel_event.is_set()
    assert client_state.sid not in runs.clients
    # the server goes on serving the others
    _, finished, records = b.run_to_end(template("square-of-a-sum"), "backward")
    assert finished["status"] == "ok"
    assert preview(records, "value", node="z") == 25.0


# -- tensor ----------------------------------------------------------------------------------------
def test_tensor_values_and_gradients(server, sio_client):
    c = sio_client(server)
    doc = template("mlp-mse")
    run_id, finished, _ = c.run_to_end(doc, "backward")
    assert finished["status"] == "ok"
    want = run(parse(doc), "backward")

    def fetch(**req):
        got = c.call("tensor", {"run_id": run_id, **req})
        assert got.get("run_id") == run_id, got
        return got

    def same(got, t):
        assert got["shape"] == list(t.shape) and got["dtype"] == "float32"
        np.testing.assert_allclose(
            np.asarray(got["values"]), t.detach().numpy(), rtol=1e-6, atol=1e-7
        )

    got = fetch(node="X")
    assert got["kind"] == "value"
    same(got, want.values["X"])
    same(fetch(node="loss", kind="value"), want.values["loss"])
    same(fetch(node="loss", kind="grad"), want.node_grads["loss"])
    same(fetch(node="activation", kind="grad"), want.node_grads["activation"])
    same(fetch(edge="diff-sq", kind="grad"), want.edge_grads["diff-sq"])
    for layer in ("layer1", "layer2"):
        for param in ("weight", "bias"):
            got = fetch(node=layer, param=param, kind="grad")
            same(got, want.leaf_grads[f"{layer}.{param}"])
    assert fetch(node="layer1", param="weight", kind="grad")["shape"] == [32, 10]
    assert fetch(node="layer2", param="bias", kind="grad")["shape"] == [1]


def test_leaf_grad_through_the_node(server, sio_client):
    c = sio_client(server)
    run_id, _, _ = c.run_to_end(times_k(4.0), "backward")
    assert c.call("tensor", {"run_id": run_id, "node": "x", "kind": "grad"})["values"] == 4.0
    assert c.call("tensor", {"run_id": run_id, "node": "y"})["values"] == 12.0


@pytest.mark.parametrize(
    ("req", "words"),
    [
        ({"node": "nope"}, "no value"),
        ({"node": "X", "kind": "grad"}, "no grad"),  # X does not require grad
        ({"edge": "diff-sq"}, "edge"),  # an edge's value is its producer's
        ({"edge": "nope", "kind": "grad"}, "no grad"),
        ({"node": "loss", "edge": "diff-sq", "kind": "grad"}, "either"),
        ({}, "either"),
        ({"node": "activation", "param": "weight", "kind": "grad"}, "no grad"),
    ],
)
def test_tensor_errors(server, sio_client, req, words):
    c = sio_client(server)
    run_id, _, _ = c.run_to_end(template("mlp-mse"), "backward")
    ack = c.call("tensor", {"run_id": run_id, **req})
    assert words in ack["error"], ack


def test_tensors_belong_to_their_client_and_recent_runs(make_server, sio_client):
    srv = make_server(max_runs_kept=2)
    a, b = sio_client(srv), sio_client(srv)
    ids = [a.run_to_end(times_k(k), "backward")[0] for k in (1.0, 2.0, 3.0)]
    gone = a.call("tensor", {"run_id": ids[0], "node": "y"})
    assert f"run {ids[0]} is no longer kept" in gone["error"] and gone["code"] == "run_dropped"
    assert a.call("tensor", {"run_id": ids[1], "node": "y"})["values"] == 6.0
    assert a.call("tensor", {"run_id": ids[2], "node": "y"})["values"] == 9.0
    assert "no finished run" in b.call("tensor", {"run_id": ids[2], "node": "y"})["error"]
    assert "no finished run" in a.call("tensor", {"run_id": "neverwas", "node": "y"})["error"]


def test_tensor_too_big_to_send(make_server, sio_client):
    from backend.graph import Limits

    srv = make_server(limits=Limits(max_elements=100))
    c = sio_client(srv)
    doc = graph([tensor("x", shape=[10, 10], init="ones"), node("s", "sum")], [edge("x", "s")])
    run_id, finished, _ = c.run_to_end(doc)
    assert finished["status"] == "ok"
    assert c.call("tensor", {"run_id": run_id, "node": "x"})["shape"] == [10, 10]
    over = graph([tensor("x", shape=[11, 10], init="ones")])
    ack = c.call("run", {"graph": over})
    assert ack["node_errors"][0]["node"] == "x"


# -- trace batching --------------------------------------------------------------------------------
def assert_packets_are_the_executors_records(doc, packets, mode="backward"):
    """Every record the executor makes arrives, once; each packet is a run of consecutive
    records in compute order."""
    _, expected = run_records(parse(doc), mode)
    want = [key(r) for r in expected]
    where = {k: i for i, k in enumerate(want)}
    assert len(where) == len(want)  # keys identify records
    got = []
    for _, _, d in packets:
        idx = [where[key(r)] for r in unpack_all(d["records"]) if r["kind"] != "summaries"]
        if idx:  # (a packet may hold only the summary table of the records that follow)
            assert idx == list(range(idx[0], idx[0] + len(idx))), "a packet out of compute order"
        got += idx
    assert sorted(got) == list(range(len(want)))


def test_a_1000_node_run_is_a_few_packets(server, sio_client):
    c = sio_client(server)
    doc = wide_graph(1000)
    run_id, finished, records = c.run_to_end(doc, "backward", timeout=60)
    assert finished["status"] == "ok"
    packets = c.packets(run_id, "trace")
    # values and gradients go out packed: far fewer wire records than records
    assert finished["records"] == len(c.raw_records(run_id)) < len(records) / 20
    assert len(records) > 3000
    assert len(packets) <= len(records) / 20, len(packets)
    assert all(len(d["records"]) <= server.settings.max_records_per_packet for _, _, d in packets)
    assert_packets_are_the_executors_records(doc, packets)


def test_small_packets_and_fast_flushes(make_server, sio_client):
    srv = make_server(flush_seconds=0.0005, max_records_per_packet=7)
    c = sio_client(srv)
    doc = wide_graph(200, seed=3)
    for _ in range(2):
        run_id, finished, records = c.run_to_end(doc, "backward")
        packets = c.packets(run_id, "trace")
        assert all(1 <= len(d["records"]) <= 7 for _, _, d in packets)
        assert finished["records"] == len(c.raw_records(run_id))
        assert_packets_are_the_executors_records(doc, packets)


def test_trace_packets_stay_in_order_when_a_send_is_slow(make_server, sio_client):
    """A send that takes a while (a big packet, a busy machine) must not let later records,
    or run_finished, overtake it. Here the ticker thread's first send of each run is slowed."""
    srv = make_server()
    emit, slowed = srv.socketio.emit, set()

    def slow_emit(event, data=None, *args, **kwargs):
        ticker = "ticker" in threading.current_thread().name
        if event == "trace" and ticker and data["run_id"] not in slowed:
            slowed.add(data["run_id"])
            time.sleep(0.3)
        return emit(event, data, *args, **kwargs)

    srv.socketio.emit = slow_emit
    c = sio_client(srv)
    doc = wide_graph(1000)
    _, expected = run_records(parse(doc), "backward")
    for _ in range(2):
        run_id, finished, records = c.run_to_end(doc, "backward", timeout=60)
        assert [key(r) for r in records] == [key(r) for r in expected]
        assert [ev for _, ev, _ in c.packets(run_id)][-1] == "run_finished"


def test_records_are_flushed_while_a_long_run_goes_on(server, sio_client):
    c = sio_client(server)
    run_id = c.run(slow_chain(300, 512), "backward")
    finished = c.wait_finished(run_id, timeout=60)
    assert finished["status"] == "ok"
    traces = [t for t, _, _ in c.packets(run_id, "trace")]
    (t_start, _, _), (t_end, _, _) = (
        c.packets(run_id, "run_started")[0],
        c.packets(run_id, "run_finished")[0],
    )
    duration = t_end - t_start
    assert duration > 0.3, "the run should take a while for this test to mean anything"
    # many packets, spread over the run: not everything at the end
    assert len(traces) >= 5
    assert traces[0] - t_start < duration / 2
    gaps = np.diff([t_start, *traces, t_end])
    assert gaps.max() < max(1.0, duration / 2), gaps


# -- many clients, origins, sizes ------------------------------------------------------------------
def test_each_client_sees_only_its_own_runs(server, sio_client):
    a, b = sio_client(server), sio_client(server)
    ra = a.run(times_k(2.0), "backward")
    rb = b.run(times_k(5.0), "backward")
    a.wait_finished(ra)
    b.wait_finished(rb)
    time.sleep(0.05)
    assert {d["run_id"] for _, _, d in a.received} == {ra}
    assert {d["run_id"] for _, _, d in b.received} == {rb}
    assert preview(a.records(ra), "value", node="y") == 6.0
    assert preview(b.records(rb), "value", node="y") == 15.0


def test_foreign_origin_connection_is_refused(make_server):
    srv = make_server(allowed_origins=["http://good.example"])
    with pytest.raises(socketio.exceptions.ConnectionError):
        connect(srv.url, origin="http://evil.example")
    with pytest.raises(Exception):  # noqa: B017 - websocket-client's handshake error
        RawClient(srv.url, origin="http://evil.example")
    for origin in ("http://good.example", srv.url, f"http://localhost:{srv.port}"):
        c = connect(srv.url, origin=origin)
        try:
            assert "run_id" in c.call("run", {"graph": times_k(1)})
        finally:
            c.client.disconnect()


@pytest.fixture(scope="module")
def small_server(make_server):
    return make_server(max_message_bytes=16 * 1024)


def test_oversized_message_does_not_stop_the_server(small_server, sio_client):
    c, other = sio_client(small_server), sio_client(small_server)
    big = graph([tensor("x", [0.25] * 5000)])
    try:
        ack = c.call("run", {"graph": big}, timeout=1.5)
        assert "error" in ack
    except socketio.exceptions.TimeoutError:
        pass  # Engine.IO drops a connection that sends an oversized packet
    assert "run_id" in other.call("run", {"graph": times_k(1)})
    assert small_server.healthy()


def test_oversized_message_gets_an_error_reply(small_server, sio_client):
    c = sio_client(small_server)
    big = graph([tensor("x", [0.25] * 5000)])
    try:
        ack = c.call("run", {"graph": big}, timeout=1.5)
    except socketio.exceptions.TimeoutError:
        ack = None
    assert ack is not None and "error" in ack
    assert "run_id" in c.call("run", {"graph": times_k(1)})


@pytest.mark.parametrize("event", ["run", "cancel", "tensor", "train", "room_join"])
def test_an_event_sent_with_several_arguments_is_answered_in_words(server, sio_client, event):
    c = sio_client(server)
    ack = c.call(event, ({"graph": times_k(2)}, "two", 3))  # a tuple: three arguments
    assert ack == {"error": f"{event} takes one argument, an object; it was sent 3"}
    assert "run_id" in c.call("run", {"graph": times_k(2)})
