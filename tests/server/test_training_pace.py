"""A training at a pace a class can watch: `steps_per_second` on `train`, `train_control`
`pace` to change it mid-way (docs/training.md)."""

import time

from test_training_socket import finished, packets, progress_steps, trainer_client, xor_mlp


def _client(server, sio_client):
    return trainer_client(server, sio_client)


def _start(c, doc, pace):
    ack = c.call("train", {"graph": doc, "steps_per_second": pace})
    assert "train_id" in ack, ack
    return ack["train_id"]


def test_a_paced_training_takes_its_time_and_sends_every_step(server, sio_client):
    c = _client(server, sio_client)
    began = time.perf_counter()
    train_id = _start(c, xor_mlp(steps=12), 20)
    done = finished(c, train_id)
    took = time.perf_counter() - began
    assert done["status"] == "ok" and done["steps"] == 12
    # 11 waits of 50 ms between 12 steps: at least 0.5 s (unpaced, 12 steps take a few ms)
    assert took >= 0.5, took
    assert progress_steps(c, train_id) == list(range(1, 13))
    # each step is its own packet: the class sees every one as it happens
    assert len(packets(c, train_id, "train_progress")) >= 10


def test_the_pace_changes_mid_training_and_stop_ends_a_wait_at_once(server, sio_client):
    c = _client(server, sio_client)
    train_id = _start(c, xor_mlp(steps=100_000), 2)
    c.wait_for(lambda _: progress_steps(c, train_id))
    time.sleep(0.6)
    slow = len(progress_steps(c, train_id))
    assert slow <= 3, slow  # two steps a second
    ok = c.call("train_control", {"train_id": train_id, "action": "pace", "steps_per_second": None})
    assert ok == {"ok": True}
    c.wait_for(lambda _: len(progress_steps(c, train_id)) > slow + 50)
    back = {"train_id": train_id, "action": "pace", "steps_per_second": 1}
    assert c.call("train_control", back) == {"ok": True}
    time.sleep(0.2)
    asked = time.perf_counter()
    assert c.call("train_control", {"train_id": train_id, "action": "stop"}) == {"ok": True}
    assert finished(c, train_id)["status"] == "stopped"
    assert time.perf_counter() - asked < 0.5  # not after the second-long wait


def test_a_bad_pace_is_refused_at_its_field(server, sio_client):
    c = _client(server, sio_client)
    for bad in (0, -5, 5000, "fast"):
        ack = c.call("train", {"graph": xor_mlp(steps=3), "steps_per_second": bad})
        assert "steps_per_second" in ack["error"], ack
    assert not [ev for _, ev, _ in c.received if ev.startswith("train_")]


def test_trainings_past_the_servers_slots_wait_in_line_and_are_told_their_place(
    make_server, sio_client
):
    srv = make_server(max_trainings=1)
    first, second, third = (_client(srv, sio_client) for _ in range(3))
    one = _start(first, xor_mlp(steps=100_000), 5)
    first.wait_for(lambda _: progress_steps(first, one))
    two = _start(second, xor_mlp(steps=5), None)
    second.wait_for(lambda _: packets(second, two, "train_queued"))
    three = _start(third, xor_mlp(steps=5), None)
    second.wait_for(lambda _: packets(second, two, "train_queued"))
    third.wait_for(lambda _: packets(third, three, "train_queued"))
    assert packets(second, two, "train_queued")[0][2] == {
        "train_id": two,
        "position": 1,
        "running": 1,
    }
    assert packets(third, three, "train_queued")[0][2]["position"] == 2
    # a stop while waiting ends it without a step, and the one behind moves up
    assert second.call("train_control", {"train_id": two, "action": "stop"}) == {"ok": True}
    assert finished(second, two) == {
        "train_id": two,
        "status": "stopped",
        "steps": 0,
        "loss": None,
        "graph": None,
    }
    third.wait_for(lambda _: len(packets(third, three, "train_queued")) >= 2)
    assert packets(third, three, "train_queued")[-1][2]["position"] == 1
    assert not packets(third, three, "train_started")
    # the slot frees: the next in line trains
    assert first.call("train_control", {"train_id": one, "action": "stop"}) == {"ok": True}
    assert finished(third, three)["status"] == "ok"
    assert progress_steps(third, three) == [1, 2, 3, 4, 5]
