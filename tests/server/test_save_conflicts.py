"""Saves carry the revision they were based on (docs/protocol.md): `PUT /api/graphs/<id>
?base_revision=N` saves only while N is the head, else 409 with the head's number and nothing
lost; without a base a save appends as before (scripts); a GET names the revision it sent in
`X-Wiregrad-Revision`. The check is inside the write transaction: of two saves based on one
head, exactly one passes, however they interleave."""

import threading

import pytest
import requests
from _server_helpers import graph, tensor

from backend.server.store import Conflict, Store


def doc(name):
    return graph([tensor("x", 1.0)], name=name)


def test_two_saves_on_one_base_the_second_gets_409_and_keep_mine_saves_both(server):
    gid = requests.post(server.api("/graphs"), json=doc("start"), timeout=10).json()["id"]
    opened = requests.get(server.api(f"/graphs/{gid}"), timeout=10)
    base = int(opened.headers["X-Wiregrad-Revision"])
    assert base == 1

    theirs = requests.put(server.api(f"/graphs/{gid}?base_revision={base}"), json=doc("theirs"))
    assert theirs.status_code == 200 and theirs.json()["revision"] == 2

    mine = requests.put(server.api(f"/graphs/{gid}?base_revision={base}"), json=doc("mine"))
    assert mine.status_code == 409
    body = mine.json()
    assert body["code"] == "conflict" and body["revision"] == 2
    assert body["error"].startswith(
        "this graph has changed since you opened it: revision 2 was saved after the revision 1 "
        "your copy is based on; nothing was saved."
    )
    # nothing lost, nothing added
    head = requests.get(server.api(f"/graphs/{gid}"), timeout=10)
    assert head.json()["name"] == "theirs" and head.headers["X-Wiregrad-Revision"] == "2"
    # "keep mine": saved again, based on the head they told us
    again = requests.put(server.api(f"/graphs/{gid}?base_revision=2"), json=doc("mine"))
    assert again.status_code == 200 and again.json()["revision"] == 3
    names = [
        requests.get(server.api(f"/graphs/{gid}?revision={r}"), timeout=10).json()["name"]
        for r in (1, 2, 3)
    ]
    assert names == ["start", "theirs", "mine"]
    revisions = requests.get(server.api(f"/graphs/{gid}/revisions"), timeout=10).json()
    assert [r["revision"] for r in revisions["revisions"]] == [1, 2, 3]
    # an older revision asked for names itself
    old = requests.get(server.api(f"/graphs/{gid}?revision=1"), timeout=10)
    assert old.headers["X-Wiregrad-Revision"] == "1"


def test_a_base_past_the_head_is_a_conflict_too(server):
    gid = requests.post(server.api("/graphs"), json=doc("a"), timeout=10).json()["id"]
    r = requests.put(server.api(f"/graphs/{gid}?base_revision=7"), json=doc("b"), timeout=10)
    assert r.status_code == 409 and r.json()["revision"] == 1


def test_a_save_without_a_base_appends_as_before(server):
    gid = requests.post(server.api("/graphs"), json=doc("a"), timeout=10).json()["id"]
    for expected in (2, 3):
        r = requests.put(server.api(f"/graphs/{gid}"), json=doc("b"), timeout=10)
        assert r.status_code == 200 and r.json()["revision"] == expected


@pytest.mark.parametrize("bad", ["", "0", "-1", "1.5", "abc", "٣", "9" * 30, "9" * 5000])
def test_a_malformed_base_is_a_400(server, bad):
    gid = requests.post(server.api("/graphs"), json=doc("a"), timeout=10).json()["id"]
    r = requests.put(server.api(f"/graphs/{gid}"), params={"base_revision": bad}, json=doc("b"))
    assert r.status_code == 400, (bad, r.text)
    assert r.json()["error"].startswith("base_revision must be a revision number")
    assert (
        requests.get(server.api(f"/graphs/{gid}/revisions")).json()["revisions"][-1]["revision"]
        == 1
    )


def test_saves_racing_on_one_base_exactly_one_wins(tmp_path):
    store = Store(tmp_path)
    gid = store.create(doc("start"))["id"]
    outcomes = []
    start = threading.Barrier(8)

    def save(k):
        start.wait()
        try:
            outcomes.append(store.save(gid, doc(f"w{k}"), base=1)["revision"])
        except Conflict as conflict:
            outcomes.append(("conflict", conflict.head))

    threads = [threading.Thread(target=save, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(2) == 1 and outcomes.count(("conflict", 2)) == 7, outcomes
    assert store.info(gid)["revision"] == 2
