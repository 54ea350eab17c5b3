"""Runs sent as an edit of an earlier run's graph (docs/protocol.md, `run` with `edit`), over a
real server and real websockets: only the edited nodes travel, and what comes back is what the
whole graph, sent as it is after the edit, gives."""

import numpy as np
import pytest
from _server_helpers import tensor, with_leaf

from backend.graph import parse, run_records


def b_edit(b):
    """The node `b` of with_leaf(b)."""
    return tensor("b", value=[b] * 4)


def edit_run(c, base, nodes, mode="forward", **fields):
    ack = c.call("run", {"edit": {"base": base, "nodes": nodes}, "mode": mode, **fields})
    assert "run_id" in ack, ack
    finished, records = c.result(ack["run_id"])
    return ack["run_id"], finished, records


def assert_as_whole(records, doc, mode):
    """The values (and gradients) the graph layer gives for the whole document."""
    _, want = run_records(parse(doc), mode)
    kinds = ("value", "node_grad", "edge_grad", "leaf_grad")

    def table(recs):
        return {
            (r["kind"], r.get("node") or r.get("edge"), r.get("param")): r["summary"]["preview"]
            for r in recs
            if r["kind"] in kinds
        }

    got, expected = table(records), table(want)
    assert got.keys() == expected.keys()
    for k, v in expected.items():
        np.testing.assert_allclose(np.asarray(got[k], float), np.asarray(v, float), rtol=1e-6)


def test_an_edit_runs_as_the_whole_graph_and_recomputes_only_what_it_reaches(server, sio_client):
    c = sio_client(server)
    first, finished, _ = c.run_to_end(with_leaf(1.0), "forward")
    assert finished["status"] == "ok"
    second, finished, records = edit_run(c, first, [b_edit(-2.0)])
    assert finished["status"] == "ok"
    fresh = [r["node"] for r in records if r["kind"] == "value" and not r.get("cached")]
    assert fresh == ["b", "t", "loss"]
    assert_as_whole(records, with_leaf(-2.0), "forward")
    # an edit of that edit, and one of the first run's graph again
    third, _, records = edit_run(c, second, [b_edit(5.0)])
    assert_as_whole(records, with_leaf(5.0), "forward")
    _, _, records = edit_run(c, first, [b_edit(0.5)])
    assert_as_whole(records, with_leaf(0.5), "forward")
    started = c.packets(third, "run_started")[0][2]
    assert started["nodes"] == 302


def test_a_backward_run_as_an_edit(server, sio_client):
    c = sio_client(server)
    first, _, _ = c.run_to_end(with_leaf(1.0, n=40), "backward")
    _, finished, records = edit_run(c, first, [b_edit(3.0)], "backward")
    assert finished["status"] == "ok" and finished["target"] == "loss"
    assert_as_whole(records, with_leaf(3.0, n=40), "backward")


def test_an_edit_of_a_param_out_of_range_is_a_node_error(server, sio_client):
    c = sio_client(server)
    first, _, _ = c.run_to_end(with_leaf(1.0, n=40), "forward")
    bad = b_edit(1.0)
    bad["params"]["colour"] = "red"
    ack = c.call("run", {"edit": {"base": first, "nodes": [bad]}})
    assert ack["error"] == "the graph has 1 problem"
    assert [(p["node"], p["param"]) for p in ack["node_errors"]] == [("b", "colour")]
    assert ack["node_errors"][0]["message"] == "unknown param 'colour' for tensor"
    # a refused edit leaves its base as it was
    _, finished, records = edit_run(c, first, [b_edit(2.0)])
    assert finished["status"] == "ok"
    assert_as_whole(records, with_leaf(2.0, n=40), "forward")


@pytest.mark.parametrize(
    ("nodes", "words"),
    [
        ([{"id": "nope", "op": "tanh"}], "node 'nope' is not in the graph being edited"),
        ([{"id": "b", "op": "sin"}], "node 'b' is a 'tensor' node"),
        ([{"id": "b", "op": "tensor", "params": 5}], "invalid edit"),
        ([{"id": "b b", "op": "tensor"}], "invalid edit"),
    ],
)
def test_an_edit_that_does_not_fit_its_base_is_refused(server, sio_client, nodes, words):
    c = sio_client(server)
    first, _, _ = c.run_to_end(with_leaf(1.0, n=40), "forward")
    ack = c.call("run", {"edit": {"base": first, "nodes": nodes}})
    assert ack["error"].startswith("invalid edit") and words in ack["error"], ack
    assert "errors.pydantic.dev" not in ack["error"], ack
    assert ack["node_errors"] == []
    assert all(p[2].get("run_id") == first for p in c.received)  # nothing sent for it


def test_only_this_clients_recent_graphs_can_be_edited(make_server, sio_client):
    srv = make_server(max_runs_kept=2)
    a, b = sio_client(srv), sio_client(srv)
    ids = [a.run_to_end(with_leaf(float(k), n=20), "forward")[0] for k in range(3)]
    for client, base in ((a, ids[0]), (b, ids[2]), (a, "neverwas")):
        ack = client.call("run", {"edit": {"base": base, "nodes": [b_edit(1.0)]}})
        assert ack["code"] == "unknown_base" and "send the whole graph" in ack["error"], ack
        assert "run_id" not in ack
    _, finished, records = edit_run(a, ids[1], [b_edit(7.0)])
    assert_as_whole(records, with_leaf(7.0, n=20), "forward")


@pytest.mark.parametrize(
    "payload",
    [
        {"mode": "forward"},
        {"graph": with_leaf(1.0, n=10), "edit": {"base": "x", "nodes": []}},
        {"edit": {"base": "x"}},
        {"edit": {"base": "a b", "nodes": []}},
        {"edit": {"base": "x", "nodes": [], "more": 1}},
        {"edit": {"base": "x", "nodes": {"id": "b"}}},
    ],
)
def test_malformed_edit_messages_get_error_acks(server, sio_client, payload):
    c = sio_client(server)
    ack = c.call("run", payload)
    assert ack["error"].startswith("invalid RunRequest"), ack
