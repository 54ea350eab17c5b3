"""Rooms over a real server and real websockets: one owner drives, followers see what it sees
(docs/training.md, "Socket.IO: rooms")."""

import re
import time

import pytest
from _server_helpers import slow_chain, times_k, wide_graph

from backend.graph.document.templates import load_template
from backend.graph.running.records import count as record_count
from backend.graph.running.records import expand_records
from backend.server.rooms import OWNER_ONLY

TRAIN_EVENTS = ("train_started", "train_progress", "train_snapshot", "train_finished")
ROOM_EVENTS = ("room_graph", "room_step", "room_lesson", "room_pace", "room_closed", *TRAIN_EVENTS)
CODE = re.compile(r"^[A-Z2-9]{6}$")


def template(template_id):
    return load_template(template_id).model_dump(mode="json")


@pytest.fixture
def client(server, sio_client):
    """client() -> a connected Recorder that also records the room events."""

    def make():
        rec = sio_client(server)
        for event in ROOM_EVENTS:
            rec.client.on(event, lambda data, event=event: rec.on(event, data))
        return rec

    return make


def events(rec, event):
    with rec.cond:
        return [d for _, ev, d in rec.received if ev == event]


def wait_event(rec, event, n=1, timeout=10):
    rec.wait_for(lambda received: sum(ev == event for _, ev, _ in received) >= n, timeout)
    return events(rec, event)


def quiet(rec, event, seconds=0.3):
    """Nothing of `event` arrives for a while."""
    time.sleep(seconds)
    return events(rec, event) == []


def create(owner, graph=None):
    ack = owner.call("room_create", {} if graph is None else {"graph": graph})
    assert CODE.match(ack["code"]), ack
    return ack["code"]


def join(rec, code):
    ack = rec.call("room_join", {"code": code})
    assert "error" not in ack, ack
    return ack


def run_packets(rec, run_id):
    """The run's packets as (event, payload), in arrival order."""
    return [(ev, d) for _, ev, d in rec.packets(run_id)]


# -- create, join, leave -------------------------------------------------------------------------
def test_create_join_leave(client):
    owner, follower = client(), client()
    doc = template("square-of-a-sum")
    code = create(owner, doc)
    ack = join(follower, code)
    assert ack == {
        "code": code,
        "graph": doc,
        "step": None,
        "lesson": None,
        "pace": None,
        "run_started": None,
        "records": [],
        "run_finished": None,
        "training": None,
        "selected": None,
        "quiz": None,
    }
    assert follower.call("room_leave", {"code": code}) == {"ok": True}
    assert follower.call("room_leave", {"code": code}) == {"error": f"you are not in room {code}"}
    owner.call("room_update", {"code": code, "graph": times_k(2.0)})
    assert quiet(follower, "room_graph")


def test_codes_are_unique_and_one_room_per_owner(client):
    owners = [client() for _ in range(12)]
    codes = [create(o) for o in owners]
    assert len(set(codes)) == len(codes)
    assert create(owners[0]) == codes[0]  # the room it owns already
    assert create(owners[0], times_k(5.0)) == codes[0]  # ... and the graph is its new one
    assert join(client(), codes[0])["graph"] == times_k(5.0)


def test_a_room_without_a_graph_until_the_owner_sends_one(client):
    owner, follower = client(), client()
    code = create(owner)
    assert join(follower, code)["graph"] is None
    assert owner.call("room_update", {"code": code, "graph": times_k(3.0)}) == {"ok": True}
    assert wait_event(follower, "room_graph") == [{"code": code, "graph": times_k(3.0)}]


def test_unknown_and_malformed_codes(client):
    c = client()
    for event, extra in [
        ("room_join", {}),
        ("room_leave", {}),
        ("room_update", {"graph": times_k(1.0)}),
        ("room_step", {"index": 0}),
    ]:
        assert c.call(event, {"code": "ZZZZZZ", **extra}) == {"error": "no room ZZZZZZ"}
        for bad in ["ABC", "ABCDEFG", "ABC10O", "ABC 23", 123456, None]:
            ack = c.call(event, {"code": bad, **extra})
            assert ack["error"].startswith("invalid Room") and "code" in ack["error"], (bad, ack)
        assert c.call(event, {"code": "ZZZZZZ", "extra": 1, **extra})["error"].startswith(
            "invalid Room"
        )
    assert c.call("room_create", {"code": "ZZZZZZ"})["error"].startswith("invalid Room")
    assert c.call("room_create", [])["error"].startswith("expected a JSON object")
    assert c.call("room_step", {"code": "ZZZZZZ", "index": -1})["error"].startswith("invalid")


def test_a_graph_that_is_not_a_graph_document_is_refused_and_not_relayed(client):
    owner, follower = client(), client()
    for bad in ({"nodes": 5}, {"surprise": True}, {"nodes": [{"id": "a b", "op": "add"}]}):
        ack = owner.call("room_create", {"graph": bad})
        assert ack["error"].startswith("invalid graph document: "), ack
        assert "errors.pydantic.dev" not in ack["error"], ack
    code = create(owner, times_k(1.0))
    join(follower, code)
    ack = owner.call("room_update", {"code": code, "graph": {"nodes": "x"}})
    assert ack["error"].startswith("invalid graph document: "), ack
    # an object Socket.IO's page would read as a binary attachment in a packet with typed
    # arrays, deep in a param: refused, as the followers could not read the packet
    odd = {"nodes": [{"id": "t", "op": "tensor", "params": {"value": [{"_placeholder": True}]}}]}
    ack = owner.call("room_update", {"code": code, "graph": odd})
    assert ack["error"].startswith("invalid graph document: ") and "_placeholder" in ack["error"]
    # a graph with problems that keep it from running is still a document: relayed as it is
    unfinished = {"nodes": [{"id": "s", "op": "sum"}], "edges": []}
    assert owner.call("room_update", {"code": code, "graph": unfinished}) == {"ok": True}
    assert wait_event(follower, "room_graph") == [{"code": code, "graph": unfinished}]
    assert join(client(), code)["graph"] == unfinished  # the refused one never became the room's


def test_codes_as_typed_lower_case_and_spaces(client):
    owner, follower = client(), client()
    code = create(owner)
    assert join(follower, f" {code.lower()} ")["code"] == code


def test_owner_cannot_join_while_owning(client):
    owner, other = client(), client()
    code, other_code = create(owner), create(other)
    assert owner.call("room_join", {"code": code}) == {"error": f"you own room {code}"}
    assert owner.call("room_join", {"code": other_code})["error"].startswith(f"you own room {code}")


# -- the owner drives, followers follow ----------------------------------------------------------
def test_followers_receive_graph_updates_and_steps(client):
    owner, a, b = client(), client(), client()
    code = create(owner, template("quadratic"))
    join(a, code)
    join(b, code)
    docs = [times_k(float(k)) for k in range(5)]
    for i, doc in enumerate(docs):
        assert owner.call("room_update", {"code": code, "graph": doc}) == {"ok": True}
        assert owner.call("room_step", {"code": code, "index": i}) == {"ok": True}
    for rec in (a, b):
        assert wait_event(rec, "room_graph", 5) == [{"code": code, "graph": d} for d in docs]
        assert wait_event(rec, "room_step", 5) == [{"code": code, "index": i} for i in range(5)]
    assert events(owner, "room_graph") == events(owner, "room_step") == []
    late = client()
    ack = join(late, code)
    assert (ack["graph"], ack["step"]) == (docs[-1], 4)
    # the owner leaves step mode: followers show the whole run, and so does the next joiner
    assert owner.call("room_step", {"code": code, "index": None}) == {"ok": True}
    assert wait_event(a, "room_step", 6)[-1] == {"code": code, "index": None}
    assert join(client(), code)["step"] is None


def test_the_lesson_step_and_the_pace_reach_followers_and_joiners(client):
    owner, a = client(), client()
    code = create(owner, template("quadratic"))
    ack = join(a, code)
    assert (ack["lesson"], ack["pace"]) == (None, None)  # none set yet
    assert owner.call("room_lesson", {"code": code, "index": 2}) == {"ok": True}
    assert owner.call("room_pace", {"code": code, "steps_per_second": 20}) == {"ok": True}
    assert wait_event(a, "room_lesson") == [{"code": code, "index": 2}]
    assert wait_event(a, "room_pace") == [{"code": code, "steps_per_second": 20}]
    late = client()
    ack = join(late, code)
    assert (ack["lesson"], ack["pace"]) == (2, {"steps_per_second": 20})
    # full speed is a pace too (null), and only the owner sets either
    assert owner.call("room_pace", {"code": code, "steps_per_second": None}) == {"ok": True}
    assert join(client(), code)["pace"] == {"steps_per_second": None}
    assert a.call("room_lesson", {"code": code, "index": 0}) == {"error": OWNER_ONLY}
    assert "error" in owner.call("room_pace", {"code": code, "steps_per_second": 0})


def test_followers_receive_the_owners_runs(client):
    owner, a, b = client(), client(), client()
    code = create(owner)
    join(a, code)
    join(b, code)
    run_id, finished, records = owner.run_to_end(template("mlp-mse"), "backward")
    assert finished["status"] == "ok" and records
    want = run_packets(owner, run_id)
    for rec in (a, b):
        got_finished, got_records = rec.result(run_id)
        assert got_finished == finished
        assert got_records == records
        assert run_packets(rec, run_id) == want  # the same packets, in the same order


def test_a_follower_cannot_drive_and_its_runs_stay_its_own(client):
    owner, follower, other, stranger = client(), client(), client(), client()
    doc = template("square-of-a-sum")
    code = create(owner, doc)
    join(follower, code)
    join(other, code)
    for rec in (follower, stranger):
        assert rec.call("room_update", {"code": code, "graph": times_k(9.0)}) == {
            "error": OWNER_ONLY
        }
        assert rec.call("room_step", {"code": code, "index": 3}) == {"error": OWNER_ONLY}
    run_id, finished, _ = follower.run_to_end(times_k(2.0), "backward")
    assert finished["status"] == "ok"
    time.sleep(0.2)
    assert owner.packets(run_id) == other.packets(run_id) == []
    assert quiet(other, "room_graph") and events(other, "room_step") == []
    ack = join(client(), code)
    assert (ack["graph"], ack["step"], ack["run_started"]) == (doc, None, None)


def test_joining_after_runs_gets_the_last_runs_records(client):
    owner = client()
    code = create(owner)
    owner.run_to_end(times_k(2.0), "backward")
    run_id, finished, records = owner.run_to_end(template("mlp-mse"), "backward")
    ack = join(client(), code)
    assert ack["run_started"] == owner.packets(run_id, "run_started")[0][2]
    assert ack["run_finished"] == finished
    assert expand_records(ack["records"]) == records
    assert "records_truncated" not in ack


def test_joining_mid_run_gets_the_records_so_far_then_the_rest(client):
    """The ack's records and the trace packets that follow (before or after the ack) are the
    run's records, none twice and none missing."""
    owner = client()
    code = create(owner)
    run_id = owner.run(slow_chain(400, 512), "backward")
    owner.wait_for(lambda _: len(owner.records(run_id)) >= 20, timeout=30)
    follower = client()
    ack = join(follower, code)
    assert ack["run_started"]["run_id"] == run_id
    assert ack["run_finished"] is None, "the run ended before the join: make it longer"
    assert ack["records"]
    follower.wait_for(lambda _: follower.records(run_id), timeout=30)  # live packets come
    owner.call("cancel", {"run_id": run_id})  # (the rest of the run would add nothing)
    finished, records = owner.result(run_id, timeout=60)
    assert finished["status"] == "cancelled"
    assert follower.wait_finished(run_id) == finished
    sent = owner.raw_records(run_id)
    got = lambda: ack["records"] + follower.raw_records(run_id)  # noqa: E731
    follower.wait_for(lambda _: len(got()) >= len(sent))
    assert got() == sent
    assert expand_records(got()) == records
    assert follower.packets(run_id, "run_started") == []  # it came before the join


def test_the_last_run_is_bounded(server, client):
    rooms = server.app.extensions["wiregrad.rooms"]
    owner = client()
    code = create(owner)
    limit, rooms.max_records = rooms.max_records, 100
    try:
        run_id, _, _ = owner.run_to_end(wide_graph(100), "backward")
        sent = owner.raw_records(run_id)
        # a pack weighs the records it stands for, a table one: the longest start of the run
        # that weighs at most 100 is kept
        weights = [max(1, record_count(r)) for r in sent]
        assert sum(weights) > 100
        kept = next(k for k in range(len(sent), -1, -1) if sum(weights[:k]) <= 100)
        assert kept > 0
        ack = join(client(), code)
        assert ack["records"] == sent[:kept] and ack["records_truncated"] is True
    finally:
        rooms.max_records = limit


def test_leave_and_rejoin(client):
    owner, follower = client(), client()
    code = create(owner, times_k(1.0))
    join(follower, code)
    assert follower.call("room_leave", {"code": code}) == {"ok": True}
    owner.call("room_update", {"code": code, "graph": times_k(2.0)})
    run_id = owner.run_to_end(times_k(2.0), "backward")[0]
    assert quiet(follower, "room_graph") and follower.packets(run_id) == []
    ack = join(follower, code)
    assert ack["graph"] == times_k(2.0) and ack["run_started"]["run_id"] == run_id
    owner.call("room_update", {"code": code, "graph": times_k(3.0)})
    assert wait_event(follower, "room_graph") == [{"code": code, "graph": times_k(3.0)}]


def test_joining_another_room_leaves_the_first(client):
    a, b, follower = client(), client(), client()
    code_a, code_b = create(a), create(b)
    join(follower, code_a)
    join(follower, code_b)
    a.call("room_update", {"code": code_a, "graph": times_k(1.0)})
    b.call("room_update", {"code": code_b, "graph": times_k(2.0)})
    assert wait_event(follower, "room_graph") == [{"code": code_b, "graph": times_k(2.0)}]
    time.sleep(0.3)
    assert events(follower, "room_graph") == [{"code": code_b, "graph": times_k(2.0)}]


# -- closing -------------------------------------------------------------------------------------
def test_owner_disconnect_closes_the_room_after_the_grace(make_server, sio_client):
    """A dropped owner may come back (room_resume, tests/server/test_access.py); one that does
    not within room_grace_seconds loses the room, for everyone."""
    server = make_server(room_grace_seconds=0.5)

    def client():
        rec = sio_client(server)
        rec.client.on("room_closed", lambda data: rec.on("room_closed", data))
        return rec

    owner, a, b = client(), client(), client()
    code = create(owner)
    join(a, code)
    join(b, code)
    owner.client.disconnect()
    assert quiet(a, "room_closed", 0.2)  # not at once
    for rec in (a, b):
        assert wait_event(rec, "room_closed") == [{"code": code}]
    assert a.call("room_join", {"code": code}) == {"error": f"no room {code}"}
    assert a.call("room_leave", {"code": code}) == {"error": f"no room {code}"}


def test_owner_leaving_closes_the_room_and_frees_it_to_create_another(client):
    owner, follower = client(), client()
    code = create(owner)
    join(follower, code)
    assert owner.call("room_leave", {"code": code}) == {"ok": True}
    assert wait_event(follower, "room_closed") == [{"code": code}]
    assert owner.call("room_update", {"code": code, "graph": {}}) == {"error": f"no room {code}"}
    new = create(owner)
    assert new != code
    run_id = owner.run_to_end(times_k(2.0), "backward")[0]
    time.sleep(0.2)
    assert follower.packets(run_id) == []  # no longer in the closed room


def test_a_follower_disconnect_just_removes_it(server, client):
    owner, gone, stays = client(), client(), client()
    code = create(owner)
    join(gone, code)
    join(stays, code)
    gone_sid = gone.client.get_sid()
    gone.client.disconnect()
    rooms = server.app.extensions["wiregrad.rooms"]
    deadline = time.monotonic() + 5
    while gone_sid in rooms.following and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone_sid not in rooms.following
    assert owner.call("room_step", {"code": code, "index": 1}) == {"ok": True}
    assert wait_event(stays, "room_step") == [{"code": code, "index": 1}]
    assert rooms.rooms[code].followers == {stays.client.get_sid()}


# -- the mirror hook, for training ---------------------------------------------------------------
def test_any_packet_the_owner_is_sent_can_be_mirrored(server, client):
    """What training does: emit to the owner, then RoomManager.mirror(sid, event, payload)."""
    owner, follower = client(), client()
    code = create(owner)
    join(follower, code)
    rooms = server.app.extensions["wiregrad.rooms"]
    payload = {"train_id": "t1", "steps": [0, 1], "losses": [0.5, 0.25]}
    rooms.mirror(owner.client.get_sid(), "train_progress", payload)
    assert wait_event(follower, "train_progress") == [payload]
    rooms.mirror(follower.client.get_sid(), "train_progress", payload)  # not an owner: nothing
    rooms.mirror("no-such-sid", "train_progress", payload)
    time.sleep(0.2)
    assert events(follower, "train_progress") == [payload]
    assert join(client(), code)["run_started"] is None  # train_* are not a run's


def test_followers_receive_the_owners_training(client):
    owner, follower = client(), client()
    code = create(owner)
    join(follower, code)
    ack = owner.call("train", {"graph": template("mlp-xor")})
    assert "train_id" in ack, ack
    wait_event(owner, "train_finished", timeout=60)
    wait_event(follower, "train_finished", timeout=30)
    time.sleep(0.1)

    def training(rec):
        with rec.cond:
            return [(ev, d) for _, ev, d in rec.received if ev in TRAIN_EVENTS]

    got = training(owner)
    assert got[0][0] == "train_started" and got[-1][0] == "train_finished"
    assert training(follower) == got


# -- many followers ------------------------------------------------------------------------------
def test_thirty_followers_receive_every_packet(client):
    owner = client()
    code = create(owner)
    followers = [client() for _ in range(30)]
    for rec in followers:
        join(rec, code)
    run_ids = [owner.run_to_end(wide_graph(200), "backward")[0] for _ in range(3)]
    owner.call("room_step", {"code": code, "index": 7})
    for run_id in run_ids:
        want = run_packets(owner, run_id)
        assert len(want) >= 3
        for rec in followers:
            rec.result(run_id)
            assert run_packets(rec, run_id) == want
    for rec in followers:
        assert wait_event(rec, "room_step") == [{"code": code, "index": 7}]


def test_rooms_say_so_when_redis_stops_answering(tmp_path, sio_client):
    """With its message queue gone, a room event is answered in words (not `internal error:
    ConnectionError`), and the server goes on answering."""
    from conftest import start_redis, start_server

    url, redis_proc = start_redis(tmp_path)
    try:
        srv = start_server(tmp_path / "data", message_queue=url)
        owner = sio_client(srv)
        code = owner.call("room_create", {})["code"]
    finally:
        redis_proc.kill()
        redis_proc.wait(10)
    ack = sio_client(srv).call("room_join", {"code": code}, timeout=30)
    assert ack == {
        "error": "rooms are unavailable for a moment: this server cannot reach Redis, its "
        "message queue (--message-queue); try again shortly",
        "code": "unavailable",
    }
    assert srv.healthy()
