"""Several processes on one Redis (`wiregrad serve --message-queue redis://...`): Debian's real
redis-server on a free loopback port, two `wiregrad serve` processes sharing it and one data
dir; a room's owner on one, its followers on the other (docs/deployment.md)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from _server_helpers import connect, times_k, wide_graph

from conftest import HOST, free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
ROOM_EVENTS = ("room_graph", "room_step", "room_closed")


@pytest.fixture(scope="module")
def processes(redis_url, tmp_path_factory):
    """Two `wiregrad serve` processes on one Redis and one data dir: their base URLs."""
    data = tmp_path_factory.mktemp("shared-data")
    procs, urls = [], []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for _ in range(2):
        port = free_port()
        cmd = [sys.executable, "-m", "backend.cli", "serve", "--host", HOST, "--port", str(port)]
        cmd += ["--data-dir", str(data), "--message-queue", redis_url]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL))
        urls.append(f"http://{HOST}:{port}")
    for url in urls:
        wait_until(lambda url=url: requests.get(f"{url}/api/health", timeout=2).ok, url)
    yield urls
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture
def client():
    made = []

    def make(url):
        rec = connect(url)
        for event in ROOM_EVENTS:
            rec.client.on(event, lambda data, event=event: rec.on(event, data))
        made.append(rec)
        return rec

    yield make
    for rec in made:
        if rec.client.connected:
            rec.client.disconnect()


def got(rec, event):
    with rec.cond:
        return [d for _, ev, d in rec.received if ev == event]


def wait_event(rec, event, n=1):
    rec.wait_for(lambda _: len(got(rec, event)) >= n, timeout=15)
    return got(rec, event)


def run_packets(rec, run_id):
    return [(ev, d) for _, ev, d in rec.packets(run_id)]


def test_followers_on_another_process_see_the_owner(processes, client):
    a, b = processes
    owner = client(a)
    created = owner.call("room_create", {"graph": times_k(1.0)})
    code = created["code"]
    followers = [client(b), client(b), client(a)]
    for rec in followers:
        ack = rec.call("room_join", {"code": code})
        assert ack["graph"] == times_k(1.0) and ack["run_started"] is None, ack
    assert owner.call("room_update", {"code": code, "graph": times_k(2.0)}) == {"ok": True}
    for rec in followers:
        assert wait_event(rec, "room_graph") == [{"code": code, "graph": times_k(2.0)}]
    run_id, finished, _ = owner.run_to_end(wide_graph(200), "backward")
    assert finished["status"] == "ok"
    want = run_packets(owner, run_id)
    assert len(want) >= 3
    for rec in followers:
        rec.result(run_id)
        assert run_packets(rec, run_id) == want  # every packet, in order, on both processes

    # a late joiner on the other process gets the last run from Redis
    late = client(b)
    ack = late.call("room_join", {"code": code})
    assert ack["run_started"]["run_id"] == run_id
    assert ack["records"] == owner.raw_records(run_id)
    assert ack["run_finished"] == finished and ack["graph"] == times_k(2.0)

    # the owner's connection drops; it comes back on the other process with its secret
    owner.client.disconnect()
    time.sleep(0.3)
    assert all(got(rec, "room_closed") == [] for rec in followers)
    teacher = client(b)
    back = teacher.call("room_resume", {"code": code, "secret": created["secret"]})
    assert back["code"] == code and back["graph"] == times_k(2.0)
    assert teacher.call("room_step", {"code": code, "index": 4}) == {"ok": True}
    for rec in [*followers, late]:
        assert wait_event(rec, "room_step") == [{"code": code, "index": 4}]
    run_id = teacher.run_to_end(times_k(3.0), "backward")[0]
    for rec in [*followers, late]:
        rec.result(run_id)
        assert run_packets(rec, run_id) == run_packets(teacher, run_id)

    # the owner leaves: the room closes for everyone, on every process
    assert teacher.call("room_leave", {"code": code}) == {"ok": True}
    for rec in [*followers, late]:
        assert wait_event(rec, "room_closed") == [{"code": code}]
    for url in (a, b):
        assert client(url).call("room_join", {"code": code}) == {"error": f"no room {code}"}


def test_an_owner_that_does_not_come_back_is_not_a_room_forever(processes, client):
    a, b = processes
    owner = client(a)
    code = owner.call("room_create", {})["code"]
    assert client(b).call("room_join", {"code": code})["code"] == code
    # someone else on the other process cannot drive it, nor take it without the secret
    intruder = client(b)
    assert intruder.call("room_step", {"code": code, "index": 1}) == {
        "error": "only the room's owner can drive it"
    }
    ack = intruder.call("room_resume", {"code": code, "secret": "x" * 22})
    assert ack == {"error": f"no room {code} with that secret"}
    assert owner.call("room_leave", {"code": code}) == {"ok": True}


def test_a_flushed_redis_gets_its_rooms_back_and_nobody_takes_them(processes, client, redis_url):
    """Redis forgets every room (FLUSHALL, or a restart without persistence): a student who
    asks for the teacher's code with any secret is refused (the claim on disk says whose it
    is), and the owner's process registers its room again, so students can join as before."""
    import redis

    a, b = processes
    owner = client(a)
    created = owner.call("room_create", {"graph": times_k(2.0)})
    code = created["code"]
    assert owner.call("room_step", {"code": code, "index": 2}) == {"ok": True}
    redis.Redis.from_url(redis_url).flushall()
    intruder = client(b)
    ack = intruder.call("room_resume", {"code": code, "secret": "x" * 22})
    assert ack == {"error": f"no room {code} with that secret"}
    # (watched in Redis, not by joining: joins are rate limited per client)
    store = redis.Redis.from_url(redis_url)
    wait_until(lambda: store.exists(f"wiregrad:room:{code}"), "the room registered again")
    student = client(b)
    ack = student.call("room_join", {"code": code})
    assert ack["graph"] == times_k(2.0) and ack["step"] == 2, ack
    assert owner.call("room_step", {"code": code, "index": 3}) == {"ok": True}
    assert wait_event(student, "room_step") == [{"code": code, "index": 3}]
    assert owner.call("room_leave", {"code": code}) == {"ok": True}


def test_processes_share_one_data_dir(processes):
    a, b = processes
    r = requests.post(f"{a}/api/graphs", json=times_k(4.0))
    assert r.status_code == 201, r.text
    gid = r.json()["id"]
    r = requests.put(f"{b}/api/graphs/{gid}", json=times_k(5.0))
    assert r.status_code == 200, r.text
    assert r.json()["revision"] == 2
    assert requests.get(f"{a}/api/graphs/{gid}").json()["name"] == "x times 5.0"
    revisions = requests.get(f"{b}/api/graphs/{gid}/revisions").json()["revisions"]
    assert [r["revision"] for r in revisions] == [1, 2]
