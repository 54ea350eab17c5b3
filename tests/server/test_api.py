"""The JSON API under /api over real HTTP: every endpoint, its errors, body limits, origins."""

import json

import pytest
import requests
from _server_helpers import edge, graph, node, tensor, times_k

from backend.graph import parse, run
from backend.graph.document.templates import list_templates, load_template

JSON = {"Content-Type": "application/json"}


def square_of_a_sum():
    return load_template("square-of-a-sum").model_dump(mode="json")


def normalised(doc):
    """What the store keeps for a document: the parsed model dumped as JSON."""
    return parse(doc).model_dump(mode="json")


def assert_json_error(r, status):
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["Content-Type"].startswith("application/json"), r.text[:300]
    body = r.json()
    assert isinstance(body["error"], str) and body["error"]
    return body


# -- health, ops, templates --------------------------------------------------------------------
def test_health(server):
    r = requests.get(server.api("/health"))
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "device": "cpu"}


def test_ops_lists_the_registry(server):
    ops = requests.get(server.api("/ops")).json()["ops"]
    names = [op["name"] for op in ops]
    assert len(names) == len(set(names))
    for name in ("tensor", "add", "mul", "pow", "matmul", "linear", "cross_entropy", "if"):
        assert name in names
    add = ops[names.index("add")]
    assert [p["name"] for p in add["inputs"]] == ["input", "other"]
    assert add["outputs"] == ["out"]
    tensor_op = ops[names.index("tensor")]
    assert {"value", "requires_grad", "name"} <= {p["name"] for p in tensor_op["params"]}


def test_templates_list_and_each_loads(server):
    listed = requests.get(server.api("/templates")).json()["templates"]
    assert listed == list_templates()
    ids = [t["id"] for t in listed]
    assert "square-of-a-sum" in ids and "mlp-mse" in ids
    for template_id in ids:
        r = requests.get(server.api(f"/templates/{template_id}"))
        assert r.status_code == 200
        assert r.json() == load_template(template_id).model_dump(mode="json")


@pytest.mark.parametrize(
    "bad", ["nope", "Square-Of-A-Sum", "..%2F..%2Fetc%2Fpasswd", "a" * 65, "square-of-a-sum.json"]
)
def test_unknown_or_bad_template_ids_are_not_found(server, bad):
    r = requests.get(server.api(f"/templates/{bad}"))
    assert r.status_code == 404
    assert "root:" not in r.text


def test_unknown_template_error_is_json(server):
    body = assert_json_error(requests.get(server.api("/templates/nope")), 404)
    assert "nope" in body["error"]


# -- validate ------------------------------------------------------------------------------------
def test_validate_good_graph(server):
    r = requests.post(server.api("/validate"), json=square_of_a_sum())
    assert r.status_code == 200
    assert r.json() == {"ok": True, "node_errors": []}


def test_validate_reports_every_problem_at_its_node(server):
    doc = graph(
        [tensor("x", 1.0), node("bad", "no_such_op"), node("a", "add"), node("b", "neg")],
        [edge("x", "a"), edge("a", "b"), edge("b", "a", "other")],  # a cycle a -> b -> a
    )
    r = requests.post(server.api("/validate"), json=doc)
    assert r.status_code == 200
    body = r.json()
    assert body["ok"] is False
    errors = body["node_errors"]
    assert any(e.get("node") == "bad" and "no_such_op" in e["message"] for e in errors)
    assert any("cycle" in e["message"] for e in errors)
    assert all(isinstance(e["message"], str) for e in errors)


@pytest.mark.parametrize(
    "body",
    [
        {"nodes": "x"},
        {"nodes": [{"id": "../x", "op": "tensor"}]},
        {"nodes": [], "surprise": 1},
        {"format": "other"},
        [1, 2],
        "a string",
        7,
    ],
)
def test_validate_structural_errors_are_400_with_node_errors(server, body):
    r = requests.post(server.api("/validate"), json=body)
    out = assert_json_error(r, 400)
    assert out["node_errors"] == []
    assert "invalid graph document" in out["error"]


@pytest.mark.parametrize("data", ["{bad", "", "nul", '{"nodes": [}'])
def test_invalid_json_is_a_json_400(server, data):
    for path in ("/validate", "/graphs", "/export", "/import"):
        assert_json_error(requests.post(server.api(path), data=data, headers=JSON), 400)


def test_body_without_json_content_type_is_a_400(server):
    r = requests.post(server.api("/validate"), data=json.dumps(square_of_a_sum()))
    body = assert_json_error(r, 400)
    assert "application/json" in body["error"]


# -- graphs: CRUD and revisions ------------------------------------------------------------------
def test_graph_lifecycle_with_revisions(server):
    api = server.api
    first = square_of_a_sum()
    r = requests.post(api("/graphs"), json=first)
    assert r.status_code == 201
    info = r.json()
    gid = info["id"]
    assert info["revision"] == 1 and info["name"] == "Square of a sum"
    assert requests.get(api(f"/graphs/{gid}")).json() == normalised(first)
    assert gid in [g["id"] for g in requests.get(api("/graphs")).json()["graphs"]]

    second = dict(first, name="renamed")
    second["nodes"] = [dict(n) for n in first["nodes"]]
    second["nodes"][0] = dict(second["nodes"][0], params={"value": 4.0, "requires_grad": True})
    r = requests.put(api(f"/graphs/{gid}"), json=second)
    assert r.status_code == 200
    assert r.json()["revision"] == 2 and r.json()["name"] == "renamed"
    assert requests.get(api(f"/graphs/{gid}")).json() == normalised(second)
    assert requests.get(api(f"/graphs/{gid}?revision=1")).json() == normalised(first)
    assert requests.get(api(f"/graphs/{gid}?revision=2")).json() == normalised(second)

    revs = requests.get(api(f"/graphs/{gid}/revisions")).json()["revisions"]
    assert [(r["revision"], r["name"]) for r in revs] == [(1, "Square of a sum"), (2, "renamed")]

    r = requests.post(api(f"/graphs/{gid}/revisions/1/restore"))
    assert r.status_code == 200 and r.json()["revision"] == 3
    assert requests.get(api(f"/graphs/{gid}")).json() == normalised(first)
    revs = requests.get(api(f"/graphs/{gid}/revisions")).json()["revisions"]
    assert [r["revision"] for r in revs] == [1, 2, 3]  # history only grows
    assert requests.get(api(f"/graphs/{gid}?revision=2")).json() == normalised(second)

    listed = {g["id"]: g for g in requests.get(api("/graphs")).json()["graphs"]}
    assert listed[gid]["revision"] == 3

    r = requests.delete(api(f"/graphs/{gid}"))
    assert r.status_code == 200 and r.json() == {"deleted": gid}
    assert gid not in [g["id"] for g in requests.get(api("/graphs")).json()["graphs"]]
    for method, path in [
        ("get", f"/graphs/{gid}"),
        ("get", f"/graphs/{gid}?revision=1"),
        ("get", f"/graphs/{gid}/revisions"),
        ("delete", f"/graphs/{gid}"),
        ("post", f"/graphs/{gid}/revisions/1/restore"),
    ]:
        assert_json_error(requests.request(method, api(path)), 404)
    assert_json_error(requests.put(api(f"/graphs/{gid}"), json=first), 404)


def test_graph_list_is_newest_first(server):
    ids = [requests.post(server.api("/graphs"), json=times_k(k)).json()["id"] for k in (1, 2, 3)]
    requests.put(server.api(f"/graphs/{ids[0]}"), json=times_k(9))
    listed = [g["id"] for g in requests.get(server.api("/graphs")).json()["graphs"]]
    order = [listed.index(i) for i in (ids[0], ids[2], ids[1])]
    assert order == sorted(order)


def test_a_graph_with_problems_can_still_be_saved_as_a_draft(server):
    draft = graph([node("a", "no_such_op")])
    r = requests.post(server.api("/graphs"), json=draft)
    assert r.status_code == 201
    assert requests.get(server.api(f"/graphs/{r.json()['id']}")).json() == normalised(draft)


def test_names_with_quotes_and_sql_are_stored_verbatim(server):
    name = 'x\'); DROP TABLE graphs; -- "quoted" \u00e9\u4e2d'
    r = requests.post(server.api("/graphs"), json=dict(square_of_a_sum(), name=name))
    gid = r.json()["id"]
    assert r.json()["name"] == name
    assert requests.get(server.api(f"/graphs/{gid}")).json()["name"] == name
    assert requests.get(server.api("/graphs")).status_code == 200


@pytest.mark.parametrize("bad", ["a.b", "a" * 65, "a%20b", "x'or'1'='1", "%C3%A9"])
def test_bad_graph_ids_are_400(server, bad):
    for method in ("get", "delete"):
        body = assert_json_error(requests.request(method, server.api(f"/graphs/{bad}")), 400)
        assert "invalid graph id" in body["error"]
    assert_json_error(requests.put(server.api(f"/graphs/{bad}"), json=times_k(1)), 400)
    assert_json_error(requests.get(server.api(f"/graphs/{bad}/revisions")), 400)
    assert_json_error(requests.post(server.api(f"/graphs/{bad}/revisions/1/restore")), 400)


@pytest.mark.parametrize("path", ["/graphs/..%2Fx", "/graphs/..%2F..%2Fetc%2Fpasswd", "/graphs/."])
def test_path_traversal_ids_go_nowhere(server, path):
    r = requests.get(server.api(path))
    assert r.status_code in (400, 404)
    assert "root:" not in r.text


def test_missing_graph_and_revision_are_404(server):
    assert_json_error(requests.get(server.api("/graphs/doesnotexist")), 404)
    gid = requests.post(server.api("/graphs"), json=times_k(2)).json()["id"]
    assert_json_error(requests.get(server.api(f"/graphs/{gid}?revision=2")), 404)
    assert_json_error(requests.get(server.api(f"/graphs/{gid}?revision=0")), 404)
    assert_json_error(requests.get(server.api(f"/graphs/{gid}?revision=-1")), 404)
    assert_json_error(requests.post(server.api(f"/graphs/{gid}/revisions/5/restore")), 404)


def test_a_bad_request_leaves_the_saved_graph_intact(server):
    gid = requests.post(server.api("/graphs"), json=times_k(2)).json()["id"]
    for bad in ({"nodes": "x"}, [1], {"nodes": [{"id": "a b", "op": "add"}]}):
        assert_json_error(requests.put(server.api(f"/graphs/{gid}"), json=bad), 400)
    assert_json_error(requests.put(server.api(f"/graphs/{gid}"), data="{", headers=JSON), 400)
    assert requests.get(server.api(f"/graphs/{gid}")).json() == normalised(times_k(2))
    revs = requests.get(server.api(f"/graphs/{gid}/revisions")).json()["revisions"]
    assert [r["revision"] for r in revs] == [1]


def test_huge_revision_numbers_are_a_json_404(server):
    gid = requests.post(server.api("/graphs"), json=times_k(2)).json()["id"]
    huge = "9" * 20
    assert_json_error(requests.get(server.api(f"/graphs/{gid}?revision={huge}")), 404)
    assert_json_error(requests.post(server.api(f"/graphs/{gid}/revisions/{huge}/restore")), 404)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("get", "/nope", 404), ("post", "/ops", 405), ("delete", "/graphs", 405)],
)
def test_api_routing_errors_are_json(server, method, path, status):
    assert_json_error(requests.request(method, server.api(path)), status)


def test_deeply_nested_body_is_a_json_400(server):
    data = '{"nodes": [], "description": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert_json_error(requests.post(server.api("/graphs"), data=data, headers=JSON), 400)
    assert server.healthy()


@pytest.mark.parametrize(
    "params, position, said",
    [
        ('{"value": NaN}', "{}", "NaN is not a JSON number"),
        ('{"value": [1.0, Infinity]}', "{}", "Infinity is not a JSON number"),
        ('{"value": [1.0, 1e999]}', "{}", "1e999 is too large for a number"),
        ('{"value": -1e999}', "{}", "-1e999 is too large for a number"),
        ("{}", '{"x": 1e999, "y": 0}', "1e999 is too large for a number"),
    ],
)
def test_numbers_json_cannot_hold_are_refused_not_stored_as_null(server, params, position, said):
    # 1e999 parses to inf, which JSON cannot write back: it was stored as null, and in a
    # position it was a 500
    data = (
        '{"name": "overflow", "nodes": [{"id": "x", "op": "tensor", '
        f'"params": {params}, "position": {position}}}]}}'
    )
    before = requests.get(server.api("/graphs")).json()
    for path in ("/graphs", "/validate"):
        r = requests.post(server.api(path), data=data, headers=JSON)
        assert_json_error(r, 400)
        assert said in r.json()["error"], r.json()
    assert requests.get(server.api("/graphs")).json() == before


def test_deeply_nested_body_does_not_stop_the_server(server):
    data = '{"nodes": [], "description": ' + "[" * 100_000 + "]" * 100_000 + "}"
    r = requests.post(server.api("/graphs"), data=data, headers=JSON)
    assert r.status_code in (400, 413, 500)
    assert server.healthy()


def test_huge_numbers_are_node_errors(server):
    for value in (10**30, -(10**30), 1e308):
        doc = graph([tensor("x", value), node("y", "exp")], [edge("x", "y")])
        r = requests.post(server.api("/validate"), json=doc)
        assert r.status_code == 200
        body = r.json()
        assert body["ok"] or all("node" in e for e in body["node_errors"])
    doc = graph([tensor("x", shape=[10**6, 10**6], init="zeros")])
    body = requests.post(server.api("/validate"), json=doc).json()
    assert body["ok"] is False and body["node_errors"][0]["node"] == "x"
    assert "limit" in body["node_errors"][0]["message"]


# -- export and import ---------------------------------------------------------------------------
@pytest.mark.parametrize("flavor", ["engine", "torch"])
def test_export_then_import_round_trips(server, flavor):
    r = requests.post(server.api("/export"), json={"graph": square_of_a_sum(), "flavor": flavor})
    assert r.status_code == 200
    body = r.json()
    assert body["flavor"] == flavor
    code = body["code"]
    assert ("import torch" in code) == (flavor == "torch")
    compile(code, "<export>", "exec")  # syntactically valid Python; not run here

    r = requests.post(server.api("/import"), json={"code": code})
    assert r.status_code == 200
    doc = parse(r.json())
    assert {n.id: n.op for n in doc.nodes} == {"x": "tensor", "y": "tensor", "a": "add", "z": "pow"}
    res = run(doc, "backward")
    assert res.status == "ok"
    assert res.values["z"].item() == 25.0
    assert res.leaf_grads["x"].item() == 10.0 and res.leaf_grads["y"].item() == 10.0


def test_export_of_modules_and_training_round_trips_through_the_api(server):
    """A document with a module and training settings: the code has the class, the object and
    the training loop; /import reads it back to the same modules, instances and settings."""
    block = {
        "name": "Block",
        "nodes": [
            {"id": "x", "op": "module_input"},
            {"id": "fc", "op": "linear", "params": {"out_features": 2, "seed": 1}},
            {"id": "h", "op": "tanh"},
            {"id": "y", "op": "module_output"},
        ],
        "edges": [edge("x", "fc"), edge("fc", "h"), edge("h", "y")],
        "inputs": ["x"],
        "outputs": ["y"],
    }
    nodes = [
        {"id": "data", "op": "dataset", "params": {"kind": "moons", "n": 40, "seed": 3}},
        {"id": "lab", "op": "labels"},
        {"id": "b1", "op": "module", "params": {"module": "Block"}},
        {"id": "b2", "op": "module", "params": {"module": "Block", "seed": 5}},
        {"id": "head", "op": "linear", "params": {"out_features": 1, "seed": 9}},
        {"id": "loss", "op": "mse_loss"},
    ]
    edges = [
        edge("data", "b1", "x"),
        {**edge("b1", "b2", "x"), "sourcePort": "y"},
        {**edge("b2", "head"), "sourcePort": "y"},
        edge("head", "loss"),
        edge("data", "lab", "dataset"),
        edge("lab", "loss", "target"),
    ]
    training = {"loss": "loss", "optimizer": "adam", "lr": 0.02, "steps": 30, "batch_size": 16}
    doc = parse(
        {"version": 2, "modules": [block], "nodes": nodes, "edges": edges, "training": training}
    )
    body = {"graph": doc.model_dump(mode="json"), "flavor": "torch"}
    code = requests.post(server.api("/export"), json=body).json()["code"]
    assert "class Block(nn.Module):" in code and "b2 = Block()" in code
    assert "opt = torch.optim.Adam(params, lr=0.02)" in code
    back = parse(requests.post(server.api("/import"), json={"code": code}).json())
    assert back.training == doc.training
    assert [m.name for m in back.modules] == ["Block"]
    assert {n.id: n.params.get("seed", 0) for n in back.nodes if n.op == "module"} == {
        "b1": 0,
        "b2": 5,
    }


def test_export_defaults_to_engine(server):
    r = requests.post(server.api("/export"), json={"graph": square_of_a_sum()})
    assert r.status_code == 200 and r.json()["flavor"] == "engine"


def test_export_says_which_weights_it_starts_from(server):
    doc = square_of_a_sum()
    for weights, said in (("initial", "the initial weights"), ("trained", "the trained weights")):
        body = {"graph": doc, "flavor": "torch", "weights": weights}
        code = requests.post(server.api("/export"), json=body).json()["code"]
        head = code.split('\n"""\n', 1)[0].replace("\n", " ")
        assert f"It starts from {said}" in head, head
    body = {"graph": doc, "flavor": "torch", "weights": "best"}
    err = assert_json_error(requests.post(server.api("/export"), json=body), 400)
    assert "weights must be" in err["error"]


def test_export_prints_what_a_person_prints_or_with_trace_every_value(server):
    doc = square_of_a_sum()
    plain = requests.post(server.api("/export"), json={"graph": doc, "flavor": "torch"})
    assert 'print("z", z.item())' in plain.json()["code"] and "show(" not in plain.json()["code"]
    body = {"graph": doc, "flavor": "torch", "trace": True}
    traced = requests.post(server.api("/export"), json=body).json()["code"]
    assert 'show("grad", "x", x.grad)' in traced and 'print("z", z.item())' not in traced
    body["trace"] = "yes"
    err = assert_json_error(requests.post(server.api("/export"), json=body), 400)
    assert err["error"] == "trace must be true or false"


def test_export_errors(server):
    doc = square_of_a_sum()
    assert_json_error(
        requests.post(server.api("/export"), json={"graph": doc, "flavor": "js"}), 400
    )
    assert_json_error(requests.post(server.api("/export"), json=[doc]), 400)
    assert_json_error(requests.post(server.api("/export"), json={"flavor": "torch"}), 400)
    bad = graph([node("a", "no_such_op")])
    body = assert_json_error(requests.post(server.api("/export"), json={"graph": bad}), 400)
    assert body["node_errors"] == [{"message": "unknown op 'no_such_op'", "node": "a"}]


def test_import_never_runs_the_script(server, tmp_path):
    marker = tmp_path / "ran"
    code = f"import os\nopen({str(marker)!r}, 'w').write('x')\nos.system('touch {marker}')\n"
    body = assert_json_error(requests.post(server.api("/import"), json={"code": code}), 400)
    assert body["problems"] and all("line" in p and "message" in p for p in body["problems"])
    assert not marker.exists()


@pytest.mark.parametrize("body", [{"code": 5}, {"source": "x = 1"}, ["x = 1"], "x = 1"])
def test_import_needs_code(server, body):
    assert_json_error(requests.post(server.api("/import"), json=body), 400)


def test_import_syntax_error_names_the_line(server):
    r = requests.post(server.api("/import"), json={"code": "x = (\n"})
    body = assert_json_error(r, 400)
    assert body["problems"][0]["line"] >= 1


# -- limits and origins --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_server(make_server):
    return make_server(max_message_bytes=4096, allowed_origins=["http://good.example"])


def test_oversized_bodies_are_413(small_server):
    big = graph([tensor("x", [0.5] * 2000)])
    for path in ("/validate", "/graphs", "/export", "/import"):
        body = assert_json_error(requests.post(small_server.api(path), json=big), 413)
        assert "4,096" in body["error"]
    small = graph([tensor("x", [0.5] * 10)])
    assert requests.post(small_server.api("/validate"), json=small).json()["ok"] is True
    assert small_server.healthy()


def test_oversized_chunked_body_is_refused(small_server):
    def chunks():
        yield b'{"nodes": [], "description": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    r = requests.post(small_server.api("/graphs"), data=chunks(), headers=JSON)
    assert r.status_code in (400, 413)
    assert small_server.healthy()
    assert r.json()["error"]


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1"])
def test_foreign_origins_are_403(small_server, origin):
    headers = {"Origin": origin}
    for method, path in [("get", "/ops"), ("get", "/graphs"), ("post", "/graphs")]:
        r = requests.request(method, small_server.api(path), headers=headers, json=times_k(1))
        body = assert_json_error(r, 403)
        assert origin in body["error"]
    listed = requests.get(small_server.api("/graphs")).json()["graphs"]
    assert listed == []  # the refused POSTs saved nothing


def test_own_and_allowed_origins_pass(small_server):
    port = small_server.port
    for origin in (
        f"http://127.0.0.1:{port}",
        f"http://localhost:{port}",
        "http://good.example",
    ):
        r = requests.get(small_server.api("/ops"), headers={"Origin": origin})
        assert r.status_code == 200, origin
    assert requests.get(small_server.api("/ops")).status_code == 200  # no Origin: not a browser


def test_editor_placeholder_is_served(server):
    r = requests.get(server.url + "/")
    assert r.status_code == 200 and "Wiregrad" in r.text


def test_validate_gives_inferred_shapes_when_asked(server):
    doc = graph(
        [
            tensor("x", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
            node("s", "sum", dim=1),
            node("n", "neg"),
        ],
        [edge("x", "s"), edge("s", "n")],
    )
    r = requests.post(server.api("/validate?shapes=1"), json=doc)
    assert r.status_code == 200
    assert r.json()["shapes"] == {"x": [2, 3], "s": [2], "n": [2]}
    # a node with a problem, and what depends on it, have no shape
    doc["nodes"][1]["params"]["dim"] = 5
    body = requests.post(server.api("/validate?shapes=1"), json=doc).json()
    assert body["ok"] is False and body["shapes"] == {"x": [2, 3]}
