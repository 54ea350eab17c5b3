"""A late joiner gets the owner's training (docs/training.md, "Socket.IO: rooms"): the join ack's
`training` has the loss points so far (bounded, evenly spread), the step reached, the last
snapshot with its decision boundary and how it ended; packets after the ack continue it."""

import time

import pytest
from test_rooms import TRAIN_EVENTS, events, join
from test_rooms import create as room

from backend.graph.document.templates import load_template
from backend.server.room_training import TrainingRecord


def xor(steps):
    doc = load_template("mlp-xor").model_dump(mode="json")
    doc["training"] = {**(doc.get("training") or {}), "steps": steps, "loss": "loss"}
    return doc


@pytest.fixture
def client(server, sio_client):
    def make():
        rec = sio_client(server)
        for event in TRAIN_EVENTS:
            rec.client.on(event, lambda data, event=event: rec.on(event, data))
        return rec

    return make


# -- the record alone ----------------------------------------------------------------------------
def test_the_loss_points_stay_bounded_evenly_spread_with_first_and_latest():
    rec = TrainingRecord({"train_id": "t", "steps": 10_000, "params": ["w"]}, max_points=100)
    for start in range(1, 10_001, 37):  # packets of any length
        steps = list(range(start, min(start + 37, 10_001)))
        assert rec.add("train_progress", {"train_id": "t", "steps": steps, "losses": steps})
    out = rec.to_json()
    steps = out["progress"]["steps"]
    assert len(steps) <= 101 and len(steps) >= 50, len(steps)
    assert steps[0] == 1 and steps[-1] == 10_000  # where it began, where it is
    assert out["progress"]["losses"] == steps
    gaps = {b - a for a, b in zip(steps[1:-1], steps[2:-1], strict=False)}
    assert len(gaps) == 1, gaps  # evenly spread
    assert out["status"] == "running" and out["snapshot"] is None and out["finished"] is None


def test_other_trainings_packets_are_not_folded_in_and_the_graph_is_not_kept():
    rec = TrainingRecord({"train_id": "t", "steps": 3, "params": []})
    assert not rec.add("train_progress", {"train_id": "old", "steps": [1], "losses": [9.0]})
    rec.add("train_finished", {"train_id": "t", "status": "ok", "steps": 3, "graph": {"big": 1}})
    out = rec.to_json()
    assert out["progress"] == {"steps": [], "losses": []}
    assert out["status"] == "ok" and "graph" not in out["finished"]


# -- over a real server --------------------------------------------------------------------------
def test_a_student_joining_mid_training_gets_the_chart_so_far_then_the_rest(client):
    owner, early, late = client(), client(), client()
    code = room(owner)
    join(early, code)
    assert join(late, code)["training"] is None  # nothing trained yet
    late.call("room_leave", {"code": code})
    ack = owner.call("train", {"graph": xor(120), "steps_per_second": 40})
    assert "train_id" in ack, ack
    owner.wait_for(lambda r: sum(ev == "train_snapshot" for _, ev, _ in r) >= 2, timeout=30)
    got = join(late, code)["training"]
    assert got["train_id"] == ack["train_id"] and got["status"] == "running"
    assert got["steps"] == 120 and got["params"]
    seen = got["progress"]["steps"]
    assert seen and seen == list(range(1, seen[-1] + 1))  # every step so far (few of them)
    assert len(got["progress"]["losses"]) == len(seen)
    assert got["snapshot"]["boundary"]["resolution"] > 0
    owner.wait_for(lambda r: any(ev == "train_finished" for _, ev, _ in r), timeout=60)
    late.wait_for(lambda r: any(ev == "train_finished" for _, ev, _ in r), timeout=30)
    after = [s for p in events(late, "train_progress") for s in p["steps"]]
    # the ack and the packets after it: the whole run, none twice, none missing
    assert seen + after == list(range(1, 121)), (seen[-3:], after[:3])
    # early's copies of the last packets may still be on their way: each follower gets the
    # room's packets in order, so its train_finished comes after all of its progress
    early.wait_for(lambda r: any(ev == "train_finished" for _, ev, _ in r), timeout=30)
    everything = [s for p in events(early, "train_progress") for s in p["steps"]]
    assert everything == list(range(1, 121))


def test_a_student_joining_after_training_gets_its_end(client):
    owner = client()
    code = room(owner)
    ack = owner.call("train", {"graph": xor(3000)})
    assert "train_id" in ack, ack
    owner.wait_for(lambda r: any(ev == "train_finished" for _, ev, _ in r), timeout=120)
    finished = events(owner, "train_finished")[0]
    time.sleep(0.1)
    got = join(client(), code)["training"]
    assert got["status"] == finished["status"] == "ok"
    assert got["finished"] == {k: v for k, v in finished.items() if k != "graph"}
    steps = got["progress"]["steps"]
    # bounded: 3,000 steps are at most 1,000 points (and the last one), from first to last
    assert 500 <= len(steps) <= 1001 and steps[0] == 1 and steps[-1] == 3000, len(steps)
    losses = [x for p in events(owner, "train_progress") for x in p["losses"]]
    assert got["progress"]["losses"][-1] == losses[-1]
    assert got["progress"]["losses"][0] == losses[0]
    last = events(owner, "train_snapshot")[-1]
    assert got["snapshot"]["step"] == last["step"] == 3000
    assert got["snapshot"]["boundary"]["x"] == last["boundary"]["x"]
    # a new training starts the record again
    again = owner.call("train", {"graph": xor(5)})
    owner.wait_for(lambda r: sum(ev == "train_finished" for _, ev, _ in r) >= 2, timeout=60)
    time.sleep(0.1)
    got = join(client(), code)["training"]
    assert got["train_id"] == again["train_id"] and got["progress"]["steps"] == [1, 2, 3, 4, 5]
