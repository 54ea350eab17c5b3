"""The module library over real HTTP: GET /api/module-library lists the entries with their
arguments; POST /api/module-library/<name> builds a definition that a document can use at
once (it validates, with its shapes), and refuses bad arguments with each one named."""

import requests

from backend.graph.document.module_library import build, describe

JSON = {"Content-Type": "application/json"}


def post(server, name, body):
    return requests.post(server.api(f"/module-library/{name}"), json=body, timeout=30)


def test_the_library_lists_every_entry_with_its_arguments(server):
    r = requests.get(server.api("/module-library"), timeout=30)
    assert r.status_code == 200
    listed = r.json()["modules"]
    assert listed == describe()
    conv = next(e for e in listed if e["name"] == "ConvBlock")
    args = {a["name"]: a for a in conv["args"]}
    assert args["in_channels"]["type"] == "int"
    assert args["pool"]["choices"] == ["max", "avg", "none"]


def test_a_built_conv_block_is_a_definition_a_document_runs(server):
    args = {"in_channels": 2, "out_channels": 4, "kernel_size": 3, "pool": "avg"}
    r = post(server, "ConvBlock", args)
    assert r.status_code == 200, r.text
    module = r.json()["module"]
    assert module == build("ConvBlock", args)
    doc = {
        "format": "wiregrad.graph",
        "version": 2,
        "modules": [module],
        "nodes": [
            {"id": "img", "op": "tensor", "params": {"shape": [3, 2, 8, 8], "init": "randn"}},
            {"id": "b", "op": "module", "params": {"module": "ConvBlock"}},
        ],
        "edges": [
            {"id": "e", "source": "img", "sourcePort": "out", "target": "b", "targetPort": "x"}
        ],
    }
    r = requests.post(server.api("/validate?shapes=1"), json=doc, timeout=30)
    body = r.json()
    assert body["ok"], body
    assert body["shapes"]["b/y"] == [3, 4, 4, 4]  # 8x8, padding 1 keeps it, avg pool halves it


def test_bad_arguments_are_a_400_naming_each(server):
    r = post(server, "TransformerEncoderBlock", {"d_model": 10, "nhead": 4, "dropout": 2})
    assert r.status_code == 400
    body = r.json()
    assert body["field_errors"] == {
        "dropout": "dropout probability has to be between 0 and 1, but got 2.0",
        "nhead": "embed_dim must be divisible by num_heads (d_model 10, nhead 4)",
    }
    r = post(server, "MultiHeadAttention", {"embed_dim": 10, "num_heads": 4})
    assert r.status_code == 400
    assert r.json()["field_errors"]["num_heads"].startswith(
        "embed_dim must be divisible by num_heads"
    )
    assert r.json()["error"].startswith("MultiHeadAttention: embed_dim must be divisible")


def test_an_unknown_entry_is_a_404_and_a_body_that_is_not_an_object_a_400(server):
    r = post(server, "NoSuchBlock", {})
    assert r.status_code == 404 and "ConvBlock" in r.json()["error"]
    r = requests.post(server.api("/module-library/LinearAct"), data="[1", headers=JSON, timeout=30)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = post(server, "LinearAct", [4, 8])
    assert r.status_code == 400 and r.json()["field_errors"]
    r = requests.post(server.api("/module-library/LinearAct"), data="{}", timeout=30)
    assert r.status_code == 400 and "expected a JSON body" in r.json()["error"]
