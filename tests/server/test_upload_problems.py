"""A refused document's structure errors also come as a list, one line each with where it is
(`nodes[0].op: field required`): the editor's upload shows them as a list (files.ts)."""

import requests


def test_structure_errors_come_as_a_list_of_lines(server):
    body = {"nodes": [{"id": "a"}], "edges": "x", "surprise": 1}
    r = requests.post(server.api("/validate"), json=body)
    assert r.status_code == 400
    problems = r.json()["problems"]
    assert "nodes[0].op: field required" in problems
    assert "edges: input should be a valid list" in problems
    assert "surprise: extra inputs are not permitted" in problems
    assert not any("pydantic" in p for p in problems)


def test_a_document_that_is_not_an_object_is_one_line(server):
    r = requests.post(server.api("/validate"), json=[1, 2])
    assert r.status_code == 400
    assert r.json()["problems"] == ["the document: input should be a valid dictionary"]


def test_many_errors_are_capped_with_a_count(server):
    body = {"nodes": [{"id": f"n{i}"} for i in range(30)], "edges": []}
    problems = requests.post(server.api("/validate"), json=body).json()["problems"]
    assert len(problems) == 21 and problems[-1] == "and 10 more"
