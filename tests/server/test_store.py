"""The graph store: revisions, ids, failed saves, and a writer killed in the middle of saves."""

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from backend.server.store import BadId, NotFound, Store

ROOT = Path(__file__).resolve().parents[2]


def doc(i, name="g"):
    return {"name": f"{name} {i}", "nodes": [{"id": "x", "op": "tensor", "params": {"value": i}}]}


def check_consistent(path):
    """The database is sound: integrity check, each graph's head is its newest revision and
    its revisions run 1..head without gaps."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for gid, head in db.execute("SELECT id, head FROM graphs"):
            revs = [
                r
                for (r,) in db.execute(
                    "SELECT rev FROM revisions WHERE graph_id = ? ORDER BY rev", (gid,)
                )
            ]
            assert revs == list(range(1, head + 1)), (gid, head, revs[-3:])
        orphans = db.execute(
            "SELECT COUNT(*) FROM revisions WHERE graph_id NOT IN (SELECT id FROM graphs)"
        ).fetchone()[0]
        assert orphans == 0
    finally:
        db.close()


def test_create_save_get_revisions_restore_delete(tmp_path):
    store = Store(tmp_path)
    info = store.create(doc(1))
    gid = info["id"]
    assert info["revision"] == 1 and info["name"] == "g 1"
    for i in range(2, 6):
        assert store.save(gid, doc(i))["revision"] == i
    assert store.get(gid) == doc(5)
    assert [store.get(gid, r) for r in range(1, 6)] == [doc(i) for i in range(1, 6)]
    assert [r["revision"] for r in store.revisions(gid)] == [1, 2, 3, 4, 5]
    assert store.restore(gid, 2)["revision"] == 6
    assert store.get(gid) == doc(2) and store.get(gid, 5) == doc(5)
    assert store.list()[0]["id"] == gid
    store.delete(gid)
    with pytest.raises(NotFound):
        store.get(gid)
    with pytest.raises(NotFound):
        store.save(gid, doc(7))
    with pytest.raises(NotFound):
        store.delete(gid)
    assert store.list() == []
    check_consistent(store.path)


def test_a_store_reopened_sees_everything(tmp_path):
    gid = Store(tmp_path).create(doc(1), graph_id="mine")["id"]
    Store(tmp_path).save(gid, doc(2))
    again = Store(tmp_path)
    assert again.get("mine") == doc(2) and again.get("mine", 1) == doc(1)
    with pytest.raises(ValueError):
        again.create(doc(3), graph_id="mine")
    assert again.get("mine") == doc(2)


@pytest.mark.parametrize(
    "bad",
    ["", "../x", "a/b", "a.b", "a" * 65, "x'; DROP TABLE graphs; --", "é", None, 5, "a\x00b"],
)
def test_bad_ids_are_refused_everywhere(tmp_path, bad):
    store = Store(tmp_path)
    store.create(doc(1), graph_id="ok")
    calls = [
        lambda: store.get(bad),
        lambda: store.get(bad, 1),
        lambda: store.save(bad, doc(2)),
        lambda: store.delete(bad),
        lambda: store.revisions(bad),
        lambda: store.restore(bad, 1),
        lambda: store.info(bad),
    ]
    if bad:  # create() makes its own id when given none
        calls.append(lambda: store.create(doc(2), graph_id=bad))
    for call in calls:
        with pytest.raises(BadId):
            call()
    assert [g["id"] for g in store.list()] == ["ok"]
    check_consistent(store.path)


def test_sql_in_names_and_documents_is_just_text(tmp_path):
    store = Store(tmp_path)
    evil = "'); DELETE FROM revisions; --"
    gid = store.create({"name": evil, "description": evil})["id"]
    assert store.get(gid) == {"name": evil, "description": evil}
    assert store.info(gid)["name"] == evil
    check_consistent(store.path)


def test_a_document_json_refuses_leaves_the_head_intact(tmp_path):
    store = Store(tmp_path)
    gid = store.create(doc(1))["id"]
    store.save(gid, doc(2))
    for bad in ({"name": "nan", "value": float("nan")}, {"name": "obj", "value": object()}):
        with pytest.raises((ValueError, TypeError)):
            store.save(gid, bad)
    assert store.get(gid) == doc(2)
    assert store.info(gid)["revision"] == 2
    check_consistent(store.path)


def test_a_failure_inside_the_transaction_rolls_back(tmp_path, monkeypatch):
    """The revision row is written, then updating the graph's head fails: nothing of the
    failed save stays, the head is the previous revision, and the next save works."""
    store = Store(tmp_path)
    gid = store.create(doc(1))["id"]
    store.save(gid, doc(2))
    real_connect = Store._connect

    class Failing:
        def __init__(self, db):
            self.db = db

        def execute(self, sql, *args):
            if sql.lstrip().startswith("UPDATE graphs SET head"):
                raise sqlite3.OperationalError("disk I/O error (simulated)")
            return self.db.execute(sql, *args)

    from contextlib import contextmanager

    @contextmanager
    def failing_connect(self):
        with real_connect(self) as db:
            yield Failing(db)

    monkeypatch.setattr(Store, "_connect", failing_connect)
    with pytest.raises(sqlite3.OperationalError):
        store.save(gid, doc(3))
    monkeypatch.setattr(Store, "_connect", real_connect)

    assert store.get(gid) == doc(2)
    assert [r["revision"] for r in store.revisions(gid)] == [1, 2]
    with pytest.raises(NotFound):
        store.get(gid, 3)
    assert store.save(gid, doc(4))["revision"] == 3
    assert store.get(gid, 3) == doc(4)
    check_consistent(store.path)


WRITER = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {root!r})
    from backend.server.store import Store
    store = Store({data!r})
    pid = os.getpid()
    i = 0
    while True:
        i += 1
        store.save("shared", {{"name": f"save {{pid}} {{i}}", "pid": pid, "i": i,
                              "pad": "x" * (i * 37 % 20000)}})
        print(pid, i, flush=True)
    """
)


def test_writers_killed_mid_save_lose_nothing_committed(tmp_path):
    """Two processes save to the same graph as fast as they can and are SIGKILLed in the
    middle of it: every save they reported is there, with what was saved, once; each
    writer's saves are there in order without a gap; revisions run 1..head; the head is the
    newest revision and the store takes the next save."""
    script = WRITER.format(root=str(ROOT), data=str(tmp_path))
    Store(tmp_path).create({"name": "start"}, graph_id="shared")
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    reported = set()  # (pid, i)
    try:
        deadline = time.monotonic() + 20
        while len(reported) < 150 and time.monotonic() < deadline:
            for p in procs:
                pid, i = p.stdout.readline().split()
                reported.add((int(pid), int(i)))
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
        for p in procs:
            p.wait(10)
            for line in p.stdout:  # saves reported just before the kill
                if len(line.split()) == 2:
                    pid, i = line.split()
                    reported.add((int(pid), int(i)))
            p.stdout.close()
    assert len(reported) >= 150
    store = Store(tmp_path)
    check_consistent(store.path)
    head = store.info("shared")["revision"]
    docs = [store.get("shared", rev) for rev in range(1, head + 1)]
    assert docs[0] == {"name": "start"}
    saved = [(d["pid"], d["i"]) for d in docs[1:]]
    assert len(saved) == len(set(saved))
    assert reported <= set(saved)  # at most the save in flight at the kill is unreported
    for pid in {p.pid for p in procs}:
        mine = [i for p, i in saved if p == pid]
        assert mine == list(range(1, len(mine) + 1))
    assert store.get("shared") == docs[-1]
    assert store.save("shared", {"name": "after"})["revision"] == head + 1


def test_save_reports_the_revision_it_wrote(tmp_path, monkeypatch):
    """Two saves at once (two API requests): each must be told the revision it made."""
    store = Store(tmp_path)
    gid = store.create(doc(1))["id"]
    real_info = Store.info
    interleaved = []

    def info_after_another_save(self, graph_id):
        if not interleaved:  # another request's save lands between commit and info()
            interleaved.append(True)
            self.save(graph_id, doc(99))
        return real_info(self, graph_id)

    monkeypatch.setattr(Store, "info", info_after_another_save)
    mine = store.save(gid, doc(2))
    assert store.get(gid, mine["revision"]) == doc(2)
