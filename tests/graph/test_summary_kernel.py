"""summary.py's C loops (backend/graph/_tables.c) against its numpy path: on random batches of
every kind a run summarises (shapes and dtypes mixed, tensors repeated, strided views, NaN,
Inf, values whose squares overflow, empty, 0-d and big tensors), both give the same tables and
rows. The numpy path is what a machine without a C compiler runs, and what the C was written
to match."""

import numpy as np
import pytest

import engine as eg
from backend.graph.running import summary
from backend.server import fastjson


def test_the_kernel_is_built():
    # `pip install -e .` builds it (setup.py); a machine like CI's has a C compiler, and the
    # executor's speed target counts on it
    assert summary._tables is not None


def numpy_path(tensors, preview=1024, first=0):
    saved, summary._tables = summary._tables, None
    try:
        return summary.summary_tables(tensors, preview, first)
    finally:
        summary._tables = saved


def plain(table):
    """A table as JSON would carry it, its stats apart (compared with a tolerance: numpy sums
    pairwise, the C from left to right, both in float64)."""
    stats = table["stats"]
    rest = fastjson.loads(fastjson.dumps({k: v for k, v in table.items() if k != "stats"}))
    return rest, fastjson.loads(fastjson.dumps({"s": stats}))["s"]


def assert_same(got, want):
    (tables, where), (want_tables, want_where) = got, want
    assert where == want_where
    assert len(tables) == len(want_tables)
    for a, b in zip(tables, want_tables):
        rest_a, stats_a = plain(a)
        rest_b, stats_b = plain(b)
        assert rest_a == rest_b
        assert len(stats_a) == len(stats_b)
        for x, y in zip(stats_a, stats_b):
            if x is None or y is None or any(isinstance(v, str) for v in x + y):
                assert x == y
            else:
                scale = max(abs(y[0]), abs(y[1]))  # the std of numbers near 10 is good to 1e-15
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-13 * scale)


def random_tensor(rng):
    kind = rng.integers(10)
    shape = [(8, 8), (1, 8), (8, 1), (3,), (), (2, 3, 4)][rng.integers(6)]
    if kind == 0:
        return eg.tensor(rng.integers(-5, 5, size=shape), dtype=eg.int64)
    if kind == 1:
        return eg.tensor(rng.random(size=shape) > 0.5)
    dtype = np.float32 if rng.random() < 0.7 else np.float64
    a = rng.normal(rng.normal() * 10, 3, size=shape).astype(dtype)
    if kind == 2 and a.size:  # NaN and Inf here and there, sometimes a whole row of them
        a.reshape(-1)[rng.integers(a.size, size=2)] = [np.nan, np.inf][rng.integers(2)]
        if rng.random() < 0.3:
            a[...] = np.nan
    if kind == 3 and dtype == np.float64 and a.size:
        a.reshape(-1)[0] = 1.5e308  # finite, but its square is not
    t = eg.tensor(a, requires_grad=bool(rng.integers(2)) and a.dtype.kind == "f")
    if kind == 4 and a.ndim == 2:  # a strided view: the transpose, or a broadcast row
        t._data = a.T if a.shape[0] == a.shape[1] else np.broadcast_to(a[:1], a.shape)
    if kind == 5 and t.requires_grad:
        t = t * 2.0  # a grad_fn
    return t


@pytest.mark.parametrize("seed", range(20))
def test_random_batches_give_what_the_numpy_path_gives(seed):
    rng = np.random.default_rng(seed)
    made = [random_tensor(rng) for _ in range(int(rng.integers(1, 300)))]
    batch = [made[int(rng.integers(len(made)))] if rng.random() < 0.3 else t for t in made]
    # items without a tensor (a run's records that carry none) have no row
    batch = [None if rng.random() < 0.1 else t for t in batch]
    preview = int(rng.choice([1024, 8, 0]))
    first = int(rng.choice([0, 1, 5000]))  # a run's later batch numbers its rows on
    got = summary.summary_tables(batch, preview, first)
    assert_same(got, numpy_path(batch, preview, first))
    rows = [r for r, t in zip(got[1], batch) if t is not None]
    assert [r for r, t in zip(got[1], batch) if t is None] == [None] * sum(t is None for t in batch)
    if rows:
        assert min(rows) == first and max(rows) == first + sum(t["rows"] for t in got[0]) - 1


def test_big_empty_zero_dim_and_swapped_tensors_too():
    rng = np.random.default_rng(7)
    big = eg.tensor(rng.normal(size=5000))
    swapped = eg.tensor([1.0, 2.0, 3.0], dtype=eg.float64)
    swapped._data = swapped._data.astype(">f8")  # not native byte order: the numpy path's
    batch = [big, eg.tensor([]), eg.tensor(2.5), swapped, big, eg.tensor([4.0, 5.0, 6.0])]
    got = summary.summary_tables(batch)
    assert_same(got, numpy_path(batch))
    assert got[1] == [0, 1, 2, 3, 0, 4]
    assert summary.summary_tables(batch, 1024, 7)[1] == [7, 8, 9, 10, 7, 11]


def test_equal_dtypes_in_other_objects_share_a_table():
    a = eg.tensor([1.0, 2.0])
    b = eg.tensor([3.0, 4.0])
    b._data = b._data.view(np.dtype("float32", metadata={"other": "object"}))
    (table,), where = summary.summary_tables([a, b])
    assert table["rows"] == 2 and where == [0, 1]


def test_a_table_keeps_its_values_when_the_tensor_changes_later():
    # a leaf's .grad is changed in place by a later backward: the table holds a copy
    g = eg.tensor([1.0, 2.0, 3.0])
    (table,), _ = summary.summary_tables([g])
    g._data += 10
    assert table["preview"][0].tolist() == [1.0, 2.0, 3.0]
    assert table["stats"][0].tolist()[:3] == [1.0, 3.0, 2.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_taken_four_at_a_time_get_what_each_row_gets_alone(dtype):
    # _tables.stats takes the stats of four rows at once: each row's sums in its own order,
    # so every row must get the very bits it gets in a table of its own, wherever it sits
    # (rows of one value, -0.0 beside 0.0, NaN and Inf, an offset of 1e8, overflowing squares)
    rng = np.random.default_rng(7)
    rows = [rng.standard_normal(64) for _ in range(6)]
    rows += [np.full(64, 0.3), np.where(np.arange(64) % 2, -0.0, 0.0), rng.standard_normal(64)]
    rows[2][5], rows[4][9] = np.nan, -np.inf
    rows += [rng.standard_normal(64) + 1e8, np.full(64, np.finfo(dtype).max / 2), np.ones(64)]
    arrays = [r.astype(dtype) for r in rows]

    def stats(arrays):
        values, out = np.empty((len(arrays), 64), dtype), np.full((len(arrays), 5), 7.0)
        again = summary._tables.stats(list(arrays), np.ascontiguousarray, values, out)
        return again, out

    again, out = stats(arrays)
    for k, a in enumerate(arrays):
        alone_again, alone = stats([a])
        assert (k in again) == (alone_again == [0]), k
        assert out[k].tobytes() == alone[0].tobytes(), k
