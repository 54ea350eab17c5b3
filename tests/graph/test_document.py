"""The document format: the committed JSON Schema is the models' own, documents round-trip, and
pydantic refuses malformed documents before validation sees them."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from backend.graph import GraphDocument, json_schema, parse
from backend.graph.document.schema import render

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "graph-format.schema.json"

EXAMPLE = {
    "format": "wiregrad.graph",
    "version": 1,
    "name": "square of a sum",
    "description": "(x + y) ** 2",
    "nodes": [
        {
            "id": "x",
            "op": "tensor",
            "params": {"value": 2.0, "requires_grad": True, "name": "x"},
            "position": {"x": 0, "y": 0},
        },
        {
            "id": "y",
            "op": "tensor",
            "params": {"value": [[1.0, 2.0]], "requires_grad": True, "name": "y"},
            "position": {"x": 0, "y": 80},
            "label": "weights",
        },
        {"id": "a", "op": "add", "params": {}, "position": {"x": 200, "y": 40}},
        {"id": "p", "op": "pow", "params": {"scalar": 2.0}, "position": {"x": 400, "y": 40}},
        {"id": "s", "op": "sum", "params": {"dim": None}, "position": {"x": 600, "y": 40}},
    ],
    "edges": [
        {"id": "e1", "source": "x", "sourcePort": "out", "target": "a", "targetPort": "input"},
        {"id": "e2", "source": "y", "sourcePort": "out", "target": "a", "targetPort": "other"},
        {"id": "e3", "source": "a", "sourcePort": "out", "target": "p", "targetPort": "input"},
        {"id": "e4", "source": "p", "sourcePort": "out", "target": "s", "targetPort": "input"},
    ],
    "target": "s",
    "lesson": [{"text": "Run backward.", "select": ["s"], "run": "backward"}],
}


def test_committed_schema_is_the_models_schema():
    committed = SCHEMA.read_text()
    assert json.loads(committed) == json_schema(), (
        "regenerate: python -m backend.graph.document.schema > docs/graph-format.schema.json"
    )
    assert committed == render()  # indent 2 and a trailing newline, as the module writes it


def test_schema_module_prints_it(capsys):
    from backend.graph.document import schema

    schema.main()
    assert capsys.readouterr().out == SCHEMA.read_text()


def test_schema_names_the_format():
    s = json_schema()
    assert s["properties"]["format"]["const"] == "wiregrad.graph"
    assert s["properties"]["version"]["enum"] == [1, 2]  # 2: with modules (modules.py)
    assert {"Node", "Edge", "Position"} <= set(s["$defs"])


def test_round_trip_through_json_unchanged():
    d = parse(EXAMPLE)
    text = d.model_dump_json()
    assert parse(text) == d
    # what a client sent comes back (keys it left out stay out), whatever order it came in
    assert json.loads(d.model_dump_json(exclude_unset=True)) == EXAMPLE
    full = json.loads(text)  # every key, defaults filled in
    assert full["nodes"][0]["label"] is None and full["nodes"][3]["label"] is None
    assert parse(full) == d
    assert parse(json.dumps(EXAMPLE)) == d  # from a string as from a dict


def test_defaults_fill_a_minimal_document():
    d = parse({"nodes": [{"id": "x", "op": "tensor"}]})
    out = d.model_dump()
    assert out["format"] == "wiregrad.graph" and out["version"] == 1
    assert out["name"] == "untitled" and out["edges"] == [] and out["target"] is None
    assert out["nodes"][0] == {
        "id": "x",
        "op": "tensor",
        "params": {},
        "position": {"x": 0.0, "y": 0.0},
        "label": None,
    }
    e = parse(
        {"nodes": [], "edges": [{"id": "e", "source": "a", "target": "b", "targetPort": "input"}]}
    ).edges[0]
    assert e.sourcePort == "out"


def _with(path, value):
    d = json.loads(json.dumps(EXAMPLE))
    *head, last = path
    obj = d
    for k in head:
        obj = obj[k]
    if value is _DELETE:
        del obj[last]
    else:
        obj[last] = value
    return d


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("format",), "wiregrad.graf"),
        (("version",), 3),
        (("version",), "1"),
        (("nodes", 0, "id"), "has space"),
        (("nodes", 0, "id"), ""),
        (("nodes", 0, "id"), "x" * 65),
        (("nodes", 0, "id"), "ä"),
        (("nodes", 0, "op"), _DELETE),
        (("nodes", 0, "id"), _DELETE),
        (("nodes", 0, "params"), [1, 2]),
        (("nodes", 0, "position"), {"x": "left"}),
        (("nodes", 0, "colour"), "red"),  # unknown keys are refused
        (("edges", 0, "targetPort"), _DELETE),
        (("edges", 0, "source"), _DELETE),
        (("edges", 0, "target"), "a/b"),
        (("edges", 0, "sourcePort"), "p" * 65),
        (("nodes",), {"x": {}}),
        (("lesson", 0, "run"), "sideways"),
        (("lesson", 0, "predict"), {"what": "grad"}),  # names neither an edge nor a node
        (("lesson", 0, "predict"), {"edge": "e3", "node": "a"}),  # names both
        (("lesson", 0, "predict"), {"edge": "e3", "what": "gradient"}),
        (("lesson", 0, "predict"), {"edge": "has space"}),
        (("lesson", 0, "predict"), {"node": "a", "prompt": "?" * 301}),
        (("lesson", 0, "predict"), {"node": "a", "answer": 1}),
        (("extra",), 1),
    ],
)
def test_malformed_documents_are_refused(path, value):
    with pytest.raises(ValidationError):
        parse(_with(path, value))
    with pytest.raises(ValidationError):
        parse(json.dumps(_with(path, value)))


def test_not_json_is_refused():
    with pytest.raises(ValidationError):
        parse("{nodes: []")
    with pytest.raises(ValidationError):
        GraphDocument.model_validate([1, 2])


def test_node_lookup():
    d = parse(EXAMPLE)
    assert d.node("p").params == {"scalar": 2.0}
    with pytest.raises(KeyError):
        d.node("zz")


PREDICT_STEP = {
    "text": "What gradient does the square send back to a?",
    "select": ["a"],
    "run": "backward",
    "predict": {"edge": "e3", "what": "grad", "prompt": "the gradient on a -> p"},
}


def test_a_lesson_step_may_ask_the_room():
    doc = json.loads(json.dumps(EXAMPLE))
    doc["lesson"].append(PREDICT_STEP)
    d = parse(doc)
    ask = d.lesson[1].predict
    assert (ask.edge, ask.node, ask.what) == ("e3", None, "grad")
    assert ask.prompt == PREDICT_STEP["predict"]["prompt"]
    # the predict key comes back as it was sent, and a step without one stays without it
    assert json.loads(d.model_dump_json(exclude_unset=True)) == doc
    assert d.lesson[0].predict is None
    # a node's value; `what` defaults to the gradient, the prompt to none
    node = parse(_with(("lesson", 0, "predict"), {"node": "p", "what": "value"})).lesson[0]
    assert (node.predict.node, node.predict.what) == ("p", "value")
    bare = parse(_with(("lesson", 0, "predict"), {"node": "x"})).lesson[0].predict
    assert (bare.what, bare.prompt) == ("grad", "")
    # null is no question, as an absent key is
    assert parse(_with(("lesson", 0, "predict"), None)).lesson[0].predict is None


def test_a_predict_step_needs_no_new_version():
    # an optional key on a lesson step, as `options` is: a version 1 document may carry it,
    # and every document without it reads exactly as before
    doc = _with(("lesson", 0, "predict"), {"node": "x"})
    assert parse(doc).version == 1
    assert parse({**doc, "version": 2}).lesson[0].predict.node == "x"
    plain = json.loads(parse(EXAMPLE).model_dump_json(exclude_unset=True))
    assert "predict" not in plain["lesson"][0]


def test_predict_names_ids_that_need_not_exist():
    # a lesson outlives edits: an edge deleted since is no reason to refuse the document (the
    # page asks nothing at that step); the templates' own predict steps are checked to resolve
    # (tests/graph/test_templates.py)
    d = parse(_with(("lesson", 0, "predict"), {"edge": "gone"}))
    assert d.lesson[0].predict.edge == "gone"


def test_schema_describes_predict():
    s = json_schema()
    step = s["$defs"]["LessonStep"]["properties"]["predict"]
    assert {"$ref": "#/$defs/LessonPredict"} in step["anyOf"]
    predict = s["$defs"]["LessonPredict"]
    assert predict["additionalProperties"] is False
    assert predict["properties"]["what"]["enum"] == ["value", "grad"]
    assert predict["properties"]["prompt"]["maxLength"] == 300
