"""Summary tables (docs/protocol.md): a run sends its summaries as tables, one per shape and
dtype, and each record names its row. The rows must come before the records that name them,
be numbered across the run without gaps, survive JSON, and say exactly what a summary of the
tensor alone says, for fresh values, cache hits, non-finite values and big tensors."""

import json

import numpy as np
from _docs import doc, edge, node, tensor

import engine as eg
from backend.graph import ForwardCache, run, run_records
from backend.graph.running.records import expand_records, unpack_all
from backend.graph.running.summary import STATS, gather_rows, row_summary, summarize, summary_tables
from backend.server import fastjson


def mixed_graph(x_value=(1.0, 2.0, 3.0)):
    """Values of three shapes and two dtypes, a node with two consumers, and a scalar."""
    nodes = [
        tensor("x", value=list(x_value), requires_grad=True),
        tensor("w", [2, 3], init="randn", seed=1, requires_grad=True),
        tensor("k", value=[1, 2, 3], dtype="int64"),
    ]
    nodes += [node("h", "tanh"), node("m", "mul"), node("y", "matmul"), node("s", "sum")]
    nodes += [node("c", "gt")]
    edges = [
        edge("x-h", "x", "h"),
        edge("h-m", "h", "m"),
        edge("x-m", "x", "m", "other"),
        edge("w-y", "w", "y"),
        edge("m-y", "m", "y", "other"),
        edge("y-s", "y", "s"),
        edge("k-c", "k", "c"),
        edge("x-c", "x", "c", "other"),
    ]
    return doc(nodes, edges, target="s")


def raw_run(d, mode="backward", **kwargs):
    records = []
    res = run(d, mode, emit=records.append, **kwargs)
    assert res.status == "ok", res.error
    return res, records


def check_tables(records):
    """Tables come before the records that name their rows; rows count up from 0."""
    known, next_row = set(), 0
    for r in records:
        if r["kind"] == "summaries":
            assert r["first"] == next_row
            assert r["rows"] == len(r["requires_grad"]) == len(r["grad_fn"]) == len(r["nan"])
            assert len(r["stats"]) == r["rows"]
            assert r["numel"] == int(np.prod(r["shape"]))
            known.update(range(r["first"], r["first"] + r["rows"]))
            next_row += r["rows"]
        elif r["kind"] in ("values", "grads"):  # packed: a row per item
            assert all(isinstance(k, int) and k in known for k in r["summary"]), r
        elif "summary" in r:
            assert isinstance(r["summary"], int) and r["summary"] in known, r


def test_a_runs_tables_come_first_and_say_what_each_tensors_summary_says():
    res, records = raw_run(mixed_graph())
    check_tables(records)
    tables = [r for r in records if r["kind"] == "summaries"]
    assert {(tuple(t["shape"]), t["dtype"]) for t in tables} >= {
        ((3,), "float32"),
        ((2, 3), "float32"),
        ((3,), "int64"),
        ((3,), "bool"),
        ((2,), "float32"),
        ((), "float32"),
    }
    # one shape and dtype per table, and every record's row is its tensor's summary
    expanded = expand_records(records)
    assert all(r["kind"] != "summaries" for r in expanded)
    tensor_of = {
        "value": lambda r: res.values[r["node"]],
        "node_grad": lambda r: res.node_grads[r["node"]],
        "edge_grad": lambda r: res.edge_grads[r["edge"]],
        "leaf_grad": lambda r: res.leaf_grads[r["node"]],
    }
    checked = 0
    for r in expanded:
        if r["kind"] in tensor_of:
            alone = summarize(tensor_of[r["kind"]](r))
            assert json.loads(fastjson.dumps(r["summary"])) == json.loads(fastjson.dumps(alone))
            checked += 1
    assert checked == sum(1 for r in unpack_all(records) if isinstance(r.get("summary"), int))
    # the same through JSON, as the page reads it
    assert json.loads(fastjson.dumps(expand_records(json.loads(fastjson.dumps(records))))) == (
        json.loads(fastjson.dumps(expanded))
    )
    # run_records writes them out the same way
    _, written = run_records(mixed_graph(), "backward")
    assert [r["kind"] for r in written] == [r["kind"] for r in expanded]


def test_stats_of_a_table_are_numpys():
    rng = np.random.default_rng(0)
    ts = [eg.tensor(rng.normal(3, 2, size=(5, 7))) for _ in range(300)]  # several chunks
    tables, where = summary_tables(ts)
    assert len(tables) == 1 and where == list(range(300))
    for k, t in enumerate(ts):
        v = t.numpy().astype(np.float64)
        row = dict(zip(STATS, tables[0]["stats"][k]))
        want = [v.min(), v.max(), v.mean(), v.std(), np.linalg.norm(v)]
        np.testing.assert_allclose([row[s] for s in STATS], want, rtol=1e-12)
        np.testing.assert_array_equal(tables[0]["preview"][k], t.numpy())


def test_a_tensor_given_twice_in_a_row_is_one_row():
    a, b = eg.tensor([1.0, 2.0]), eg.tensor([3.0, 4.0])
    tables, where = summary_tables([a, a, b])
    assert tables[0]["rows"] == 2 and where == [0, 0, 1]


def test_non_finite_rows_are_spelled_out_and_the_others_stay_numbers():
    f64 = eg.float64
    ts = [
        eg.tensor([1.0, 2.0, 3.0], dtype=f64),
        eg.tensor([1.0, float("nan"), float("inf")], dtype=f64),
        eg.tensor([float("nan")] * 3, dtype=f64),
        eg.tensor([1.7e308, 1.7e308, 1.0], dtype=f64),  # finite; the norm overflows
    ]
    tables, where = summary_tables(ts)
    (table,) = tables
    text = fastjson.dumps(table)
    assert "NaN" not in text and "Infinity" not in text
    s = [row_summary(table, k) for k in range(4)]
    assert s[0]["stats"]["mean"] == 2.0 and s[0]["preview"].tolist() == [1.0, 2.0, 3.0]
    assert (s[1]["nan"], s[1]["inf"]) == (1, 1) and s[1]["stats"]["max"] == 1.0
    assert s[1]["preview"] == [1.0, "nan", "inf"]
    assert s[2]["nan"] == 3 and s[2]["stats"] is None
    assert s[3]["stats"]["norm"] == "inf" and s[3]["stats"]["max"] == 1.7e308
    for k, t in enumerate(ts):  # each row is the tensor's own summary
        assert fastjson.dumps(s[k]) == fastjson.dumps(summarize(t))


def test_rows_of_several_tables_gathered_into_one_say_what_they_said():
    """A cached run sends the rows of earlier tables of one shape again as one table: rows
    with non-finite numbers (spelled out in lists) and plain ones (numpy columns) mixed."""
    f64 = eg.float64
    nan_row = eg.tensor([1.0, float("nan")], dtype=f64)
    spelled, _ = summary_tables([nan_row, eg.tensor([2.0, 3.0], dtype=f64, requires_grad=True)])
    plain, _ = summary_tables([eg.tensor([4.0, 5.0], dtype=f64), eg.tensor([6.0, 7.0], dtype=f64)])
    assert isinstance(spelled[0]["stats"], list) and isinstance(plain[0]["stats"], np.ndarray)
    parts = [(plain[0], [1, 0]), (spelled[0], [0, 1]), (plain[0], [1])]
    table = gather_rows(parts)
    assert table["rows"] == 5 and "first" not in table
    want = [row_summary(t, k) for t, rows in parts for k in rows]
    got = [row_summary(table, k) for k in range(5)]
    assert fastjson.dumps(got) == fastjson.dumps(want)
    assert json.loads(fastjson.dumps(table))["preview"][2] == [1.0, "nan"]
    one = gather_rows([(plain[0], [1])])  # one part: its columns picked as they are
    assert isinstance(one["stats"], np.ndarray) and one["grad_fn"] == [None]


def test_big_tensors_get_stats_without_previews():
    rng = np.random.default_rng(1)
    big = [eg.tensor(rng.normal(size=5000)), eg.tensor(rng.normal(size=5000))]
    big[1]._data[7] = np.nan
    (table,), _ = summary_tables(big)
    assert table["preview"] is None
    s = row_summary(table, 0)
    assert "preview" not in s and s["numel"] == 5000
    np.testing.assert_allclose(s["stats"]["std"], big[0].numpy().std(), rtol=1e-6)
    s = row_summary(table, 1)
    assert s["nan"] == 1
    finite = np.delete(big[1].numpy(), 7)
    np.testing.assert_allclose(s["stats"]["mean"], finite.mean(), rtol=1e-6)


def test_empty_and_zero_dim_tensors():
    tables, where = summary_tables([eg.tensor([]), eg.tensor(2.5), eg.tensor(-1.0)])
    by_shape = {tuple(t["shape"]): t for t in tables}
    empty = row_summary(by_shape[(0,)], 0)
    assert empty["stats"] is None and empty["nan"] == 0 and empty["preview"].tolist() == []
    assert row_summary(by_shape[()], 1)["preview"] == -1.0
    fastjson.dumps(tables)


def test_cache_hits_send_rows_taken_from_earlier_tables():
    cache = ForwardCache()
    d = mixed_graph()
    raw_run(d, "forward", cache=cache)
    edited = mixed_graph(x_value=(1.0, 2.0, 4.0))
    res, records = raw_run(edited, "forward", cache=cache)
    check_tables(records)
    expanded = expand_records(records)
    hits = [r for r in expanded if r.get("cached")]
    assert {r["node"] for r in hits} == {"w", "k"}  # nothing else is independent of x
    fresh = {
        r["node"]: r["summary"]
        for r in expand_records(raw_run(edited, "forward")[1])
        if r["kind"] == "value"
    }
    for r in expanded:
        if r["kind"] == "value":
            assert fastjson.dumps(r["summary"]) == fastjson.dumps(fresh[r["node"]])
    # a run that is all hits: every row taken from earlier tables, the same summaries again
    again = expand_records(raw_run(edited, "forward", cache=cache)[1])
    assert all(r.get("cached") for r in again if r["kind"] == "value")
    assert [fastjson.dumps(r["summary"]) for r in again if r["kind"] == "value"] == [
        fastjson.dumps(r["summary"]) for r in expanded if r["kind"] == "value"
    ]


def test_tables_in_order_of_first_appearance_and_repeats_share_a_row():
    s0, s1 = eg.tensor(1.0), eg.tensor(2.0)  # 0-d float32
    v0 = eg.tensor([1.0, 2.0])
    v1 = eg.tanh(eg.tensor([0.5, 1.0], requires_grad=True))
    k = eg.tensor([1, 2])  # int64: same shape as v0, another table
    tables, where = summary_tables([s0, v0, s0, k, v1, s1, v0])
    assert [(t["shape"], t["dtype"], t["rows"]) for t in tables] == [
        ([], "float32", 2),
        ([2], "float32", 2),
        ([2], "int64", 1),
    ]
    assert where == [0, 2, 0, 4, 3, 1, 2] and all(type(r) is int for r in where)
    assert tables[1]["grad_fn"] == [None, "TanhBackward0"]
    assert tables[1]["requires_grad"] == [False, True]
    np.testing.assert_array_equal(tables[1]["preview"], [[1.0, 2.0], v1.detach().numpy()])
