"""Documents with modules over a real server and real websockets: the run unpacks the modules
once (validation checks that flat form and the run runs it), streams every record under its
flat id (`l2/w`), and an edit of an instance runs as the whole edited document does."""

import numpy as np
from test_socket_edits import assert_as_whole, edit_run

from tests.graph._docs import affine_module, edge


def two_instances(second_seed=7):
    """in -> Affine l1 -> Affine l2 (its own seed) -> sum."""
    return {
        "format": "wiregrad.graph",
        "version": 2,
        "modules": [affine_module(activation="tanh")],
        "nodes": [
            {
                "id": "in",
                "op": "tensor",
                "params": {"value": [0.5, -1.0, 2.0], "requires_grad": True},
            },
            {"id": "l1", "op": "module", "params": {"module": "Affine"}},
            {"id": "l2", "op": "module", "params": {"module": "Affine", "seed": second_seed}},
            {"id": "s", "op": "sum"},
        ],
        "edges": [
            edge("e_in", "in", "l1", "x"),
            edge("e_mid", "l1", "l2", "x", source_port="y"),
            edge("e_out", "l2", "s", source_port="y"),
        ],
        "target": "s",
    }


def test_a_module_document_runs_with_every_inner_record_under_its_flat_id(server, sio_client):
    c = sio_client(server)
    run_id, finished, records = c.run_to_end(two_instances(), "backward")
    assert finished["status"] == "ok", finished
    assert c.packets(run_id, "run_started")[0][2]["nodes"] == 2 + 2 * 7  # in, s, two unpacked
    assert_as_whole(records, two_instances(), "backward")
    leaf = {r["node"]: r["summary"]["preview"] for r in records if r["kind"] == "leaf_grad"}
    assert {"in", "l1/w", "l1/b", "l2/w", "l2/b"} <= leaf.keys()
    assert not np.allclose(leaf["l1/w"], leaf["l2/w"])  # each instance its own parameters
    edges = {r["edge"] for r in records if r["kind"] == "edge_grad"}
    assert {"e_in", "e_mid", "l1/ma", "l2/wm"} <= edges


def test_an_edit_of_an_instance_runs_as_the_whole_edited_document(server, sio_client):
    c = sio_client(server)
    first, _, _ = c.run_to_end(two_instances(), "backward")
    edited = two_instances(second_seed=11)
    l2 = next(n for n in edited["nodes"] if n["id"] == "l2")
    _, finished, records = edit_run(c, first, [l2], "backward")
    assert finished["status"] == "ok", finished
    assert_as_whole(records, edited, "backward")


def test_a_problem_inside_a_module_is_named_at_the_inner_node(server, sio_client):
    c = sio_client(server)
    doc = two_instances()
    doc["modules"][0]["nodes"][1]["params"]["shape"] = [4]  # w no longer fits x's 3
    ack = c.call("run", {"graph": doc, "mode": "forward"})
    assert ack["error"].startswith("the graph has")
    assert {p["node"] for p in ack["node_errors"]} <= {"l1/m", "l2/m"}
    assert (
        "size of tensor a (3) must match the size of tensor b (4)"
        in (ack["node_errors"][0]["message"])
    )
    doc = two_instances()
    doc["nodes"][1]["params"]["module"] = "Nope"
    ack = c.call("run", {"graph": doc, "mode": "forward"})
    assert [(p["node"], p.get("param")) for p in ack["node_errors"]] == [("l1", "module")]
