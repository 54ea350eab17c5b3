"""Who may do what (backend/server/auth.py, ratelimit.py, rooms.py's resume), against real
servers on loopback: the teacher token, owner keys and share links, the Host check (DNS
rebinding), rate limits, the connection cap, the request timeout, and a room's owner coming
back after its connection dropped."""

import secrets
import socket
import sqlite3
import time

import pytest
import requests
import socketio
import websocket
from _server_helpers import connect, times_k

from backend.server import Settings
from backend.server.auth import HostCheck, urls
from backend.server.store import Store
from conftest import HOST, start_server

TOKEN = secrets.token_urlsafe(32)


def key():
    return secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A server as served beyond loopback: a teacher token, owner keys."""
    return start_server(tmp_path_factory.mktemp("data"), teacher_token=TOKEN)


@pytest.fixture
def make(tmp_path_factory):
    return lambda **kw: start_server(tmp_path_factory.mktemp("data"), **kw)


def as_owner(k):
    return {"X-Wiregrad-Owner": k}


TEACHER = {"Authorization": f"Bearer {TOKEN}"}


def save_new(server, headers, doc=None):
    r = requests.post(server.api("/graphs"), json=doc or times_k(2.0), headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


# -- owners, share links, the teacher ----------------------------------------------------------
def test_a_graph_belongs_to_its_owner_key(classroom):
    alice, bob = key(), key()
    info = save_new(classroom, as_owner(alice))
    gid, share = info["id"], info["share"]
    assert len(share) >= 22
    mine = requests.get(classroom.api("/graphs"), headers=as_owner(alice)).json()["graphs"]
    assert [g["id"] for g in mine] == [gid]
    assert requests.get(classroom.api("/graphs"), headers=as_owner(bob)).json()["graphs"] == []
    assert requests.get(classroom.api("/graphs")).json()["graphs"] == []
    # the owner reads, saves and restores it
    assert requests.get(classroom.api(f"/graphs/{gid}"), headers=as_owner(alice)).ok
    r = requests.put(classroom.api(f"/graphs/{gid}"), json=times_k(3.0), headers=as_owner(alice))
    assert r.status_code == 200 and r.json()["revision"] == 2
    # anyone else: as if it did not exist
    for method in ("get", "put", "delete"):
        r = requests.request(
            method, classroom.api(f"/graphs/{gid}"), json=times_k(9.0), headers=as_owner(bob)
        )
        assert r.status_code == 404 and r.json() == {"error": f"not found: {gid}"}
    r = requests.get(classroom.api(f"/graphs/{gid}/revisions"))
    assert r.status_code == 404


def test_a_share_link_opens_read_only_and_forks(classroom):
    alice, bob = key(), key()
    info = save_new(classroom, as_owner(alice), times_k(5.0))
    gid, share = info["id"], info["share"]
    r = requests.get(classroom.api(f"/graphs/{gid}?share={share}"), headers=as_owner(bob))
    assert r.status_code == 200 and r.json()["name"] == "x times 5.0"
    assert requests.get(classroom.api(f"/graphs/{gid}/revisions?share={share}")).ok
    r = requests.put(
        classroom.api(f"/graphs/{gid}?share={share}"), json=times_k(6.0), headers=as_owner(bob)
    )
    assert r.status_code == 403 and r.json()["code"] == "read_only"
    assert "fork" in r.json()["error"]
    r = requests.post(classroom.api(f"/graphs/{gid}/revisions/1/restore?share={share}"))
    assert r.status_code == 403
    r = requests.delete(classroom.api(f"/graphs/{gid}?share={share}"), headers=as_owner(bob))
    assert r.status_code == 403
    # a wrong share token is no share token
    r = requests.get(classroom.api(f"/graphs/{gid}?share={share[:-2]}xx"))
    assert r.status_code == 404
    # forking: bob saves the document as a graph of his own
    shared = requests.get(classroom.api(f"/graphs/{gid}?share={share}")).json()
    fork = save_new(classroom, as_owner(bob), shared)
    assert fork["id"] != gid
    bobs = requests.get(classroom.api("/graphs"), headers=as_owner(bob)).json()["graphs"]
    assert [g["id"] for g in bobs] == [fork["id"]]
    assert requests.get(classroom.api(f"/graphs/{fork['id']}"), headers=as_owner(bob)).json() == (
        shared
    )
    # the original is untouched
    info = requests.get(classroom.api("/graphs"), headers=as_owner(alice)).json()["graphs"]
    assert [(g["id"], g["revision"]) for g in info] == [(gid, 1)]


def test_the_teacher_token_sees_and_manages_everything(classroom):
    alice = key()
    gid = save_new(classroom, as_owner(alice))["id"]
    listed = requests.get(classroom.api("/graphs"), headers=TEACHER).json()["graphs"]
    assert gid in [g["id"] for g in listed]
    other = {"X-Wiregrad-Token": TOKEN}
    assert requests.get(classroom.api(f"/graphs/{gid}"), headers=other).ok
    r = requests.put(classroom.api(f"/graphs/{gid}"), json=times_k(7.0), headers=TEACHER)
    assert r.status_code == 200
    assert requests.delete(classroom.api(f"/graphs/{gid}"), headers=TEACHER).ok
    assert requests.get(classroom.api(f"/graphs/{gid}"), headers=as_owner(alice)).status_code == 404
    # a wrong token is no token
    wrong = {"Authorization": f"Bearer {TOKEN[:-1]}x"}
    assert requests.get(classroom.api("/graphs"), headers=wrong).json()["graphs"] == []


def test_saving_needs_an_owner_key_and_a_sane_one(classroom):
    r = requests.post(classroom.api("/graphs"), json=times_k(1.0))
    assert r.status_code == 401 and "X-Wiregrad-Owner" in r.json()["error"]
    r = requests.post(classroom.api("/graphs"), json=times_k(1.0), headers=as_owner("short"))
    assert r.status_code == 400 and "22-128" in r.json()["error"]
    # reading what anyone may read needs nothing
    assert requests.get(classroom.api("/ops")).ok and requests.get(classroom.api("/health")).ok


def test_on_loopback_everyone_may_do_everything(make):
    server = make()  # no teacher token: one person's server, as before
    a = save_new(server, as_owner(key()))
    b = save_new(server, {})
    ids = [g["id"] for g in requests.get(server.api("/graphs")).json()["graphs"]]
    assert set(ids) == {a["id"], b["id"]}
    assert requests.put(server.api(f"/graphs/{a['id']}"), json=times_k(4.0)).ok


def test_a_store_from_before_owners_is_migrated_in_place(tmp_path):
    db = sqlite3.connect(tmp_path / "wiregrad.sqlite3")
    db.executescript(
        """CREATE TABLE graphs (id TEXT PRIMARY KEY, name TEXT NOT NULL, created REAL NOT NULL,
           updated REAL NOT NULL, head INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
           CREATE TABLE revisions (graph_id TEXT NOT NULL REFERENCES graphs(id),
           rev INTEGER NOT NULL, created REAL NOT NULL, name TEXT NOT NULL,
           document TEXT NOT NULL, PRIMARY KEY (graph_id, rev));
           INSERT INTO graphs VALUES ('old1', 'old graph', 1, 1, 2, 0);
           INSERT INTO revisions VALUES ('old1', 1, 1, 'old graph', '{"v": 1}');
           INSERT INTO revisions VALUES ('old1', 2, 1, 'old graph', '{"v": 2}');"""
    )
    db.commit()
    db.close()
    store = Store(tmp_path)
    assert store.get("old1") == {"v": 2} and store.get("old1", 1) == {"v": 1}
    owner, share = store.access("old1")
    assert owner is None and len(share) >= 22
    Store(tmp_path)  # a second start (or a second process) changes nothing
    assert store.access("old1") == (owner, share)
    server = start_server(tmp_path, teacher_token=TOKEN)
    assert requests.get(server.api("/graphs")).json()["graphs"] == []
    teacher = requests.get(server.api("/graphs"), headers=TEACHER).json()["graphs"]
    assert [g["id"] for g in teacher] == ["old1"]


# -- the Host header -----------------------------------------------------------------------------
def raw_get(port, path, host):
    """A GET with exactly this Host header; (status line, body)."""
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].decode(), body.decode(errors="replace")


def test_a_foreign_host_header_is_refused_before_routing(classroom):
    port = classroom.port
    for path in ("/api/graphs", "/", "/socket.io/?EIO=4&transport=polling"):
        status, body = raw_get(port, path, f"rebound.example:{port}")
        assert status.endswith("403 FORBIDDEN"), (path, status)
        assert "rebound.example" in body and "--allow-host" in body
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        assert raw_get(port, "/api/health", host)[0].endswith("200 OK"), host
    status, _ = raw_get(port, "/socket.io/?EIO=4&transport=polling", f"127.0.0.1:{port}")
    assert status.endswith("200 OK")
    # the websocket handshake too
    url = f"ws://{HOST}:{port}/socket.io/?EIO=4&transport=websocket"
    with pytest.raises(websocket.WebSocketBadStatusException) as exc:
        websocket.create_connection(url, host="rebound.example", timeout=10)
    assert exc.value.status_code == 403


def test_allow_host_adds_a_name(make):
    server = make(allowed_hosts=["wiregrad.school.example"])
    port = server.port
    assert raw_get(port, "/api/health", f"wiregrad.school.example:{port}")[0].endswith("200 OK")
    assert raw_get(port, "/api/health", f"evil.example:{port}")[0].endswith("403 FORBIDDEN")


def test_bound_to_every_interface_ip_addresses_are_answered():
    check = HostCheck(None, Settings(host="0.0.0.0"))
    assert check.allowed("192.168.1.20:5000") and check.allowed("[fe80::1]:5000")
    assert check.allowed("localhost:5000") and not check.allowed("attacker.example:5000")
    assert not HostCheck(None, Settings(host="127.0.0.1")).allowed("192.168.1.20:5000")


def test_beyond_loopback_the_teacher_url_carries_the_token():
    teacher, students = urls(Settings(host="0.0.0.0", port=5123, teacher_token=TOKEN))
    assert teacher.endswith(f":5123/?token={TOKEN}") and students.endswith(":5123/")
    assert TOKEN not in students
    one, same = urls(Settings(host="127.0.0.1", port=5123))
    assert one == same == "http://127.0.0.1:5123/"


# -- rate limits, the connection cap, the request timeout ----------------------------------------
def test_room_joins_are_rate_limited_per_client(make, sio_client):
    server = make(joins_per_minute=5, failed_joins_per_minute=1000)
    rec = sio_client(server)
    for _ in range(5):
        assert rec.call("room_join", {"code": "ABCDEF"}) == {"error": "no room ABCDEF"}
    ack = rec.call("room_join", {"code": "ABCDEF"})
    assert ack["code"] == "rate_limited" and "too many room joins" in ack["error"]
    assert ack["retry_after"] > 0


def test_wrong_codes_are_limited_per_address_across_connections(make, sio_client):
    server = make(joins_per_minute=100, failed_joins_per_minute=4)
    owner = sio_client(server)
    code = owner.call("room_create", {})["code"]
    guessers = [sio_client(server) for _ in range(4)]
    for rec in guessers:
        assert "no room" in rec.call("room_join", {"code": "ZZZZZZ"})["error"]
    ack = sio_client(server).call("room_join", {"code": "ZZZZZY"})
    assert ack["code"] == "rate_limited" and "wrong room codes" in ack["error"]
    # now even the right code waits: the address has used its tries
    assert sio_client(server).call("room_join", {"code": code})["code"] == "rate_limited"


def test_right_codes_do_not_count_against_the_address(make, sio_client):
    server = make(joins_per_minute=100, failed_joins_per_minute=2)
    code = sio_client(server).call("room_create", {})["code"]
    for _ in range(6):  # a classroom behind one address joins
        assert sio_client(server).call("room_join", {"code": code})["code"] == code


def test_costly_events_are_rate_limited_per_client(make, sio_client):
    server = make(events_per_second=1, events_burst=3)
    rec, other = sio_client(server), sio_client(server)
    asks = [rec.call("tensor", {"run_id": "nope", "node": "x"}) for _ in range(4)]
    assert all(a.get("code") != "rate_limited" for a in asks[:3])
    assert asks[3]["code"] == "rate_limited" and "requests a second" in asks[3]["error"]
    ack = rec.call("run", {"graph": times_k(2.0), "mode": "forward"})
    assert ack["code"] == "rate_limited"
    assert "run_id" in other.call("run", {"graph": times_k(2.0), "mode": "forward"})
    time.sleep(1.1)
    assert "run_id" in rec.call("run", {"graph": times_k(2.0), "mode": "forward"})


def test_connections_are_capped(make, sio_client):
    server = make(max_connections=2)
    first, _second = sio_client(server), sio_client(server)
    refused = []
    client = socketio.Client(reconnection=False)
    client.on("connect_error", refused.append)
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(server.url, transports=["websocket"], wait_timeout=10)
    assert refused == [{"message": "the server is full (2 connections); try again later"}]
    first.client.disconnect()
    deadline = time.monotonic() + 5
    while True:  # the freed place is taken again
        try:
            third = connect(server.url)
            break
        except socketio.exceptions.ConnectionError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    third.client.disconnect()


def test_a_half_sent_request_times_out_but_a_websocket_stays(make, sio_client):
    server = make(request_timeout=1.0)
    with socket.create_connection((HOST, server.port), timeout=10) as s:
        t0 = time.monotonic()
        s.sendall(f"GET /api/health HTTP/1.1\r\nHost: {HOST}\r\n".encode())  # never finished
        assert s.recv(1024) == b""  # the server hangs up
        assert time.monotonic() - t0 < 5
    rec = sio_client(server)
    time.sleep(2.0)
    assert "run_id" in rec.call("run", {"graph": times_k(2.0), "mode": "forward"})


# -- a room's owner coming back -----------------------------------------------------------------
def room_client(server, sio_client):
    rec = sio_client(server)
    for event in ("room_graph", "room_closed"):
        rec.client.on(event, lambda data, event=event: rec.on(event, data))
    return rec


def got(rec, event):
    with rec.cond:
        return [d for _, ev, d in rec.received if ev == event]


def test_the_owner_takes_its_room_back_after_a_drop(make, sio_client):
    server = make(room_grace_seconds=30)
    owner, follower = room_client(server, sio_client), room_client(server, sio_client)
    created = owner.call("room_create", {"graph": times_k(1.0)})
    code, secret = created["code"], created["secret"]
    assert len(secret) >= 22
    follower.call("room_join", {"code": code})
    owner.client.disconnect()
    time.sleep(0.3)
    assert got(follower, "room_closed") == []  # the room waits
    wrong = room_client(server, sio_client).call(
        "room_resume", {"code": code, "secret": secrets.token_urlsafe(16)}
    )
    assert wrong == {"error": f"no room {code} with that secret"}
    back = room_client(server, sio_client)
    ack = back.call("room_resume", {"code": code, "secret": secret})
    assert ack["code"] == code and ack["graph"] == times_k(1.0)
    assert back.call("room_update", {"code": code, "graph": times_k(2.0)}) == {"ok": True}
    follower.wait_for(lambda _: got(follower, "room_graph"))
    assert got(follower, "room_graph") == [{"code": code, "graph": times_k(2.0)}]
    run_id = back.run_to_end(times_k(2.0), "backward")[0]
    follower.wait_finished(run_id)
    assert back.call("room_leave", {"code": code}) == {"ok": True}
    follower.wait_for(lambda _: got(follower, "room_closed"))


def test_after_a_restart_the_owner_opens_its_room_again_with_the_same_code(tmp_path, sio_client):
    """Rooms live in the server's memory: a restart loses them. The owner's page still has the
    code and its secret; `room_resume` opens the room again under that code, and the students'
    pages, rejoining that code by themselves, follow it again. The code is on the projector:
    a student who asks for it first with any other secret is refused (the claim on disk, in
    the same data dir, says whose it is)."""
    before = start_server(tmp_path)
    created = room_client(before, sio_client).call("room_create", {"graph": times_k(1.0)})
    code, secret = created["code"], created["secret"]
    after = start_server(tmp_path)  # a new server on the same data dir: no rooms in memory
    student = room_client(after, sio_client)
    assert student.call("room_join", {"code": code}) == {"error": f"no room {code}"}
    taker = student.call("room_resume", {"code": code, "secret": secrets.token_urlsafe(16)})
    assert taker == {"error": f"no room {code} with that secret"}
    owner = room_client(after, sio_client)
    ack = owner.call("room_resume", {"code": code, "secret": secret})
    # (the graph the room showed comes back from the data dir: room_archive.py)
    assert ack["code"] == code and ack["restored"] is True and ack["graph"] == times_k(1.0)
    assert owner.call("room_update", {"code": code, "graph": times_k(3.0)}) == {"ok": True}
    joined = student.call("room_join", {"code": code})
    assert joined["code"] == code and joined["graph"] == times_k(3.0)
    # the code is the owner's again: another secret does not take it
    other = room_client(after, sio_client).call(
        "room_resume", {"code": code, "secret": secrets.token_urlsafe(16)}
    )
    assert other == {"error": f"no room {code} with that secret"}
    # once the owner leaves, the claim is gone: its secret opens nothing after a restart
    assert owner.call("room_leave", {"code": code}) == {"ok": True}
    again = room_client(start_server(tmp_path), sio_client)
    assert again.call("room_resume", {"code": code, "secret": secret}) == {
        "error": f"no room {code} with that secret"
    }


def test_a_code_nobody_claimed_cannot_be_opened_by_resuming_it(make, sio_client):
    server = make()
    ack = room_client(server, sio_client).call(
        "room_resume", {"code": "ABCDEF", "secret": secrets.token_urlsafe(16)}
    )
    assert ack == {"error": "no room ABCDEF with that secret"}


def test_resuming_from_a_second_connection_takes_the_lead_from_the_first(make, sio_client):
    server = make()
    old = room_client(server, sio_client)
    created = old.call("room_create", {})
    new = room_client(server, sio_client)
    ack = new.call("room_resume", {"code": created["code"], "secret": created["secret"]})
    assert ack["code"] == created["code"]
    deadline = time.monotonic() + 5
    while old.client.connected and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not old.client.connected  # the stale connection leads no more
    assert new.call("room_step", {"code": created["code"], "index": 3}) == {"ok": True}
