"""Hypothesis throws malformed graphs and messages at a real server, over Socket.IO and the
API: each gets an error reply or a valid run, and the server keeps serving."""

import copy
import json

import pytest
import requests
from _server_helpers import connect
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.graph import Limits
from backend.graph.document.templates import list_templates, load_template

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TEMPLATES = {t["id"]: load_template(t["id"]).model_dump(mode="json") for t in list_templates()}
OPS = ["tensor", "add", "mul", "matmul", "sum", "linear", "if", "cross_entropy", "reshape"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)
ids = st.sampled_from(["x", "a", "../x", "", "a b", "x" * 65, "é", "null"]) | st.text(max_size=10)


@st.composite
def mutated_graphs(draw):
    """A template with a few things broken: ops, params, ids, edges, fields, types."""
    doc = copy.deepcopy(TEMPLATES[draw(st.sampled_from(sorted(TEMPLATES)))])
    for _ in range(draw(st.integers(1, 4))):
        what = draw(st.sampled_from(["op", "param", "id", "edge", "field", "drop", "type", "big"]))
        nodes = doc.get("nodes") if isinstance(doc.get("nodes"), list) else []
        nodes = [n for n in nodes if isinstance(n, dict)]
        edges = doc.get("edges") if isinstance(doc.get("edges"), list) else []
        if what == "op" and nodes:
            n = draw(st.sampled_from(nodes))
            n["op"] = draw(st.sampled_from(OPS) | st.text(max_size=12))
        elif what == "param" and nodes:
            n = draw(st.sampled_from(nodes))
            if not isinstance(n.get("params"), dict):
                n["params"] = {}
            key = draw(st.sampled_from([*n["params"], "value", "shape", "seed", "bogus"]))
            n["params"][key] = draw(json_values)
        elif what == "id" and (items := nodes + [e for e in edges if isinstance(e, dict)]):
            item = draw(st.sampled_from(items))
            key = draw(st.sampled_from(["id", "source", "target", "targetPort", "sourcePort"]))
            item[key] = draw(ids)
        elif what == "edge" and nodes:
            a, b = draw(st.sampled_from(nodes)), draw(st.sampled_from(nodes))
            port = draw(st.sampled_from(["input", "other", "then", "weight", "nope"]))
            edges.append(
                {"id": draw(ids), "source": a.get("id"), "target": b.get("id"), "targetPort": port}
            )
        elif what == "field":
            doc[draw(st.sampled_from(["target", "version", "format", "extra", "name"]))] = draw(
                json_values
            )
        elif what == "drop" and doc:
            doc.pop(draw(st.sampled_from(sorted(doc))))
        elif what == "type":
            doc[draw(st.sampled_from(["nodes", "edges"]))] = draw(json_values)
        elif what == "big" and nodes:
            n = draw(st.sampled_from(nodes))
            n["params"] = {
                "shape": draw(st.lists(st.integers(0, 10**6), max_size=5)),
                "init": "ones",
            }
    return doc


@pytest.fixture(scope="module")
def server(make_server):
    """Smaller limits than the defaults, so validation's dry runs stay quick."""
    return make_server(limits=Limits(max_elements=100_000, max_seconds=5.0))


@pytest.fixture(scope="module")
def client(server):
    c = connect(server.url)
    yield c
    c.client.disconnect()


def check_run_reply(client, ack):
    """An ack is an error, or a run id whose run then finishes."""
    assert isinstance(ack, dict), ack
    if "run_id" in ack:
        finished = client.wait_finished(ack["run_id"], timeout=30)
        assert finished["status"] in ("ok", "error", "cancelled")
        if finished["status"] == "error":
            assert finished["error"]["message"]
    else:
        assert isinstance(ack.get("error"), str) and ack["error"], ack
        assert isinstance(ack.get("node_errors", []), list)


@SETTINGS
@given(graph=mutated_graphs(), mode=st.sampled_from(["forward", "backward"]))
def test_mutated_graphs_over_socketio(server, client, graph, mode):
    try:
        json.dumps(graph, allow_nan=False)
    except ValueError:
        return
    ack = client.call("run", {"graph": graph, "mode": mode}, timeout=30)
    check_run_reply(client, ack)


@SETTINGS
@given(
    event=st.sampled_from(["run", "cancel", "tensor"]) | st.text(max_size=12),
    payload=json_values
    | st.fixed_dictionaries(
        {},
        optional={
            "graph": json_values,
            "mode": json_values,
            "target": json_values,
            "options": json_values,
            "run_id": json_values,
            "node": json_values,
            "edge": json_values,
            "kind": json_values,
            "param": json_values,
        },
    ),
)
def test_random_messages_over_socketio(server, client, event, payload):
    # names Socket.IO keeps for itself ("*" is python-socketio's catch-all: a message named
    # "*" reaches the catch-all handler without its event name and gets no reply)
    if event in ("connect", "disconnect", "*"):
        return
    ack = client.call(event, payload, timeout=30)
    check_run_reply(client, ack)


@SETTINGS
@given(body=json_values | mutated_graphs(), path=st.sampled_from(["/validate", "/graphs"]))
def test_random_documents_over_the_api(server, body, path):
    r = requests.post(server.api(path), json=body, timeout=30)
    assert r.status_code in (200, 201, 400), (r.status_code, r.text[:300])
    out = r.json()
    if r.status_code == 400:
        assert out["error"]
    elif path == "/graphs":
        stored = requests.get(server.api(f"/graphs/{out['id']}"), timeout=30)
        assert stored.status_code == 200


@SETTINGS
@given(
    graph_id=ids,
    rev=st.integers(-5, 10**6) | st.text(max_size=6),
    body=json_values,
    method=st.sampled_from(["get", "put", "delete", "post"]),
)
def test_random_requests_on_graph_urls(server, graph_id, rev, body, method):
    from urllib.parse import quote

    gid = quote(graph_id, safe="")
    for path in (
        f"/graphs/{gid}",
        f"/graphs/{gid}?revision={quote(str(rev))}",
        f"/graphs/{gid}/revisions",
        f"/graphs/{gid}/revisions/{rev}/restore",
    ):
        r = requests.request(method, server.api(path), json=body, timeout=30)
        assert r.status_code < 500, (method, path, r.status_code)


def test_the_server_is_still_serving(server, client):
    assert server.healthy()
    doc = TEMPLATES["square-of-a-sum"]
    ack = client.call("run", {"graph": doc, "mode": "backward"})
    finished, records = client.result(ack["run_id"])
    assert finished["status"] == "ok"
    assert any(r["kind"] == "value" and r["summary"]["preview"] == 25.0 for r in records)
