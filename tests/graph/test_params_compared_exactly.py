"""Plans and validation keep what they learnt of a document for the next document of its
structure, and reuse it for every node whose params are unchanged. "Unchanged" must mean the
same JSON value: Python's == says 1 == 1.0 == True and 0.0 == -0.0, and either slip would
hand one document what was worked out for another (a review found both, through the server:
a -0.0 computed as the 0.0 another client had run, and `dim: 1.0` accepted because `dim: 1`
had been validated)."""

import marshal

import numpy as np
import pytest
from _docs import doc, edge, node, tensor
from test_revalidate import from_nothing

from backend.graph import ForwardCache, edit_nodes, run_records, validate
from backend.graph.document.snapshot import _CHUNK as CHUNK
from backend.graph.document.snapshot import Snapshot, params_blobs, params_keys
from backend.graph.document.templates import list_templates, load_template


def reciprocal_of(x):
    return doc([tensor("x", value=x), node("r", "reciprocal")], [edge("e", "x", "r")])


@pytest.mark.parametrize("first,second", [(0.0, -0.0), (-0.0, 0.0)])
def test_a_zero_of_the_other_sign_is_a_new_value(first, second):
    run_records(reciprocal_of(first))
    res, records = run_records(reciprocal_of(second))
    assert np.signbit(res.values["x"].item()) == np.signbit(second)
    assert res.values["r"].item() == np.copysign(np.inf, second)
    r = next(rec for rec in records if rec.get("node") == "r")
    assert r["summary"]["preview"] == ("-inf" if np.signbit(second) else "inf")


def test_a_zero_of_the_other_sign_sent_as_an_edit():
    base = reciprocal_of(0.0)
    run_records(base)
    res, _ = run_records(edit_nodes(base, [tensor("x", value=-0.0)]))
    assert res.values["r"].item() == -np.inf


def summed(**params):
    return doc([tensor("x", value=[[1.0, 2.0]]), node("s", "sum", **params)], [edge("e", "x", "s")])


@pytest.mark.parametrize(
    "good,bad",
    [({"dim": 1}, {"dim": 1.0}), ({"dim": 1}, {"dim": True}), ({"keepdim": True}, {"keepdim": 1})],
)
def test_a_param_equal_by_python_but_of_another_type_is_validated_again(good, bad):
    refused = from_nothing(summed(**bad))
    assert refused, f"{bad} should be refused"
    assert validate(summed(**good)) == []  # remembered now
    again = validate(summed(**bad))
    assert [p.to_dict() for p in again] == [p.to_dict() for p in refused]


def test_params_keys_tell_types_and_signs_apart_and_nothing_else():
    keys = params_keys([{"a": 1}, {"a": 1.0}, {"a": True}, {"a": 0.0}, {"a": -0.0}])
    assert len(set(keys)) == 5
    # the same value made twice (other objects, strings interned or not) has one key
    one = {"init": "randn", "shape": [2, 3], "v": [0.5, -1.0], "s": None}
    other = {"init": "".join(["ran", "dn"]), "shape": [2, 3], "v": [0.5, -1.0], "s": None}
    assert params_keys([one]) == params_keys([other])


def test_params_marshal_cannot_write_always_count_as_edited():
    d = summed()
    snap = Snapshot(d)
    d.nodes[1].params["dim"] = object()  # a Python caller's object, not JSON
    assert snap.edited(d) == [1]
    assert Snapshot(d).edited(d) == [1]  # not even equal to itself: compared afresh each time


def test_the_forward_cache_tells_the_zeros_apart_too():
    cache = ForwardCache()
    run_records(reciprocal_of(0.0), cache=cache)
    res, _ = run_records(reciprocal_of(-0.0), cache=cache)
    assert res.values["r"].item() == -np.inf


def chunks_written(d):
    params = [n.params for n in d.nodes]
    return [marshal.dumps(params[a : a + CHUNK], 2) for a in range(0, len(params), CHUNK)]


@pytest.mark.parametrize("template", [t["id"] for t in list_templates()])
def test_params_a_chunk_at_a_time_are_what_marshal_writes_for_them(template):
    # a document with no node edited is recognised by one comparison per chunk of params; the
    # snapshot's bytes for them must be marshal's own, before and after an edit
    d = load_template(template)
    snap = Snapshot(d)
    assert snap.params_blobs == chunks_written(d)
    assert snap.edited(d) == []
    i = next(k for k, n in enumerate(d.nodes) if n.params)
    edited = d.model_copy(deep=True)
    edited.nodes[i].params["_probe"] = -0.0
    after = snap.with_params(edited, [i])
    assert after.params_blobs == chunks_written(edited)
    assert after.edited(edited) == []
    assert after.edited(d) == [i]


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["value"][1].__setitem__(0, -0.0),  # deep inside a nested list
        lambda p: p["value"][0].__setitem__(1, 2),  # 2.0 to 2: equal by ==, another type
        lambda p: p.__setitem__("requires_grad", 1),
        lambda p: p.__setitem__("extra", None),
    ],
)
def test_params_edited_in_place_are_found_among_all(change):
    x = tensor("x", value=[[1.0, 2.0], [0.0, 4.0]], requires_grad=True)
    nodes = [x, tensor("y", value=[[1.0, 2.0], [0.0, 4.0]]), node("a", "add"), node("s", "sum")]
    edges = [edge("e1", "x", "a"), edge("e2", "y", "a", "other"), edge("e3", "a", "s")]
    d = doc(nodes, edges)
    snap = Snapshot(d)
    assert snap.params_blobs[0] is not None
    change(d.nodes[0].params)
    change(d.nodes[1].params)
    assert snap.edited(d) == [0, 1]
    assert Snapshot(d).edited(d) == []


def test_no_bytes_for_a_chunk_when_some_of_its_params_have_none():
    assert params_blobs(params_keys([{"a": 1}, {"b": object()}])) == [None]
    assert params_blobs(params_keys([{"a": 1}, {}])) == [marshal.dumps([{"a": 1}, {}], 2)]
    params = [{"i": i} for i in range(2 * CHUNK + 1)]
    params[CHUNK + 3]["x"] = object()
    blobs = params_blobs(params_keys(params))
    assert blobs[0] == marshal.dumps(params[:CHUNK], 2)
    assert blobs[1] is None
    assert blobs[2] == marshal.dumps(params[2 * CHUNK :], 2)


def test_edits_in_place_are_found_in_every_chunk():
    # one node edited in place in each of several chunks, and in a chunk that cannot be
    # written whole: all of them found, and nothing else
    nodes = [tensor(f"x{i}", value=[float(i)]) for i in range(3 * CHUNK + 5)]
    d = doc(nodes)
    d.nodes[CHUNK + 7].params["odd"] = object()
    snap = Snapshot(d)
    assert snap.params_blobs[0] is not None and snap.params_blobs[1] is None
    edited = [0, CHUNK - 1, 2 * CHUNK, 3 * CHUNK + 4]
    for i in edited:
        d.nodes[i].params["value"][0] = -0.0 if i == 0 else float(i) + 0.5
    assert snap.edited(d) == sorted(edited + [CHUNK + 7])  # no key equals that one's
