"""Documents made by edit_nodes (snapshot.py): an earlier document with some nodes replaced,
sharing its other nodes and edges. Plans, validation and the forward cache recognise it by
identity, comparing only the replaced nodes; every run and every validation of it must say
what the same document, parsed whole, says."""

import numpy as np
import pytest
from pydantic import ValidationError
from test_last_run import assert_same_as_without_a_cache, dag
from test_revalidate import from_nothing, graph

from backend.graph import EditError, ForwardCache, edit_nodes, run, run_records, validate
from backend.graph.document.snapshot import Snapshot
from backend.graph.running.executor import plan_for


def b_node(d, value):
    n = d.node("b").model_dump()
    n["params"]["value"] = list(value)
    return n


def test_an_edit_shares_every_other_node_and_edge():
    d = dag()
    e = edit_nodes(d, [b_node(d, (1.0, 2.0, 3.0, 4.0))])
    k = next(i for i, n in enumerate(d.nodes) if n.id == "b")
    assert e.nodes[k] is not d.nodes[k] and e.nodes[k].params["value"] == [1.0, 2.0, 3.0, 4.0]
    assert all(a is b for i, (a, b) in enumerate(zip(e.nodes, d.nodes)) if i != k)
    assert e.edges is d.edges or all(a is b for a, b in zip(e.edges, d.edges))
    assert d.node("b").params["value"] == [0.0, 0.1, 0.2, 0.3]  # the base is left alone
    assert e.model_dump() == dag(b_value=(1.0, 2.0, 3.0, 4.0)).model_dump()


def test_a_snapshot_finds_the_edited_nodes_by_identity_as_it_does_by_content():
    d = dag()
    snap = Snapshot(d)
    rng = np.random.default_rng(3)
    for _ in range(20):
        value = rng.normal(size=4).tolist()
        scalar = float(rng.normal())
        edits = [b_node(d, value)]
        half = d.nodes[3 + 60].model_dump()  # the `mul` by a scalar in the chain's middle
        half["params"]["scalar"] = scalar
        edits.append(half)
        moved = d.nodes[10].model_dump()  # moved on the canvas: not a change for a run
        moved["position"] = {"x": 5.0, "y": 7.0}
        edits.append(moved)
        by_identity = snap.edited(edit_nodes(d, edits))
        by_content = snap.edited(dag(b_value=value, scalar=scalar))
        assert by_identity == by_content == sorted([63, len(d.nodes) - 5])


def test_an_edit_back_to_the_same_params_changes_nothing():
    d = dag()
    same = edit_nodes(d, [b_node(d, (0.0, 0.1, 0.2, 0.3))])
    assert Snapshot(d).edited(same) == []
    later = edit_nodes(d, [b_node(d, (9.0, 9.0, 9.0, 9.0)), b_node(d, (0.0, 0.1, 0.2, 0.3))])
    assert Snapshot(d).edited(later) == []  # the last item for a node wins


def test_edits_in_a_row_run_as_the_whole_documents_do():
    """Each edit made from the last run's document, as the server makes them, and now and
    then from an older one (a page whose base run is not the latest)."""
    cache = ForwardCache()
    rng = np.random.default_rng(0)
    d = dag()
    run(d, cache=cache)
    docs = [d]
    for k in range(12):
        base = docs[-3] if k % 5 == 4 and len(docs) > 2 else docs[-1]
        e = edit_nodes(base, [b_node(base, rng.normal(size=4).tolist())])
        res, records = run_records(e, cache=cache)
        assert_same_as_without_a_cache(e, res, records)
        docs.append(e)


def test_an_edit_recomputes_only_what_depends_on_it():
    cache = ForwardCache()
    d = dag()
    run(d, cache=cache)
    h0, m0 = cache.hits, cache.misses
    e = edit_nodes(d, [b_node(d, (1.0, -1.0, 2.0, 5.0))])
    res, records = run_records(e, cache=cache)
    fresh = [r["node"] for r in records if r["kind"] == "value" and not r.get("cached")]
    assert fresh == ["b", "t0", "t1", "t2", "loss"]
    assert (cache.hits - h0, cache.misses - m0) == (123, 5)
    assert_same_as_without_a_cache(e, res, records)


def test_copies_with_other_nodes_are_compared_by_content():
    """A copy of an edited document with other nodes (model_copy, or its list changed) is not
    what edit_nodes made: whatever it shares is trusted, the rest compared."""
    cache = ForwardCache()
    d = dag()
    run(d, cache=cache)
    e = edit_nodes(d, [b_node(d, (1.0, 1.0, 1.0, 1.0))])
    run(e, cache=cache)
    other = dag(b_value=(2.0, 2.0, 2.0, 2.0), scalar=-3.0)
    copy = e.model_copy(update={"nodes": other.nodes})  # the flag comes along
    res, records = run_records(copy, cache=cache)
    assert_same_as_without_a_cache(copy, res, records)
    assert res.values["b"].detach().numpy().tolist() == [2.0, 2.0, 2.0, 2.0]
    e2 = edit_nodes(e, [b_node(e, (4.0, 4.0, 4.0, 4.0))])
    e2.nodes[63] = other.nodes[63]  # the scalar -3: replaced in its list afterwards
    res, records = run_records(e2, cache=cache)
    assert_same_as_without_a_cache(e2, res, records)


def test_a_structure_change_is_another_graph():
    cache = ForwardCache()
    d = dag()
    run(d, cache=cache)
    e = edit_nodes(d, [b_node(d, (1.0, 1.0, 1.0, 1.0))])
    e.edges.pop()
    e.nodes.pop()
    e.target = "t2"
    assert plan_for(e).key != plan_for(dag()).key
    res, records = run_records(e, cache=cache)
    assert res.status == "ok" and "loss" not in res.values
    assert_same_as_without_a_cache(e, res, records)


def test_an_edit_names_nodes_of_the_graph_and_keeps_their_ops():
    d = dag()
    with pytest.raises(EditError, match="node 'nope' is not in the graph being edited"):
        edit_nodes(d, [{"id": "nope", "op": "tanh"}])
    with pytest.raises(EditError, match="node 'b' is a 'tensor' node .* cannot make it 'sin'"):
        edit_nodes(d, [{"id": "b", "op": "sin"}])
    with pytest.raises(ValidationError):
        edit_nodes(d, [{"id": "b", "op": "tensor", "params": [1, 2]}])
    with pytest.raises(ValidationError):
        edit_nodes(d, [{"id": "b", "op": "tensor", "colour": "red"}])


def test_an_edit_finds_its_node_after_the_base_was_reordered_in_place():
    """edit_nodes keeps where each id is (handed on from edit to edit); a node list changed in
    place since is noticed, never edited at the wrong place."""
    d = dag()
    e = edit_nodes(d, [b_node(d, (1.0, 1.0, 1.0, 1.0))])  # d now knows where its ids are
    d.nodes.reverse()
    e2 = edit_nodes(d, [b_node(d, (2.0, 2.0, 2.0, 2.0))])
    assert e2.node("b").params["value"] == [2.0, 2.0, 2.0, 2.0]
    assert [n.id for n in e2.nodes] == [n.id for n in d.nodes]
    assert sum(n.id == "b" for n in e2.nodes) == 1
    d.nodes.pop()  # and a node gone: its id no longer names one
    gone = e.nodes[0].id
    with pytest.raises(EditError, match=f"node '{gone}' is not in the graph being edited"):
        edit_nodes(d, [e.nodes[0].model_dump()])
    # an edit of an edit: the same places, nothing looked up again
    e3 = edit_nodes(e, [b_node(e, (3.0, 3.0, 3.0, 3.0))])
    assert e3._positions is e._positions
    assert e3.node("b").params["value"] == [3.0, 3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"id": "x", "params": {"value": [[1.0, 2.0], [3.0, 4.0]], "requires_grad": True}},
            "mat1 and mat2 shapes cannot be multiplied (2x2 and 3x4)",
        ),
        ({"id": "half", "params": {"scalar": "two"}}, "scalar"),
        ({"id": "half", "params": {"scalar": 3.0, "colour": 1}}, "unknown param 'colour'"),
        ({"id": "x", "params": {"value": [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]}}, None),
    ],
)
def test_validating_an_edit_says_what_validating_it_whole_says(change, words):
    d = graph(n_tail=0)  # x (2x3) @ w (3x4), tanh, `half` (mul by a scalar), sum
    assert validate(d) == []
    item = {**d.node(change["id"]).model_dump(), "params": change["params"]}
    e = edit_nodes(d, [item])
    got = [p.to_dict() for p in validate(e)]
    assert got == [p.to_dict() for p in from_nothing(e)]
    if words is None:
        assert got == []
    else:
        assert any(words in p["message"] for p in got), got


def test_an_edited_document_is_not_compared_whole(monkeypatch):
    """What makes an edit cheap: neither the plan nor validation reads the shared nodes."""
    d = dag()
    cache = ForwardCache()
    assert validate(d) == []
    run(d, cache=cache)
    compared = []
    real = Snapshot._edited_by_content

    def by_content(self, nodes, edges):
        compared.append(len(nodes))
        return real(self, nodes, edges)

    monkeypatch.setattr(Snapshot, "_edited_by_content", by_content)
    e = edit_nodes(d, [b_node(d, (1.0, 2.0, 3.0, 4.0))])
    assert validate(e) == []
    res, records = run_records(e, cache=cache, validated=True)
    assert compared == []
    run_records(dag(b_value=(1.0, 2.0, 3.0, 5.0)), cache=cache)  # whole: compared
    assert compared
    assert_same_as_without_a_cache(e, res, records)


def test_an_edit_of_another_document_of_the_structure_is_compared_whole():
    """Two clients on one template: each one's edit is made from its own document, while the
    plan's snapshot is the other's. Right either way; compared all together."""
    cache = ForwardCache()
    mine, theirs = dag(), dag()
    run(mine, cache=cache)
    run(theirs, cache=cache)  # the plan's snapshot now holds `theirs`' objects
    e = edit_nodes(mine, [b_node(mine, (3.0, 3.0, 3.0, 3.0))])
    assert plan_for(theirs).snapshot.edited(e) == [len(mine.nodes) - 5]
    res, records = run_records(e, cache=cache)
    assert_same_as_without_a_cache(e, res, records)
