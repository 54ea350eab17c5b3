"""POST /api/import of a script with lines that cannot be read: a 400 naming each line and what
to write, with the document of the lines that could be read (the rest still imports), which
runs; null where nothing valid is left (a syntax error)."""

import requests

from backend.graph import run
from backend.graph.document.format import parse

SCRIPT = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.frob() * 2
z = x * 3
w = y + z
L = z.sum()
L.backward()
"""


def test_the_lines_that_can_be_read_still_import(server):
    r = requests.post(server.api("/import"), json={"code": SCRIPT})
    assert r.status_code == 400
    body = r.json()
    lines = {p["line"]: p for p in body["problems"]}
    assert sorted(lines) == [3, 5]
    assert "frob" in lines[3]["message"] and lines[3]["code"] == "y = x.frob() * 2"
    assert "'y', whose line could not be read" in lines[5]["message"]
    doc = parse(body["document"])
    assert {n.id: n.op for n in doc.nodes} == {"x": "tensor", "z": "mul", "L": "sum"}
    assert doc.target == "L"
    res = run(doc, "backward")
    assert res.status == "ok" and res.leaf_grads["x"].tolist() == [3.0, 3.0]


def test_a_script_that_does_not_parse_has_no_document(server):
    r = requests.post(server.api("/import"), json={"code": "x = (1,\n"})
    assert r.status_code == 400
    assert r.json()["document"] is None and r.json()["problems"][0]["line"] >= 1
