"""The teaching options of `run` over a real server: accumulate_grad carries the leaves' .grad
from the client's previous run of the same graph; backward_twice fails without retain_graph
with PyTorch's message, and doubles the gradients with it; gradient_ones runs backward from a
target that is not one number; no_grad runs the forward pass without a graph; datasets run
over the wire."""

import numpy as np
import pytest
import torch
from _server_helpers import edge, find, graph, node, one, preview, tensor

from backend.graph.document.templates import load_template


def torch_backward_twice_message():
    """PyTorch's own words for a second backward through a freed graph (the graph tests check
    the engine's against them; here the server must carry them to the page unchanged)."""
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    return str(info.value)


def template(template_id):
    return load_template(template_id).model_dump(mode="json")


def leaf_x(client, doc, **options):
    _, finished, records = client.run_to_end(doc, "backward", options=options)
    assert finished["status"] == "ok", finished
    return preview(records, "leaf_grad", node="x", param=None)


def test_accumulate_grad_doubles_then_triples(server, sio_client):
    c = sio_client(server)
    doc = template("square-of-a-sum")
    assert leaf_x(c, doc) == 10.0
    assert leaf_x(c, doc, accumulate_grad=True) == 20.0
    assert leaf_x(c, doc, accumulate_grad=True) == 30.0
    # a forward run in between leaves .grad alone
    _, finished, _ = c.run_to_end(doc, "forward", options={"accumulate_grad": True})
    assert finished["status"] == "ok"
    assert leaf_x(c, doc, accumulate_grad=True) == 40.0
    assert leaf_x(c, doc) == 10.0  # off: zero_grad before the run
    assert leaf_x(c, doc, accumulate_grad=True) == 20.0
    # the tensor request gives the accumulated .grad, the node's gradient stays this pass's
    run_id, _, records = c.run_to_end(doc, "backward", options={"accumulate_grad": True})
    assert c.call("tensor", {"run_id": run_id, "node": "x", "kind": "grad"})["values"] == 10.0
    assert preview(records, "leaf_grad", node="x", param=None) == 30.0


def test_accumulate_grad_starts_fresh_for_a_changed_graph(server, sio_client):
    c = sio_client(server)
    doc = template("square-of-a-sum")
    assert leaf_x(c, doc) == 10.0
    bigger = template("square-of-a-sum")
    bigger["nodes"][0]["params"]["value"] = [2.0, 2.0]  # x's shape changed
    _, finished, records = c.run_to_end(bigger, "backward", options={"accumulate_grad": True})
    assert finished["status"] == "error"  # z is no longer a scalar
    rewired = graph(
        [tensor("x", 2.0, True), tensor("y", 3.0, True), node("a", "mul"), node("z", "sum")],
        [edge("x", "a"), edge("y", "a", "other"), edge("a", "z")],
        target="z",
    )
    assert leaf_x(c, rewired, accumulate_grad=True) == 3.0  # another graph: fresh


def test_each_client_accumulates_its_own(server, sio_client):
    a, b = sio_client(server), sio_client(server)
    doc = template("square-of-a-sum")
    assert leaf_x(a, doc) == 10.0
    assert leaf_x(b, doc, accumulate_grad=True) == 10.0
    assert leaf_x(a, doc, accumulate_grad=True) == 20.0


def test_backward_twice_without_retain_graph_is_an_error_at_the_target(server, sio_client):
    c = sio_client(server)
    _, finished, records = c.run_to_end(
        template("backward-twice"), "backward", options={"backward_twice": True}
    )
    assert finished["status"] == "error"
    assert finished["error"] == {
        "kind": "error",
        "node": "z",
        "message": torch_backward_twice_message(),
        "type": "RuntimeError",
    }
    assert records[-1] == finished["error"]
    assert preview(records, "leaf_grad", node="x", param=None) == 36.0


def test_backward_twice_with_retain_graph_doubles(server, sio_client):
    c = sio_client(server)
    options = {"backward_twice": True, "retain_graph": True}
    _, finished, records = c.run_to_end(template("backward-twice"), "backward", options=options)
    assert finished["status"] == "ok"
    x = [r["summary"]["preview"] for r in find(records, "leaf_grad", node="x")]
    w = [r["summary"]["preview"] for r in find(records, "leaf_grad", node="w")]
    assert (x, w) == ([36.0, 72.0], [24.0, 48.0])
    assert preview(records, "node_grad", node="p") == 12.0
    # and the next accumulate_grad run starts from the doubled .grad
    assert leaf_x(c, template("backward-twice"), accumulate_grad=True) == 108.0


def test_gradient_ones_runs_backward_from_a_tensor(server, sio_client):
    c = sio_client(server)
    doc = template("vector-backward")
    _, finished, records = c.run_to_end(doc, "backward")
    assert finished["status"] == "error"
    assert finished["error"] == {
        "kind": "error",
        "node": "diff",
        "message": "grad can be implicitly created only for scalar outputs",
        "type": "RuntimeError",
    }
    assert not find(records, "leaf_grad")
    _, finished, records = c.run_to_end(doc, "backward", options={"gradient_ones": True})
    assert finished["status"] == "ok"
    assert one(records, "node_grad", node="diff")["summary"]["preview"] == [[1.0] * 3] * 3
    # the leaves' .grad are those of the summed L (five-weight-network, the same weights)
    _, summed, summed_records = c.run_to_end(template("five-weight-network"), "backward")
    assert summed["status"] == "ok"
    for leaf in ("a", "w1", "w2", "w3", "w4"):
        got = preview(records, "leaf_grad", node=leaf, param=None)
        want = preview(summed_records, "leaf_grad", node=leaf, param=None)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=leaf)


def test_no_grad_runs_forward_without_a_graph(server, sio_client):
    c = sio_client(server)
    doc = template("no-grad-inference")
    _, finished, records = c.run_to_end(doc, "forward", options={"no_grad": True})
    assert finished["status"] == "ok"
    assert preview(records, "value", node="y") == 11.0
    graph = one(records, "autograd")
    assert [(n["name"], n["node"]) for n in graph["nodes"]] == [("AccumulateGrad", "x")]
    _, finished, records = c.run_to_end(doc, "backward", options={"no_grad": True})
    assert finished["status"] == "error"
    assert finished["error"]["node"] == "y"
    assert finished["error"]["message"] == (
        "element 0 of tensors does not require grad and does not have a grad_fn"
    )
    assert leaf_x(c, doc) == 7.0  # off again: the graph is recorded


@pytest.mark.parametrize(
    "options", [{"accumulate_grad": "maybe"}, {"retain_graph": 1.5}, {"gradient_ones": "maybe"}]
)
def test_options_are_checked(server, sio_client, options):
    c = sio_client(server)
    ack = c.call("run", {"graph": template("square-of-a-sum"), "options": options})
    assert "error" in ack and "RunRequest" in ack["error"]


def test_a_dataset_runs_over_the_wire(server, sio_client):
    c = sio_client(server)
    doc = graph(
        [
            node("data", "dataset", kind="moons", n=20, labels="classes"),
            node("y", "labels"),
            node("fc", "linear", out_features=2),
            node("loss", "cross_entropy"),
        ],
        [
            edge("data", "y", "dataset"),
            edge("data", "fc"),
            edge("fc", "loss"),
            edge("y", "loss", "target"),
        ],
        target="loss",
    )
    _, finished, records = c.run_to_end(doc, "backward")
    assert finished["status"] == "ok", finished
    assert one(records, "value", node="y")["summary"]["dtype"] == "int64"
    assert one(records, "value", node="data")["summary"]["shape"] == [20, 2]
    doc["nodes"][0]["params"] = {"kind": "csv", "csv": "a,b\n1,2\n3\n"}
    ack = c.call("run", {"graph": doc, "mode": "backward"})
    assert ack["node_errors"] == [
        {
            "message": "row 3 has 1 values; the header has 2 columns",
            "node": "data",
            "param": "csv",
        }
    ]
