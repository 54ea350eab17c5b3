"""Plans and validation keep what they learnt of a document for the next document of its
structure, and reuse it for every node whose params are unchanged. "Unchanged" must mean the
same JSON value: Python's == says 1 == 1.0 == True and 0.0 == -0.0, and either slip would
hand one document what was worked out for another (a review found both, through the server:
a -0.0 computed as the 0.0 another client had run, and `dim: 1.0` accepted because `dim: 1`
had been validated)."""

import numpy as np
import pytest
from _docs import doc, edge, node, tensor
from test_revalidate import from_nothing

from backend.graph import ForwardCache, edit_nodes, run_records, validate
from backend.graph.document.snapshot import Snapshot, params_keys


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
