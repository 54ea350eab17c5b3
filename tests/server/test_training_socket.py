"""Training over a real Socket.IO connection: `train`, `train_control` and the `train_*`
events (docs/training.md)."""

import time

import numpy as np
import pytest
from _server_helpers import connect, edge, graph, node, tensor, times_k

from backend.graph import parse
from backend.graph.running.trainer import Trainer, TrainingError
from backend.server.training import in_progress

TRAIN_EVENTS = (
    "train_queued",
    "train_started",
    "train_progress",
    "train_snapshot",
    "train_finished",
)

_rng = np.random.default_rng(3)
X = _rng.uniform(-1, 1, (64, 2)).astype(np.float32)
Y = ((X[:, 0] * X[:, 1]) > 0).astype(np.float32)[:, None]


def xor_mlp(**training):
    """x -> linear(8) -> tanh -> linear(1) -> sigmoid -> bce against y."""
    return graph(
        [
            tensor("x", X.tolist(), name="x"),
            tensor("y", Y.tolist(), name="y"),
            node("l1", "linear", out_features=8, seed=1),
            node("h", "tanh"),
            node("l2", "linear", out_features=1, seed=2),
            node("p", "sigmoid"),
            node("loss", "binary_cross_entropy"),
        ],
        [
            edge("x", "l1"),
            edge("l1", "h"),
            edge("h", "l2"),
            edge("l2", "p"),
            edge("p", "loss"),
            edge("y", "loss", "target"),
        ],
        training={"loss": "loss", "optimizer": "adam", "lr": 0.05, "steps": 200} | training,
    )


def trainer_client(server, sio_client):
    c = sio_client(server)
    for event in TRAIN_EVENTS:
        c.client.on(event, lambda data, event=event: c.on(event, data))
    return c


@pytest.fixture
def client(server, sio_client):
    return trainer_client(server, sio_client)


def packets(c, train_id, event=None):
    with c.cond:
        return [
            (t, ev, d)
            for t, ev, d in c.received
            if d.get("train_id") == train_id and (event is None or ev == event)
        ]


def finished(c, train_id, timeout=60):
    c.wait_for(lambda _: packets(c, train_id, "train_finished"), timeout)
    return packets(c, train_id, "train_finished")[0][2]


def train(c, doc, config=None):
    ack = c.call("train", {"graph": doc} | ({"config": config} if config else {}))
    assert "train_id" in ack, ack
    return ack["train_id"]


def progress_steps(c, train_id):
    return [s for _, _, d in packets(c, train_id, "train_progress") for s in d["steps"]]


def test_events_in_order_with_every_step_and_the_trained_graph(client):
    doc = xor_mlp()
    train_id = train(client, doc)
    done = finished(client, train_id)
    events = [ev for _, ev, _ in packets(client, train_id)]
    assert events[0] == "train_started" and events[-1] == "train_finished"
    assert events[-2] == "train_snapshot"  # the last snapshot, then the end
    assert set(events[1:-1]) <= {"train_progress", "train_snapshot"}
    started = packets(client, train_id, "train_started")[0][2]
    assert started == {
        "train_id": train_id,
        "steps": 200,
        "params": ["l1.weight", "l1.bias", "l2.weight", "l2.bias"],
    }
    # every step's loss, once, in order: the losses of the same training run here
    assert progress_steps(client, train_id) == list(range(1, 201))
    losses = [x for _, _, d in packets(client, train_id, "train_progress") for x in d["losses"]]
    local = Trainer(parse(doc))
    expected = [local.step() for _ in range(200)]
    np.testing.assert_allclose(losses, expected, rtol=1e-6)
    assert done["status"] == "ok" and "error" not in done
    assert done["steps"] == 200 and done["loss"] == pytest.approx(expected[-1])
    back = parse(done["graph"])
    np.testing.assert_allclose(
        back.node("l1").params["weight"], local.parameters()["l1.weight"].tolist(), rtol=1e-6
    )
    assert back.training.loss == "loss"
    # the last snapshot: step 200, every parameter and gradient, the decision boundary
    snap = packets(client, train_id, "train_snapshot")[-1][2]
    assert snap["step"] == 200
    assert set(snap["params"]) == set(snap["grads"]) == set(started["params"])
    w = snap["params"]["l1.weight"]
    assert w["shape"] == [8, 2] and w["requires_grad"] is True
    np.testing.assert_allclose(w["preview"], local.parameters()["l1.weight"].tolist(), rtol=1e-6)
    b = snap["boundary"]
    assert b["resolution"] == 40
    assert np.asarray(b["values"]).shape == (40, 40)
    assert np.asarray(b["points"]).shape == (64, 3)
    assert b["x"][0] < X[:, 0].min() and b["y"][1] > X[:, 1].max()


def test_progress_and_snapshots_are_batched_and_throttled(client):
    train_id = train(client, xor_mlp(steps=100_000))
    client.wait_for(lambda _: len(progress_steps(client, train_id)) > 0)
    time.sleep(1.2)
    assert client.call("train_control", {"train_id": train_id, "action": "stop"}) == {"ok": True}
    done = finished(client, train_id)
    assert done["status"] == "stopped" and 0 < done["steps"] < 100_000
    assert progress_steps(client, train_id) == list(range(1, done["steps"] + 1))
    prog = packets(client, train_id, "train_progress")
    snaps = packets(client, train_id, "train_snapshot")
    elapsed = prog[-1][0] - prog[0][0]
    # many steps per packet: a packet every 50 ms or so, not one per step
    assert len(prog) < done["steps"] / 5
    assert len(prog) <= elapsed / 0.05 + 3
    assert len(prog) >= 10
    # snapshots: at most every 250 ms (plus the last one), and not fewer than every ~second
    assert 2 <= len(snaps) <= elapsed / 0.25 + 3
    gaps = np.diff([d["step"] for _, _, d in snaps])
    assert (gaps > 0).all()


def test_a_stop_after_a_pause_sends_no_second_snapshot_of_the_step(client):
    train_id = train(client, xor_mlp(steps=100_000))
    client.wait_for(lambda _: len(progress_steps(client, train_id)) > 20)
    assert client.call("train_control", {"train_id": train_id, "action": "pause"}) == {"ok": True}
    client.wait_for(lambda _: len(packets(client, train_id, "train_snapshot")) > 0)
    time.sleep(0.1)
    assert client.call("train_control", {"train_id": train_id, "action": "stop"}) == {"ok": True}
    done = finished(client, train_id)
    steps = [d["step"] for _, _, d in packets(client, train_id, "train_snapshot")]
    assert steps[-1] == done["steps"] == max(progress_steps(client, train_id))
    assert len(steps) == len(set(steps))  # the pause's snapshot was the last one


def test_pause_resume_stop(client):
    train_id = train(client, xor_mlp(steps=100_000))
    client.wait_for(lambda _: len(progress_steps(client, train_id)) > 20)
    assert client.call("train_control", {"train_id": train_id, "action": "pause"}) == {"ok": True}
    time.sleep(0.15)
    held = max(progress_steps(client, train_id))
    time.sleep(0.3)
    assert max(progress_steps(client, train_id)) == held
    # a pause sends what it has and a snapshot at that step
    assert packets(client, train_id, "train_snapshot")[-1][2]["step"] == held
    assert client.call("train_control", {"train_id": train_id, "action": "resume"}) == {"ok": True}
    client.wait_for(lambda _: max(progress_steps(client, train_id)) > held + 20)
    assert client.call("train_control", {"train_id": train_id, "action": "stop"}) == {"ok": True}
    done = finished(client, train_id)
    assert done["status"] == "stopped"
    assert done["steps"] == max(progress_steps(client, train_id))
    assert parse(done["graph"]).node("l2").params["bias_value"] is not None
    # the training is over: controls are refused
    again = client.call("train_control", {"train_id": train_id, "action": "resume"})
    assert again == {"error": f"no training {train_id} in progress"}


def test_a_new_run_or_training_stops_the_training(client):
    first = train(client, xor_mlp(steps=100_000))
    client.wait_for(lambda _: progress_steps(client, first))
    second = train(client, xor_mlp(steps=100_000))
    assert finished(client, first)["status"] == "stopped"
    client.wait_for(lambda _: progress_steps(client, second))
    run_id = client.run(times_k(2.0), "backward")
    assert finished(client, second)["status"] == "stopped"
    assert client.wait_finished(run_id)["status"] == "ok"
    # and a training stops the client's run in progress
    from _server_helpers import slow_chain

    run_id = client.run(slow_chain(n=400), "backward")
    client.wait_for(lambda _: client.packets(run_id, "trace"))
    third = train(client, xor_mlp(steps=50))
    assert client.wait_finished(run_id)["status"] == "cancelled"
    assert finished(client, third)["status"] == "ok"


def test_disconnect_stops_the_training(server):
    c = connect(server.url, record=False)
    ack = c.call("train", {"graph": xor_mlp(steps=100_000)})
    train_id = ack["train_id"]
    time.sleep(0.2)
    assert train_id in in_progress()
    c.client.disconnect()
    deadline = time.monotonic() + 10
    while train_id in in_progress():
        assert time.monotonic() < deadline, "the training went on after the disconnect"
        time.sleep(0.01)


def test_trainings_are_per_client(server, sio_client):
    a, b = trainer_client(server, sio_client), trainer_client(server, sio_client)
    ta = train(a, xor_mlp(steps=100_000))
    a.wait_for(lambda _: progress_steps(a, ta))
    refused = b.call("train_control", {"train_id": ta, "action": "stop"})
    assert refused == {"error": f"no training {ta} in progress"}
    tb = train(b, xor_mlp(steps=20))
    assert finished(b, tb)["status"] == "ok"
    assert not packets(b, ta) and not packets(a, tb)
    assert a.call("train_control", {"train_id": ta, "action": "stop"}) == {"ok": True}
    assert finished(a, ta)["status"] == "stopped"


def test_a_failing_step_finishes_with_an_error(client, monkeypatch):
    """A step that raises (here made to, at step 4: a graph valid when built fails only on a
    minibatch of a dataset) ends the training with status error, its node and message."""
    real_step = Trainer.step

    def step(self):
        if self.step_count == 3:
            raise TrainingError("l2", RuntimeError("mat1 and mat2 shapes cannot be multiplied"))
        return real_step(self)

    monkeypatch.setattr(Trainer, "step", step)
    train_id = train(client, xor_mlp())
    done = finished(client, train_id)
    assert done["status"] == "error" and done["steps"] == 3
    assert done["node"] == "l2"
    assert done["error"] == "l2: mat1 and mat2 shapes cannot be multiplied"
    assert progress_steps(client, train_id) == [1, 2, 3]
    assert parse(done["graph"]).node("l1").params["weight"] is not None
    monkeypatch.undo()
    # a nan loss is no error: sqrt of a negative sum
    doc = graph(
        [
            tensor("w", [1.0, 2.0], True, name="w"),
            node("s", "sum"),
            node("loss", "pow", scalar=0.5),
        ],
        [edge("w", "s"), edge("s", "loss")],
        training={"loss": "loss", "optimizer": "sgd", "lr": 10.0, "steps": 5},
    )
    done = finished(client, train(client, doc))
    assert done["status"] == "ok" and done["steps"] == 5
    assert done["loss"] is None  # NaN is null in JSON


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"lr": -1.0}, "lr"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"steps": 0}, "steps"),
        ({"nonsense": 1}, "nonsense"),
        ({"loss": "zz"}, "the loss 'zz' is not a node of the graph"),
    ],
)
def test_bad_configs_get_error_acks(client, config, fragment):
    ack = client.call("train", {"graph": xor_mlp(), "config": config})
    assert "train_id" not in ack and fragment in str(ack), ack
    assert "node_errors" in ack


def test_bad_requests_get_error_acks(client):
    no_settings = xor_mlp()
    del no_settings["training"]
    ack = client.call("train", {"graph": no_settings})
    assert "no training settings" in ack["node_errors"][0]["message"]
    broken = xor_mlp()
    broken["nodes"].append(node("bad", "nope"))
    ack = client.call("train", {"graph": broken})
    assert ack["error"] == "the graph has 1 problem"
    assert ack["node_errors"] == [{"message": "unknown op 'nope'", "node": "bad"}]
    not_scalar = xor_mlp()
    not_scalar["nodes"][-1]["params"]["reduction"] = "none"
    ack = client.call("train", {"graph": not_scalar})
    assert ack["node_errors"][0]["node"] == "loss"
    assert "error" in client.call("train", {"graph": {"nodes": "x"}})
    assert "error" in client.call("train", {"graph": xor_mlp(), "config": 3})
    assert "error" in client.call("train", ["not an object"])
    assert "error" in client.call("train_control", {"train_id": "x", "action": "explode"})
    assert client.call("train_control", {"train_id": "nope", "action": "stop"}) == {
        "error": "no training nope in progress"
    }
    # nothing was sent for refused trainings, and the connection goes on
    assert not [ev for _, ev, _ in client.received if ev.startswith("train_")]
    train_id = train(client, xor_mlp(steps=3))
    assert finished(client, train_id)["status"] == "ok"
