"""Store failures say what happened and what to do, and reads keep working: a full disk and a
read-only data dir (real tmpfs mounts: this needs root with CAP_SYS_ADMIN, as in the project's
containers), and a damaged database at start (one line with the file's path)."""

import os
import subprocess
import sys

import pytest
import requests
from _server_helpers import graph, tensor

from conftest import start_server


def _mount(path, size, *options):
    path.mkdir(parents=True, exist_ok=True)
    opts = ",".join((f"size={size}",) + options)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], capture_output=True
    )
    if done.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs for this test: {done.stderr.decode().strip()}")
    return path


@pytest.fixture
def small_disk(tmp_path):
    path = _mount(tmp_path / "disk", "600k")
    yield path
    subprocess.run(["umount", "-l", str(path)], check=False)


def doc(name, pad=0):
    d = graph([tensor("x", 1.0)], name=name)
    d["description"] = "p" * pad
    return d


def test_a_full_disk_says_nothing_was_saved_and_the_last_revision(small_disk):
    srv = start_server(small_disk)
    created = requests.post(srv.api("/graphs"), json=doc("kept"), timeout=10)
    assert created.status_code == 201
    gid = created.json()["id"]
    for _ in range(11):
        assert requests.put(srv.api(f"/graphs/{gid}"), json=doc("kept"), timeout=10).ok
    # fill the disk, then save something bigger than what is left
    fd = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    r = requests.put(srv.api(f"/graphs/{gid}"), json=doc("lost", pad=9000), timeout=10)
    assert r.status_code == 507, r.text
    assert r.json()["error"].startswith(
        "the disk is full; nothing was saved, your last saved revision is r12"
    )
    # reads keep working, and the saved graph is as it was
    assert requests.get(srv.api(f"/graphs/{gid}"), timeout=10).json()["name"] == "kept"
    assert (
        len(requests.get(srv.api(f"/graphs/{gid}/revisions"), timeout=10).json()["revisions"]) == 12
    )
    os.remove(small_disk / "filler")
    assert requests.put(srv.api(f"/graphs/{gid}"), json=doc("again"), timeout=10).ok


def test_a_read_only_data_dir_keeps_reads_and_says_so_on_writes(tmp_path):
    src, data = tmp_path / "rw", tmp_path / "ro"
    srv = start_server(src)
    gid = requests.post(srv.api("/graphs"), json=doc("first"), timeout=10).json()["id"]
    requests.put(srv.api(f"/graphs/{gid}"), json=doc("second"), timeout=10)
    data.mkdir()
    # the same files seen through a read-only bind mount
    for cmd in (
        ["mount", "--bind", str(src), str(data)],
        ["mount", "-o", "remount,bind,ro", str(data)],
    ):
        done = subprocess.run(cmd, capture_output=True)
        if done.returncode != 0:
            pytest.fail(f"cannot bind-mount for this test: {done.stderr.decode().strip()}")
    try:
        ro = start_server(data)  # a server started on the read-only dir
        assert requests.get(ro.api(f"/graphs/{gid}"), timeout=10).json()["name"] == "second"
        listed = requests.get(ro.api("/graphs"), timeout=10).json()["graphs"]
        assert [g["id"] for g in listed] == [gid]
        r = requests.put(ro.api(f"/graphs/{gid}"), json=doc("third"), timeout=10)
        assert r.status_code == 503
        error = r.json()["error"]
        assert error.startswith("the data dir is read-only")
        assert "nothing was saved, your last saved revision is r2" in error
        r = requests.post(ro.api("/graphs"), json=doc("new"), timeout=10)
        assert r.status_code == 503 and "read-only" in r.json()["error"]
    finally:
        subprocess.run(["umount", "-l", str(data)], check=False)


def test_a_damaged_database_at_start_is_one_line_with_its_path(tmp_path):
    data = tmp_path / "damaged"
    data.mkdir()
    (data / "wiregrad.sqlite3").write_bytes(b"this is not a database " * 100)
    env = dict(os.environ, WIREGRAD_DATA=str(data))
    done = subprocess.run(
        [sys.executable, "-m", "backend.cli", "serve", "--port", "0", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(data / "wiregrad.sqlite3") in lines[0] and "damaged" in lines[0]
    assert "Traceback" not in done.stderr


def test_the_file_size_limit_is_a_clear_507_not_a_crash(tmp_path):
    """Under `ulimit -f` (RLIMIT_FSIZE) a write past the limit fails with EFBIG (Python ignores
    SIGXFSZ, which would end the process), which SQLite reports only as "disk I/O error"."""
    import resource

    from conftest import HOST, free_port, wait_until

    limit = 400_000

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend.cli", "serve", "--host", HOST, "--port", str(port)]
        + ["--data-dir", str(tmp_path / "data")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=limited,
    )
    api = f"http://{HOST}:{port}/api"
    try:
        wait_until(lambda: requests.get(f"{api}/health", timeout=2).ok, "wiregrad serve")
        gid = requests.post(f"{api}/graphs", json=doc("kept"), timeout=10).json()["id"]
        # about 60 kB of JSON a revision
        big = graph([tensor("x", [0.123456789] * 5000)], name="big")
        saved = 1
        while True:
            r = requests.put(f"{api}/graphs/{gid}", json=big, timeout=10)
            if not r.ok:
                break
            saved = r.json()["revision"]
            assert saved < 20, "the limit was never met"
        assert r.status_code == 507, r.text
        body = r.json()
        assert body["code"] == "store_file-size-limit"
        assert body["error"].startswith(
            f"the server may not write files larger than {limit:,} bytes (its file size "
            f"limit, ulimit -f) and the database in {tmp_path / 'data'} needs to grow; "
            f"nothing was saved, your last saved revision is r{saved}."
        ), body
        # the server is alive, reads go on, and the history is as it was
        assert requests.get(f"{api}/graphs/{gid}", timeout=10).json()["name"] == "big"
        revisions = requests.get(f"{api}/graphs/{gid}/revisions", timeout=10).json()
        assert len(revisions["revisions"]) == saved
        # a small save may still fit (SQLite reuses its pages), and says so if it does not
        small = requests.put(f"{api}/graphs/{gid}", json=doc("small"), timeout=10)
        assert small.ok or small.json()["code"] == "store_file-size-limit", small.text
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)
    assert "Traceback" not in proc.stderr.read().decode()


def test_a_data_dir_gone_while_serving_is_a_clear_503(tmp_path):
    """Moved away and replaced by a file while the server runs: reads and writes say so (503
    `store_missing`), and all is back once the directory is."""
    data = tmp_path / "data"
    srv = start_server(data)
    gid = requests.post(srv.api("/graphs"), json=doc("kept"), timeout=10).json()["id"]
    data.rename(tmp_path / "aside")
    data.write_text("not a directory")
    try:
        for r in (
            requests.put(srv.api(f"/graphs/{gid}"), json=doc("lost"), timeout=10),
            requests.post(srv.api("/graphs"), json=doc("new"), timeout=10),
            requests.get(srv.api(f"/graphs/{gid}"), timeout=10),
            requests.get(srv.api("/graphs"), timeout=10),
        ):
            assert r.status_code == 503, (r.request.method, r.url, r.text)
            assert r.json()["code"] == "store_missing"
            assert r.json()["error"].startswith(
                f"the data dir {data} is gone or is not a directory any more"
            )
    finally:
        data.unlink()
        (tmp_path / "aside").rename(data)
    assert requests.get(srv.api(f"/graphs/{gid}"), timeout=10).json()["name"] == "kept"
    assert requests.put(srv.api(f"/graphs/{gid}"), json=doc("again"), timeout=10).ok
