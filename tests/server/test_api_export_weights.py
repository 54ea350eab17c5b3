"""POST /api/export and /api/import with a trained graph's weights file (export/sidecar.py):
the export answers the script and, base64, the .safetensors file it loads from beside itself;
the import reads the script back with that file, and names the line that loads it without it.
A weights field that is no base64 file is refused before any script is read."""

import base64

import pytest
import requests

from backend.graph import parse
from backend.graph.document.templates import load_template
from backend.graph.export import export_python, to_python
from backend.graph.importing.importer import from_python
from backend.graph.running.trainer import Trainer


@pytest.fixture(scope="module")
def trained():
    doc = load_template("lenet-digits")
    doc = doc.model_copy(update={"training": doc.training.model_copy(update={"steps": 2})})
    trainer = Trainer(doc)
    assert trainer.run() == "ok"
    return trainer.written_back()


def test_export_answers_the_script_and_its_weights(server, trained):
    graph = trained.model_dump(mode="json")
    r = requests.post(server.api("/export"), json={"graph": graph, "flavor": "torch"})
    assert r.status_code == 200
    body = r.json()
    want = export_python(trained, "torch")
    assert body["code"] == want.text
    assert base64.b64decode(body["weights"]) == want.weights
    assert 'state_dict["conv1.weight"]' in body["code"]

    r = requests.post(
        server.api("/import"), json={"code": body["code"], "weights": body["weights"]}
    )
    assert r.status_code == 200, r.text
    back = parse(r.json())
    same = from_python(want.text, weights=want.weights)
    assert back.model_dump(mode="json") == same.model_dump(mode="json")

    # inline: one text, every value in it (what a caller that keeps one text asks for)
    r = requests.post(
        server.api("/export"), json={"graph": graph, "flavor": "torch", "inline": True}
    )
    assert r.json()["code"] == to_python(trained, "torch") and "weights" not in r.json()


def test_a_graph_without_many_stored_values_answers_the_script_alone(server):
    graph = load_template("lenet-digits").model_dump(mode="json")
    body = requests.post(server.api("/export"), json={"graph": graph, "flavor": "torch"}).json()
    assert "weights" not in body and "safetensors" not in body["code"]


def test_import_without_the_weights_names_the_line_that_loads_them(server, trained):
    out = export_python(trained, "torch")
    r = requests.post(server.api("/import"), json={"code": out.text})
    assert r.status_code == 400
    problems = r.json()["problems"]
    line = next(i for i, s in enumerate(out.text.splitlines(), 1) if s.startswith("state_dict ="))
    assert problems[0]["line"] == line and ".safetensors" in problems[0]["message"]


@pytest.mark.parametrize(
    "weights, said",
    [
        (12, "base64"),
        ("not base64!", "base64"),
        (base64.b64encode(b"\x01\x00\x00\x00\x00\x00\x00\x00{").decode(), "weights file"),
    ],
)
def test_bad_weights_are_refused(server, trained, weights, said):
    out = export_python(trained, "torch")
    r = requests.post(server.api("/import"), json={"code": out.text, "weights": weights})
    assert r.status_code == 400
    assert said in r.text


def test_export_refuses_a_non_boolean_inline(server, trained):
    graph = load_template("mlp-xor").model_dump(mode="json")
    r = requests.post(server.api("/export"), json={"graph": graph, "inline": "yes"})
    assert r.status_code == 400 and "inline" in r.json()["error"]
