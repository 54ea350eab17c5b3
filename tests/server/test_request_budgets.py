"""Requests that once froze the server or ate its memory, each against a real server: a script
whose one line makes Python compute a billion-digit number, a 900 KB line the parser chews on
with the GIL held, module documents that nest a few kilobytes into billions of nodes. Each is
answered within its budget while /api/health keeps answering under a second; memory is this
process's peak RSS growth (the server runs in it, on a thread)."""

import threading
import time

import pytest
import requests
from _server_helpers import PeakRSS, node

from backend.graph import parse, validate

MiB = 2**20


class HealthWatch:
    """Polls /api/health from a thread during a block; `slowest` is the longest answer."""

    def __init__(self, server):
        self.server, self.slowest, self.failures = server, 0.0, 0

    def _poll(self):
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                ok = requests.get(self.server.api("/health"), timeout=10).status_code == 200
            except requests.RequestException:
                ok = False
            self.slowest = max(self.slowest, time.perf_counter() - t0)
            self.failures += not ok
            self.stop.wait(0.1)

    def __enter__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(15)


def _timed_post(server, path, body):
    t0 = time.perf_counter()
    r = requests.post(server.api(path), json=body, timeout=60)
    return r, time.perf_counter() - t0


# -- import ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("digits", ["-10**9", "-10**7", "10**9"])
def test_round_to_a_huge_number_of_digits_is_answered_at_once(server, digits):
    code = f"import torch\nn = round(7, {digits})\n"
    with HealthWatch(server) as health:
        r, took = _timed_post(server, "/import", {"code": code})
    assert r.status_code in (200, 400), r.text[:300]
    assert took < 5, took
    assert health.slowest < 1 and not health.failures


def test_a_900_kb_line_is_read_in_a_child_while_health_answers(server):
    """ast.parse of this line takes seconds in C with the GIL held: in the server's own
    process nothing else would be answered meanwhile."""
    code = "import torch\nx = torch.ones(2)\ny = torch.stack([" + ", ".join(["x"] * 300_000)
    code += "])\n"
    with HealthWatch(server) as health, PeakRSS() as rss:
        r, took = _timed_post(server, "/import", {"code": code})
    assert r.status_code == 400
    (problem,) = r.json()["problems"]
    assert "more than 20,000 edges" in problem["message"] and problem["line"] == 3
    assert took < 15, took
    assert health.slowest < 1, health.slowest
    assert rss.grew < 100 * MiB, rss.grew / MiB


def test_an_import_past_its_memory_budget_is_refused_not_the_server_harmed(make_server):
    srv = make_server(max_import_bytes=8 * MiB)
    code = "import torch\nx = torch.ones(2)\ny = torch.stack([" + ", ".join(["x"] * 100_000)
    code += "])\n"
    r, took = _timed_post(srv, "/import", {"code": code})
    assert r.status_code == 400
    (problem,) = r.json()["problems"]
    assert "memory" in problem["message"], problem
    assert srv.healthy()


def test_an_import_still_reads_an_ordinary_script(server):
    code = "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x * x).sum()\n"
    r = requests.post(server.api("/import"), json={"code": code}, timeout=30)
    assert r.status_code == 200, r.text[:300]
    assert {n["op"] for n in r.json()["nodes"]} >= {"tensor", "mul", "sum"}


# -- module documents --------------------------------------------------------------------------
def _nested(depth, per_level, leaf_nodes=True):
    """Definitions M0..M{depth-1}, each holding `per_level` instances of the next; the last
    holds one linear (or nothing: definitions of instances only)."""
    modules = []
    for d in range(depth):
        if d == depth - 1:
            nodes = [node("i", "module_input"), node("o", "module_output")] if leaf_nodes else []
            modules.append(
                {
                    "name": f"M{d}",
                    "nodes": nodes,
                    "edges": [{"id": "e", "source": "i", "target": "o", "targetPort": "input"}]
                    if leaf_nodes
                    else [],
                    "inputs": ["i"] if leaf_nodes else [],
                    "outputs": ["o"] if leaf_nodes else [],
                }
            )
            continue
        nodes = [node(f"b{k}", "module", module=f"M{d + 1}") for k in range(per_level)]
        modules.append({"name": f"M{d}", "nodes": nodes, "edges": [], "inputs": [], "outputs": []})
    top = [node("top", "module", module="M0")]
    return {
        "format": "wiregrad.graph",
        "version": 2,
        "name": "nested",
        "modules": modules,
        "nodes": top,
        "edges": [],
    }


@pytest.mark.parametrize(
    "doc, said",
    [
        (_nested(17, 3), "nested more than 16 deep"),
        (_nested(6, 10, leaf_nodes=False), "unpacks to more than 5,000 nodes"),
        (_nested(12, 3), "unpacks to more than 5,000 nodes"),
    ],
    ids=["17-deep", "instances-only", "wide"],
)
def test_a_module_bomb_is_refused_at_once_by_validate_export_and_run(server, sio_client, doc, said):
    # the refusal itself, in process: it once took minutes and gigabytes
    t0 = time.perf_counter()
    problems = validate(parse(doc))
    assert time.perf_counter() - t0 < 1
    assert [p.message for p in problems if said in p.message] and len(problems) == 1, problems
    # and over the wire, each request path (a loaded test machine's round trips: under 3 s)
    with PeakRSS() as rss:
        for path, body in (("/validate", doc), ("/export", {"graph": doc, "flavor": "torch"})):
            r, took = _timed_post(server, path, body)
            text = r.text
            assert said in text, text[:300]
            assert text.count(said) == 1, "one problem, not one per path"
            assert took < 3, (path, took)
        client = sio_client(server)
        t0 = time.perf_counter()
        ack = client.call("run", {"graph": doc, "mode": "forward"})
        assert time.perf_counter() - t0 < 3
        assert said in str(ack), ack
    assert rss.grew < 50 * MiB, rss.grew / MiB
    assert server.healthy()
