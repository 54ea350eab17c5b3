"""`wiregrad serve` as people start it: the lecture hall's command from docs/deployment.md run
as written (ports, data dir and Redis URL set to the test's own), the proxy set-up refused
without a token, a token honoured on a loopback bind, a data dir that is a file named in one
line."""

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from _server_helpers import times_k

from conftest import HOST, free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
PROXY_NAME = "wiregrad.school.example"
TOKEN = "t" * 32


def _documented_command():
    """The `wiregrad serve` line of the lecture-hall loop in docs/deployment.md, as argv."""
    text = (ROOT / "docs" / "deployment.md").read_text()
    loop = re.search(r"for port in [^\n]*; do\n(.*?)\ndone", text, re.S)
    assert loop, "docs/deployment.md has no lecture-hall loop"
    line = loop.group(1).replace("\\\n", " ").strip().rstrip("&").strip()
    argv = shlex.split(line)
    assert argv[:2] == ["wiregrad", "serve"], argv
    return argv[2:]


def _serve(args, env_extra=None, wait=True):
    env = {k: v for k, v in os.environ.items() if k != "WIREGRAD_TOKEN"}
    env.update(env_extra or {}, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "backend.cli", "serve", *args]
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _with(args, option, value):
    i = args.index(option)
    return args[: i + 1] + [value] + args[i + 2 :]


def test_the_documented_lecture_hall_command_keeps_access_control(redis_url, tmp_path):
    args = _documented_command()
    port = free_port()
    args = [a.replace("$port", str(port)) for a in args]
    args = _with(_with(args, "--data-dir", str(tmp_path)), "--message-queue", redis_url)
    proc = _serve(args, {"WIREGRAD_TOKEN": TOKEN})
    base = f"http://{HOST}:{port}"
    via_proxy = {"Host": PROXY_NAME}
    try:
        wait_until(lambda: requests.get(f"{base}/api/health", timeout=2).ok, "the server")
        teacher = {**via_proxy, "Authorization": f"Bearer {TOKEN}"}
        key = {**via_proxy, "X-Wiregrad-Owner": "k" * 30}
        made = requests.post(f"{base}/api/graphs", json=times_k(2.0), headers=key, timeout=10)
        assert made.status_code == 201
        gid = made.json()["id"]
        # a student through the proxy sees and deletes nothing of another's
        listed = requests.get(f"{base}/api/graphs", headers=via_proxy, timeout=10).json()
        assert listed == {"graphs": []}
        gone = requests.delete(f"{base}/api/graphs/{gid}", headers=via_proxy, timeout=10)
        assert gone.status_code == 404
        # the teacher, with the token, sees it
        listed = requests.get(f"{base}/api/graphs", headers=teacher, timeout=10).json()
        assert [g["id"] for g in listed["graphs"]] == [gid]
    finally:
        _stop(proc)


def test_a_proxy_set_up_without_a_token_refuses_to_start(tmp_path):
    port = free_port()
    args = ["--host", HOST, "--port", str(port), "--data-dir", str(tmp_path)]
    proc = _serve([*args, "--allow-host", PROXY_NAME])
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            _stop(proc)
    assert proc.returncode == 1
    assert "--allow-host" in err and "--token" in err and "WIREGRAD_TOKEN" in err, err


def test_a_token_is_honoured_on_a_loopback_bind(tmp_path):
    port = free_port()
    proc = _serve(
        ["--host", HOST, "--port", str(port), "--data-dir", str(tmp_path)],
        {"WIREGRAD_TOKEN": TOKEN},
    )
    base = f"http://{HOST}:{port}"
    try:
        wait_until(lambda: requests.get(f"{base}/api/health", timeout=2).ok, "the server")
        key = {"X-Wiregrad-Owner": "k" * 30}
        assert requests.post(f"{base}/api/graphs", json=times_k(1.0), headers=key).ok
        assert requests.get(f"{base}/api/graphs", timeout=10).json() == {"graphs": []}
        teacher = {"Authorization": f"Bearer {TOKEN}"}
        assert len(requests.get(f"{base}/api/graphs", headers=teacher).json()["graphs"]) == 1
    finally:
        _stop(proc)


@pytest.mark.parametrize("case", ["file", "short-token"])
def test_start_up_mistakes_are_one_clear_line(tmp_path, case):
    data = tmp_path / "data"
    extra = {}
    if case == "file":
        data.write_text("not a directory")
    else:
        extra = {"WIREGRAD_TOKEN": "short"}
    proc = _serve(["--host", HOST, "--port", str(free_port()), "--data-dir", str(data)], extra)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    if case == "file":
        assert lines[0] == (
            f"wiregrad: the data dir {data} is a file, not a directory: move it aside or give "
            "--data-dir another path"
        )
    else:
        assert "--token must be at least 22 characters" in lines[0]
