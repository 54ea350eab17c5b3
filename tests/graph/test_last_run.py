"""A forward run through the cache that starts from the cache's last run of the same graph
(docs/graph-format.md, "The forward cache"): only the nodes an edit reaches are looked at,
the others keep the last run's values and summaries. Every such run must say exactly what a
run without a cache says, edit after edit."""

import json

import numpy as np
import pytest
from _docs import doc, edge, node, tensor

from backend.graph import ForwardCache, parse, run, run_records
from backend.graph.running import recorder
from backend.graph.running.executor import _LastRun
from backend.graph.running.records import expand_records
from backend.server import fastjson

UNARY = ("tanh", "sigmoid", "sin", "relu")
BINARY = ("add", "sub", "mul", "maximum")


def dag(n=120, seed=0, b_value=(0.0, 0.1, 0.2, 0.3), scalar=0.5):
    """Leaves, a chain whose binary nodes also take a random earlier node (many nodes feed two
    or more), a leaf `b` that feeds only the last three nodes, a `mul` by a scalar param in the
    middle (`half`), and a sum; the bench graph's shape, smaller."""
    rng = np.random.default_rng(seed)
    nodes = [
        tensor("w0", [2, 4], init="randn", seed=0, requires_grad=True),
        tensor("w1", [2, 4], init="randn", seed=1),
        tensor("row", [1, 4], init="randn", seed=2, requires_grad=True),
    ]
    edges, ids, prev = [], ["w0", "w1", "row"], "w0"
    for i in range(n):
        nid = f"n{i}"
        if i == n // 2:
            nodes.append(node(nid, "mul", scalar=scalar))
            edges.append(edge(f"e{len(edges)}", prev, nid))
        elif rng.random() < 0.5:
            nodes.append(node(nid, UNARY[int(rng.integers(len(UNARY)))]))
            edges.append(edge(f"e{len(edges)}", prev, nid))
        else:
            nodes.append(node(nid, BINARY[int(rng.integers(len(BINARY)))]))
            other = ids[-1 - int(rng.integers(min(len(ids), 12)))]
            edges.append(edge(f"e{len(edges)}", prev, nid))
            edges.append(edge(f"e{len(edges)}", other, nid, "other"))
        ids.append(nid)
        prev = nid
    nodes.append(tensor("b", value=list(b_value), requires_grad=True))
    for nid, op in (("t0", "add"), ("t1", "mul"), ("t2", "sub")):
        nodes.append(node(nid, op))
        edges.append(edge(f"e{len(edges)}", prev, nid))
        edges.append(edge(f"e{len(edges)}", "b", nid, "other"))
        prev = nid
    nodes.append(node("loss", "sum"))
    edges.append(edge(f"e{len(edges)}", prev, "loss"))
    return doc(nodes, edges, target="loss")


def values_of(records):
    return {r["node"]: r for r in records if r["kind"] == "value"}


def plain(x):
    """As the page gets it (previews are numpy arrays until then)."""
    return json.loads(fastjson.dumps(x))


def assert_same_as_without_a_cache(d, res, records):
    """Values, summaries and the other records as a run without a cache gives them."""
    ref, ref_records = run_records(d)
    assert res.status == ref.status == "ok"
    assert list(res.values) == list(ref.values)  # every node, in compute order
    for nid, t in ref.values.items():
        np.testing.assert_array_equal(res.values[nid].detach().numpy(), t.detach().numpy())
    got, want = values_of(records), values_of(ref_records)
    assert got.keys() == want.keys()
    for nid in want:
        assert plain(got[nid]["summary"]) == plain(want[nid]["summary"]), nid
    others = [r for r in records if r["kind"] != "value"]
    assert plain(others) == plain([r for r in ref_records if r["kind"] != "value"])


def test_an_edit_recomputes_its_descendants_and_reads_the_rest_from_the_last_run():
    cache = ForwardCache()
    assert run(dag(), cache=cache).status == "ok"
    assert (cache.hits, cache.misses) == (0, 128)

    edited = dag(b_value=(1.0, -1.0, 2.0, 5.0))
    raw = []
    res = run(edited, emit=raw.append, cache=cache)
    records = expand_records(raw)
    assert_same_as_without_a_cache(edited, res, records)
    # b and the three nodes it feeds, then the sum: looked at; the other 123 from the last run
    assert (cache.hits, cache.misses) == (123, 133)
    fresh = [r["node"] for r in records if r["kind"] == "value" and not r.get("cached")]
    assert fresh == ["b", "t0", "t1", "t2", "loss"]  # in compute order
    # the unchanged ones first, as one packed record, after the tables of their rows
    packs = [r for r in raw if r["kind"] == "values"]
    assert packs[0]["cached"] is True and len(packs[0]["nodes"]) == 123
    assert all(r["kind"] == "summaries" for r in raw[: raw.index(packs[0])])
    # the same document again: everything from the last run, in one record
    raw = []
    res = run(edited, emit=raw.append, cache=cache)
    assert [r["kind"] for r in raw if r["kind"] != "summaries"] == ["values", "autograd"]
    assert_same_as_without_a_cache(edited, res, expand_records(raw))
    assert (cache.hits, cache.misses) == (251, 133)


def test_many_edits_in_a_row_stay_right(monkeypatch):
    """Each run starts from the one before it and sends the unchanged values' rows again from
    the tables that run sent them in: a last run keeps one table per shape and dtype and its
    dirty nodes' tables, however many edits came before."""
    # batches end on the clock too; on a loaded machine that splits them at random places
    # (more tables than the count below): here only a full batch ends one
    monkeypatch.setattr(recorder, "FLUSH_SECONDS", 3600.0)
    cache = ForwardCache()
    rng = np.random.default_rng(1)
    most = 0
    for k in range(40):
        if k > 20 and k % 7 == 3:  # now and then a param in the middle: half the chain
            d = dag(scalar=float(rng.normal()))
        else:
            d = dag(b_value=rng.normal(size=4).tolist())
        res, records = run_records(d, cache=cache)
        assert_same_as_without_a_cache(d, res, records)
        last = next(iter(cache._last.values()))
        assert last.resolve()
        most = max(most, len(last.tables))
    # a table per shape of the cached values ([2, 4] and [1, 4]) and the dirty ones' ([2, 4],
    # [4] and [], the first in two tables when a flush's batch ends among them): never more
    assert most <= 6


def test_summaries_of_the_last_run_survive_json():
    cache = ForwardCache()
    run(dag(), cache=cache)
    raw = []
    run(dag(b_value=(3.0, 2.0, 1.0, 0.0)), emit=raw.append, cache=cache)
    assert expand_records(plain(raw)) == plain(expand_records(raw))


def test_an_edit_that_reaches_most_of_the_graph_looks_each_node_up():
    cache = ForwardCache()
    run(dag(), cache=cache)
    nodes = [n.model_dump() for n in dag().nodes]
    nodes[0]["params"]["seed"] = 7  # w0: the chain starts there
    d = parse({"nodes": nodes, "edges": [e.model_dump() for e in dag().edges], "target": "loss"})
    res, records = run_records(d, cache=cache)
    assert_same_as_without_a_cache(d, res, records)
    # node by node: the nodes w0 does not reach are hits, one at a time
    assert cache.hits > 0
    assert all(r["kind"] != "values" for r in records)


def test_ops_changed_in_place_are_another_graph():
    cache = ForwardCache()
    d = dag()
    run(d, cache=cache)
    k = next(i for i, n in enumerate(d.nodes) if n.op == "tanh")
    d.nodes[k].op = "sin"  # the same ids and edges: only the op tells
    res, records = run_records(d, cache=cache)
    assert_same_as_without_a_cache(d, res, records)
    d.nodes[-5].params["value"][0] = 9.0  # b, edited inside its list
    res, records = run_records(d, cache=cache)
    assert_same_as_without_a_cache(d, res, records)
    assert res.values["b"].detach().numpy()[0] == 9.0


def test_a_last_run_whose_summaries_never_went_out_is_dropped():
    cache = ForwardCache()
    d = dag()
    run(d, cache=cache)
    plan_key = next(iter(cache._last))
    last = cache._last[plan_key]
    broken = _LastRun(last.keys, last.sigs, last.values, last.entries, last.metas, [], 0)
    broken.unresolved = [(0, [None, None, None])]  # an entry never summarised
    cache._last[plan_key] = broken
    res, records = run_records(d, cache=cache)
    assert_same_as_without_a_cache(d, res, records)
    assert all(r["kind"] != "values" for r in records)  # looked up node by node
    assert cache._last[plan_key] is not broken  # and that run is the last one now


@pytest.mark.parametrize("mode", ["forward", "backward"])
def test_packed_records_stand_for_the_records(mode):
    raw = []
    res = run(dag(), mode, emit=raw.append)
    records = expand_records(raw)
    kinds = {r["kind"] for r in raw}
    # values and gradients only ever travel packed
    assert not kinds & {"value", "node_grad", "edge_grad"}
    assert "values" in kinds and ("grads" in kinds) == (mode == "backward")
    for r in raw:
        if r["kind"] in ("values", "grads"):
            keys = r["nodes"] if r["kind"] == "values" else r["items"]
            assert len(keys) == len(r["summary"]) > 0
    assert len(values_of(records)) == len(res.values)
    if mode == "backward":
        edge_grads = [r for r in records if r["kind"] == "edge_grad"]
        assert {r["edge"] for r in edge_grads} == set(res.edge_grads)
        d = dag()
        ends = {e.id: (e.source, e.target) for e in d.edges}
        assert all((r["source"], r["target"]) == ends[r["edge"]] for r in edge_grads)


def test_runs_in_threads_share_a_cache():
    """A client's new run may start while its last one is still sending (the server cancels
    the old run, which then stops): runs through one cache in several threads each get their
    own document's values."""
    import threading

    cache = ForwardCache()
    run(dag(), cache=cache)
    values = [(float(k), -1.0, 0.5, 2.0) for k in range(12)]
    want = {v: run(dag(b_value=v)).values["loss"].item() for v in values}
    got, errors = {}, []

    def worker(vs):
        try:
            for v in vs:
                res = run(dag(b_value=v), cache=cache)
                got[v] = (res.status, res.values["loss"].item())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(values[k::3],)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == {v: ("ok", want[v]) for v in values}
