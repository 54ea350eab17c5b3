"""A room's state outlives a restart (room_archive.py): after the server restarts on the same
data dir and the owner takes the room back, a student who joins sees the last run's values
and gradients, the lesson step, step mode's position, the pace, the selected edge, the last
training and the open question, not an empty canvas; the owner's next step reaches them."""

from _server_helpers import times_k
from test_rooms import wait_event

from backend.server.room_archive import RoomArchive
from conftest import start_server


def listen(rec):
    for event in ("room_step", "room_graph", "room_closed"):
        rec.client.on(event, lambda data, event=event: rec.on(event, data))
    return rec


def test_the_last_run_and_the_lesson_come_back_after_a_restart(tmp_path, sio_client):
    before = start_server(tmp_path)
    owner = sio_client(before)
    created = owner.call("room_create", {"graph": times_k(2.0)})
    code, secret = created["code"], created["secret"]
    run_id, _, _ = owner.run_to_end(times_k(2.0), "backward")
    records = owner.raw_records(run_id)
    for event, fields in [
        ("room_lesson", {"index": 2}),
        ("room_pace", {"steps_per_second": 20}),
        ("room_step", {"index": 3}),
        ("room_select", {"edge": "e2"}),
    ]:
        assert owner.call(event, {"code": code, **fields}) == {"ok": True}
    truth = {"kind": "grad", "id": "e2", "label": "the gradient on x → mul"}
    assert owner.call("room_ask", {"code": code, "target": truth, "truth": 2.0})["ok"]

    after = start_server(tmp_path)  # the same data dir, nothing in memory
    back = sio_client(after)
    resumed = back.call("room_resume", {"code": code, "secret": secret})
    assert resumed["restored"] is True and resumed["graph"] == times_k(2.0)
    student = listen(sio_client(after))
    ack = student.call("room_join", {"code": code})
    assert ack["run_started"]["run_id"] == run_id
    assert ack["records"] == records and ack["run_finished"]["status"] == "ok"
    assert ack["lesson"] == 2 and ack["step"] == 3 and ack["selected"] == "e2"
    assert ack["pace"] == {"steps_per_second": 20}
    assert ack["quiz"]["status"] == "open" and "truth" not in ack["quiz"]
    # the owner's next step reaches the student without a new run
    assert back.call("room_step", {"code": code, "index": 4}) == {"ok": True}
    assert wait_event(student, "room_step")[-1] == {"code": code, "index": 4}

    # closed: nothing is kept, and a restart brings nothing back
    assert back.call("room_leave", {"code": code}) == {"ok": True}
    assert RoomArchive(tmp_path).load(code) == {}


def test_a_data_dir_that_cannot_be_written_keeps_rooms_going(tmp_path):
    (tmp_path / "rooms.sqlite3").mkdir()  # a directory where the database file would be
    archive = RoomArchive(tmp_path)
    archive.put("ABCDEF", "step", 1)
    assert archive.broken and archive.load("ABCDEF") == {}
